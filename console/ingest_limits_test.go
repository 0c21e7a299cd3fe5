package console_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/console"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/tracing"
)

// keyOf is a key of n bytes starting with tag.
func keyOf(tag string, n int) []byte {
	return append([]byte(tag), bytes.Repeat([]byte{'x'}, n-len(tag))...)
}

// typed is msgs as a typed record file of their type holds them, as a run writes it.
func typed(t testing.TB, msgs ...proto.Message) []byte {
	t.Helper()
	return append(records.Header(msgs[0].ProtoReflect().Descriptor().FullName()), frames(t, msgs...)...)
}

// deadLetterOf is a model_error dead letter of key carrying its envelope, as a run writes it.
func deadLetterOf(key []byte, at int64) *pb.ActivationErrorRecord {
	env := &pb.AgentEnvelope{EntityKey: key, EventTimeMs: at, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("where is my order?")}}
	return records.WithEnvelope(records.DeadLetter(key, at, "model_error", fmt.Sprintf("provider unavailable (a key of %d bytes)", len(key))), env)
}

func appendFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// serveStore serves the console's real handler over st.
func serveStore(t *testing.T, st *console.Store) string {
	t.Helper()
	h, err := console.New(console.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// get returns a page the console answers 200.
func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %.100s: %d %v\n%.2000s", url, resp.StatusCode, err, b)
	}
	return string(b)
}

// shown is how a page shows a printable key: its first 256 bytes and its length.
func shown(key []byte) string {
	return fmt.Sprintf("%s… (%d bytes)", key[:256], len(key))
}

// longestPath is the longest entity page path: a long key is named by its stored form.
var longestPath = len("/entities/") + base64.RawURLEncoding.EncodedLen(console.MaxKeyBytes+1)

// Dead letters whose entity keys are 40,000 bytes and 1 MiB are listed on the dead letters
// page and on their entity pages; the records after them in their file are ingested, and a
// console restarted while the file is still being written resumes past them.
func TestLongEntityKeysIngestedShownAndResumed(t *testing.T) {
	keys := []struct {
		name string
		key  []byte
	}{
		{"40,000 bytes", keyOf("forty-thousand-", 40_000)},
		{"1 MiB", keyOf("one-mebibyte-", 1<<20)},
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "dead_letters.binpb")
	var msgs []proto.Message
	for i, k := range keys {
		msgs = append(msgs, deadLetterOf(k.key, T0+int64(i)*1000))
	}
	msgs = append(msgs, deadLetterOf([]byte("after-1"), T0+5000))
	being := frames(t, deadLetterOf([]byte("after-2"), T0+6000))
	appendFile(t, file, append(typed(t, msgs...), being[:len(being)-3]...)) // the last record is still being written

	db := filepath.Join(t.TempDir(), "console.db")
	st := openStore(t, db)
	if n := scan(t, st, dir); n != 3 {
		t.Fatalf("added %d records, want the two long keys' and the one after them", n)
	}
	base := serveStore(t, st)
	deadPage := get(t, base+"/dead_letters")
	for _, k := range keys {
		t.Run(k.name, func(t *testing.T) {
			path := console.KeyPath(k.key)
			if len(path) > longestPath {
				t.Fatalf("the entity page's path is %d bytes, want at most %d", len(path), longestPath)
			}
			if link := `<a href="` + path + `">` + shown(k.key) + `</a>`; !strings.Contains(deadPage, link) {
				t.Fatalf("the dead letters page has no row of the key linking to its page (%.120s…)", link)
			}
			page := get(t, base+path)
			if !strings.Contains(page, `<span id="entity-key" class="mono">`+shown(k.key)+`</span>`) {
				t.Fatalf("the entity page does not show the key:\n%.3000s", page)
			}
			if want := fmt.Sprintf("provider unavailable (a key of %d bytes)", len(k.key)); !strings.Contains(page, want) {
				t.Fatalf("the entity page does not list its dead letter %q", want)
			}
			if e, err := st.Entity(k.key); err != nil || !e.Known || !bytes.Equal(e.Key, k.key) || len(e.DeadLetters) != 1 {
				t.Fatalf("entity: %v %v", e.Known, err)
			}
		})
	}
	if !strings.Contains(deadPage, console.KeyPath([]byte("after-1"))) {
		t.Fatal("the record after the long keys is not listed")
	}

	// The console stops mid-file; the run finishes the record and writes one more.
	st.Close()
	appendFile(t, file, append(being[len(being)-3:], frames(t, deadLetterOf([]byte("after-3"), T0+7000))...))
	st = openStore(t, db)
	if n := scan(t, st, dir); n != 2 {
		t.Fatalf("after a restart the console added %d records, want the 2 past those it had read", n)
	}
	o := overview(t, st)
	if o.Totals.Dead != 5 || o.Malformed != 0 || o.Skipped != 0 || len(o.Reasons) != 1 || o.Reasons[0].Count != 5 {
		t.Fatalf("dead %d, malformed %d, skipped %d, reasons %v", o.Totals.Dead, o.Malformed, o.Skipped, o.Reasons)
	}
	st2, _ := os.Stat(file)
	if off, err := st.Offset(file); err != nil || off.Bytes != st2.Size() {
		t.Fatalf("offset %d %v, want the file's end %d", off.Bytes, err, st2.Size())
	}
	base = serveStore(t, st)
	for _, k := range append(keys, struct {
		name string
		key  []byte
	}{"after-3", []byte("after-3")}) {
		if page := get(t, base+console.KeyPath(k.key)); !strings.Contains(page, "provider unavailable") {
			t.Fatalf("%s: the entity page lists no dead letter after the restart", k.name)
		}
	}
}

// Every field the store files records under (entity key, intent id, trace id, reason) is
// stored at any length, and found again by its whole value; a key's stored form never
// stands for another key.
func TestEveryKeyedFieldAtAnyLength(t *testing.T) {
	for _, n := range []int{console.MaxKeyBytes, console.MaxKeyBytes + 1, 40_000, 1 << 20} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			key, id, tid := keyOf("key-", n), string(keyOf("intent-", n)), keyOf("trace-", n)
			reason := string(keyOf("reason-", n))
			ev := func(typ pb.TraceEvent_EventType, at int64, attrs map[string]string) proto.Message {
				return &pb.TraceEvent{TraceId: tid, EntityKey: key, EventType: typ, StartMs: at, EndMs: at, Attributes: attrs}
			}
			dir := t.TempDir()
			files := map[string][]byte{
				"intents.binpb": typed(t, &pb.ToolIntent{IntentId: id, EntityKey: key, ToolName: "orders.lookup", CreatedAtMs: T0, Kind: pb.ToolIntent_TOOL}),
				"traces.binpb": typed(t,
					ev(pb.TraceEvent_ACTIVATION_START, T0, map[string]string{tracing.AttrActivationKind: tracing.KindExternalEvent}),
					ev(pb.TraceEvent_INTENT_EMITTED, T0+1, map[string]string{tracing.AttrIntentID: id, tracing.AttrToolName: "orders.lookup", tracing.AttrIntentKind: "TOOL", tracing.AttrAttempts: "1"}),
					ev(pb.TraceEvent_SUSPENDED, T0+1, map[string]string{tracing.AttrIntentID: id}),
					ev(pb.TraceEvent_ACTIVATION_END, T0+1, map[string]string{tracing.AttrActivationStatus: tracing.StatusSuspended})),
				"finals.binpb":       typed(t, &pb.FinalReply{EntityKey: key, Message: "noted", CreatedAtMs: T0 + 2}),
				"snapshots.binpb":    typed(t, &pb.StateSnapshot{EntityKey: key, Seq: 2}),
				"dead_letters.binpb": typed(t, records.DeadLetter(key, T0+3, reason, "a long reason")),
			}
			// A key spelled as the start of the long key's stored form is another key.
			stored, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(console.KeyPath(key), "/entities/"))
			if n > console.MaxKeyBytes {
				files["finals-00000-of-00001.binpb"] = typed(t, &pb.FinalReply{EntityKey: stored[:console.MaxKeyBytes], Message: "other", CreatedAtMs: T0})
			}
			for name, b := range files {
				appendFile(t, filepath.Join(dir, name), b)
			}
			st := openStore(t, filepath.Join(t.TempDir(), "console.db"))
			if added := scan(t, st, dir); added != len(files)+3 {
				t.Fatalf("added %d records of %d", added, len(files)+3)
			}
			e, err := st.Entity(key)
			if err != nil || !e.Known || !bytes.Equal(e.Key, key) || len(e.Activations) != 1 || len(e.Intents) != 1 || e.Intents[0].GetIntentId() != id ||
				len(e.Finals) != 1 || e.Finals[0].GetMessage() != "noted" || e.Snapshot.GetSeq() != 2 || len(e.DeadLetters) != 1 || e.Suspended == nil {
				t.Fatalf("entity: known %v, %d activations, %d intents, %d finals, snapshot %v, %d dead letters, suspended %v, %v",
					e.Known, len(e.Activations), len(e.Intents), len(e.Finals), e.Snapshot, len(e.DeadLetters), e.Suspended != nil, err)
			}
			if evs, err := st.Trace(tid); err != nil || len(evs) != 4 || !st.HasTrace(tid) {
				t.Fatalf("trace: %d events, %v", len(evs), err)
			}
			if ti, err := st.Intent(id); err != nil || ti.GetIntentId() != id {
				t.Fatalf("intent: %v", err)
			}
			o := overview(t, st)
			if len(o.Reasons) != 1 || o.Reasons[0].Reason != reason || len(o.Suspended) != 1 || !bytes.Equal(o.Suspended[0].Key, key) ||
				o.Suspended[0].Intent.GetIntentId() != id {
				t.Fatalf("overview: %d reasons, suspended %d", len(o.Reasons), len(o.Suspended))
			}
			groups, err := st.DeadLetters()
			if err != nil || len(groups) != 1 || groups[0].Reason != reason || len(groups[0].Listed) != 1 {
				t.Fatalf("dead letter groups: %d, %v", len(groups), err)
			}
			if dls, err := st.DeadLettersOf(nil, []string{reason}); err != nil || len(dls) != 1 {
				t.Fatalf("dead letters of the reason: %d, %v", len(dls), err)
			}
			if got := st.KeysWithPrefix(key, 10); len(got) != 1 || !bytes.Equal(got[0], key) {
				t.Fatalf("keys starting with the whole key: %d", len(got))
			}
			if got := st.KeysWithPrefix(key[:4], 10); !slices.ContainsFunc(got, func(k []byte) bool { return bytes.Equal(k, key) }) {
				t.Fatalf("the %d keys starting with %q miss the key", len(got), key[:4])
			}
			if n > console.MaxKeyBytes {
				other, err := st.Entity(stored[:console.MaxKeyBytes])
				if err != nil || !other.Known || len(other.Finals) != 1 || other.Finals[0].GetMessage() != "other" || len(other.DeadLetters) != 0 {
					t.Fatalf("the short key spelled as the long key's stored form: %+v %v", other, err)
				}
			}
		})
	}
}

// warnings decodes a JSON log and returns its WARN lines that name file.
func warnings(t *testing.T, log *bytes.Buffer, file string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(log.String()), "\n") {
		var m map[string]any
		if line == "" || json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		if m["level"] == "WARN" && m["file"] == file {
			out = append(out, m)
		}
	}
	return out
}

// A record longer than MaxRecordBytes is not read: it is counted, its file and offset are
// logged once, the records after it are ingested, and a restarted console neither counts nor
// logs it again.
func TestRecordOverBoundSkippedOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "finals.binpb")
	before := typed(t, &pb.FinalReply{EntityKey: []byte("before"), Message: "one", CreatedAtMs: T0})
	// The long record's bytes are a hole in a sparse file: the console must not read them.
	head := binary.AppendUvarint(nil, console.MaxRecordBytes+1)
	appendFile(t, file, append(bytes.Clone(before), head...))
	if err := os.Truncate(file, int64(len(before)+len(head))+console.MaxRecordBytes+1); err != nil {
		t.Fatal(err)
	}
	appendFile(t, file, frames(t, &pb.FinalReply{EntityKey: []byte("after"), Message: "two", CreatedAtMs: T0 + 1}))

	var log bytes.Buffer
	db := filepath.Join(t.TempDir(), "console.db")
	follow := func(st *console.Store) int {
		n, err := (&console.Follower{Store: st, Dir: dir, Logger: slog.New(slog.NewJSONHandler(&log, nil))}).Scan()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	st := openStore(t, db)
	if n := follow(st); n != 2 {
		t.Fatalf("added %d records, want the ones before and after the long one", n)
	}
	if o := overview(t, st); o.Skipped != 1 || o.Malformed != 0 || o.Totals.Finals != 2 {
		t.Fatalf("skipped %d, malformed %d, finals %d", o.Skipped, o.Malformed, o.Totals.Finals)
	}
	if page := get(t, serveStore(t, st)+"/"); !strings.Contains(page, `id="skipped">1 records`) {
		t.Fatal("the overview does not count the skipped record")
	}
	st.Close()
	st = openStore(t, db)
	if n := follow(st); n != 0 {
		t.Fatalf("a restarted console added %d records", n)
	}
	if o := overview(t, st); o.Skipped != 1 {
		t.Fatalf("a restarted console counts %d skipped records", o.Skipped)
	}
	logged := warnings(t, &log, file)
	if len(logged) != 1 || logged[0]["offset"] != float64(len(before)) || logged[0]["bytes"] != float64(console.MaxRecordBytes+1) {
		t.Fatalf("logged %v, want one line with the record's offset %d", logged, len(before))
	}
}

// A file that cannot be read does not stop the others: they are ingested, the failure is
// returned as the file's typed error and logged once, not at every scan.
func TestFailingFileDoesNotStopOthers(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir)
	// Sorted first, a directory under a record file's name: opened, but never read.
	bad := filepath.Join(dir, "dead_letters-00000-of-00002.binpb")
	if err := os.MkdirAll(filepath.Join(bad, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	appendFile(t, filepath.Join(dir, "dead_letters-00001-of-00002.binpb"), typed(t, deadLetterOf([]byte("customer-5"), T0+4000)))
	var log bytes.Buffer
	f := &console.Follower{Store: openStore(t, filepath.Join(t.TempDir(), "console.db")), Dir: dir, Logger: slog.New(slog.NewJSONHandler(&log, nil))}
	n, err := f.Scan()
	if !errors.Is(err, console.ErrInput) || n != 13+1+1+2+1 {
		t.Fatalf("added %d, err %v: want every record of the other files and the failed file's error", n, err)
	}
	if n, err := f.Scan(); n != 0 || err != nil {
		t.Fatalf("a second scan: %d, %v", n, err)
	}
	if logged := warnings(t, &log, bad); len(logged) != 1 {
		t.Fatalf("the failed file was logged %d times", len(logged))
	}
}

// A record that does not decode is counted and passed: its file, offset, length and code are
// logged once, after the commit that moves the file's offset past it, and the records after
// it are read. Broken framing passes the rest of the file as it stands, logged the same way,
// and the records the run appends after it are read. A restarted console neither counts nor
// logs either again.
func TestUndecodableRecordSkippedOnce(t *testing.T) {
	dir := t.TempDir()
	finals, dead := filepath.Join(dir, "finals.binpb"), filepath.Join(dir, "dead_letters.binpb")
	before := typed(t, &pb.FinalReply{EntityKey: []byte("before"), Message: "one", CreatedAtMs: T0})
	garbage := []byte("\x07<script>not a final reply</script>") // field 0 of wire type 7: no message
	appendFile(t, finals, records.AppendFrame(bytes.Clone(before), garbage))
	appendFile(t, finals, frames(t, &pb.FinalReply{EntityKey: []byte("after"), Message: "two", CreatedAtMs: T0 + 1}))
	deadBefore := typed(t, deadLetterOf([]byte("dead-before"), T0))
	broken := append(bytes.Repeat([]byte{0xff}, 11), "no frame follows"...) // a length prefix that overflows
	appendFile(t, dead, append(bytes.Clone(deadBefore), broken...))

	var log bytes.Buffer
	db := filepath.Join(t.TempDir(), "console.db")
	follower := func(st *console.Store) *console.Follower {
		return &console.Follower{Store: st, Dir: dir, Logger: slog.New(slog.NewJSONHandler(&log, nil))}
	}
	scanned := func(f *console.Follower, want int, what string) {
		t.Helper()
		if n, err := f.Scan(); err != nil || n != want {
			t.Fatalf("%s: added %d records, %v; want %d", what, n, err, want)
		}
	}
	counted := func(st *console.Store, finalsN, deadN int64) {
		t.Helper()
		if o := overview(t, st); o.Malformed != 2 || o.Skipped != 0 || o.Totals.Finals != finalsN || o.Totals.Dead != deadN {
			t.Fatalf("malformed %d, skipped %d, finals %d, dead %d; want 2, 0, %d, %d", o.Malformed, o.Skipped, o.Totals.Finals, o.Totals.Dead, finalsN, deadN)
		}
	}
	st := openStore(t, db)
	f := follower(st)
	scanned(f, 3, "the first scan")
	counted(st, 2, 1)

	// The run goes on writing both files; the same console reads on past what it passed.
	appendFile(t, finals, frames(t, &pb.FinalReply{EntityKey: []byte("later"), Message: "three", CreatedAtMs: T0 + 2}))
	appendFile(t, dead, frames(t, deadLetterOf([]byte("dead-after"), T0+1)))
	scanned(f, 2, "a scan after the files grew")
	scanned(f, 0, "a scan of unchanged files")
	counted(st, 3, 2)
	if e, err := st.Entity([]byte("dead-after")); err != nil || len(e.DeadLetters) != 1 {
		t.Fatalf("the dead letter written after the broken framing: %+v %v", e, err)
	}

	st.Close()
	st = openStore(t, db)
	scanned(follower(st), 0, "a restarted console")
	counted(st, 3, 2)

	for _, c := range []struct {
		file          string
		offset, bytes int
		code          string
	}{
		{finals, len(before), len(garbage), string(console.CodeInput)},
		{dead, len(deadBefore), len(broken), string(records.CodeFraming)},
	} {
		logged := warnings(t, &log, c.file)
		if len(logged) != 1 || logged[0]["offset"] != float64(c.offset) || logged[0]["bytes"] != float64(c.bytes) || logged[0]["code"] != c.code {
			t.Fatalf("%s: logged %v, want one line with offset %d, %d bytes and code %s", filepath.Base(c.file), logged, c.offset, c.bytes, c.code)
		}
	}
}
