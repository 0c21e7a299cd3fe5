package console_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/console"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/tracing"
)

func openStore(t *testing.T, path string) *console.Store {
	t.Helper()
	st, err := console.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func scan(t *testing.T, st *console.Store, dir string) int {
	t.Helper()
	n, err := (&console.Follower{Store: st, Dir: dir}).Scan()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func overview(t *testing.T, st *console.Store) *console.Overview {
	t.Helper()
	o, err := st.Overview()
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestIngestOverview(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir)
	st := openStore(t, filepath.Join(t.TempDir(), "console.db"))
	if n := scan(t, st, dir); n != 13+1+1+2 {
		t.Fatalf("added %d records", n)
	}
	o := overview(t, st)
	got := o.Totals
	if got.Activations != 3 || got.ModelCalls != 2 || got.Tokens != 190+22+236+29 || got.Intents != 1 || got.Finals != 1 || got.Dead != 2 {
		t.Fatalf("totals %+v", got)
	}
	if len(o.Reasons) != 2 || o.SuspendedTotal != 1 || string(o.Suspended[0].Key) != "customer-4" ||
		o.Suspended[0].Intent.GetKind() != pb.ToolIntent_APPROVAL || o.Suspended[0].Intent.GetToolName() != "payments.refund" {
		t.Fatalf("reasons %v, suspended %+v", o.Reasons, o.Suspended)
	}
	e, err := st.Entity([]byte("customer-2"))
	if err != nil || !e.Known || e.Status != tracing.StatusOK || len(e.Activations) != 1 || e.Activations[0].Tools[0] != "orders.lookup" ||
		len(e.Intents) != 1 || len(e.Finals) != 1 || e.Suspended != nil {
		t.Fatalf("entity %+v %v", e, err)
	}
}

// A file that grows is read from where the last read ended, a record cut off at the end
// waits for its last bytes, and a reopened store resumes at its recorded offsets.
func TestIngestFollowsAndResumes(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir)
	db := filepath.Join(t.TempDir(), "console.db")
	st := openStore(t, db)
	scan(t, st, dir)
	traces := filepath.Join(dir, "traces.binpb")
	more := frames(t, lookupTrace("customer-9")...)
	f, _ := os.OpenFile(traces, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(more[:len(more)-3])
	f.Close()
	if n := scan(t, st, dir); n != 8 {
		t.Fatalf("a growing file: %d records, want the 8 whole ones", n)
	}
	f, _ = os.OpenFile(traces, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(more[len(more)-3:])
	f.Close()
	if n := scan(t, st, dir); n != 1 {
		t.Fatalf("the completed record: %d", n)
	}
	st.Close()

	// Past the prefix the offsets identify a file by, garble a record already read: a store
	// that re-read the file would count it as malformed.
	b, _ := os.ReadFile(traces)
	pad := frames(t, lookupTrace("customer-pad")...)
	for len(b) < 6000 {
		b = append(b, pad...)
	}
	os.WriteFile(traces, b, 0o644)
	st = openStore(t, db)
	scan(t, st, dir)
	size := int64(len(b))
	b[5000] ^= 0xff
	b = append(b, frames(t, event("customer-9", 1, pb.TraceEvent_ERROR, 0, T0+90_000, T0+90_000, map[string]string{tracing.AttrReason: "model_error"}))...)
	os.WriteFile(traces, b, 0o644)
	st.Close()
	st = openStore(t, db)
	if off, err := st.Offset(traces); err != nil || off.Bytes != size {
		t.Fatalf("offset %+v %v, want %d", off, err, size)
	}
	if n := scan(t, st, dir); n != 1 {
		t.Fatalf("after a restart: %d records, want the one appended", n)
	}
	if o := overview(t, st); o.Malformed != 0 {
		t.Fatalf("the restart re-read the file: %d malformed", o.Malformed)
	}
}

// A file rewritten under its name is read again from its start; records already ingested
// count once. A shard is picked up, and broken framing is counted, not fatal.
func TestIngestRewrittenShardedBroken(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir)
	st := openStore(t, filepath.Join(t.TempDir(), "console.db"))
	scan(t, st, dir)
	dl := filepath.Join(dir, "dead_letters.binpb")
	os.WriteFile(dl, frames(t, modelError(t, "customer-8", T0+10_000), modelError(t, "customer-7", T0+9000)), 0o644)
	if n := scan(t, st, dir); n != 1 {
		t.Fatalf("rewritten: %d new", n)
	}
	os.WriteFile(filepath.Join(dir, "dead_letters-00001-of-00002.binpb"), frames(t, modelError(t, "customer-6", T0+11_000)), 0o644)
	os.WriteFile(filepath.Join(dir, "finals-1767225600000-1767225660000-00000-of-00001.binpb"), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 0o644)
	if n := scan(t, st, dir); n != 1 {
		t.Fatalf("shard: %d new", n)
	}
	o := overview(t, st)
	if o.Totals.Dead != 4 || o.Malformed != 1 {
		t.Fatalf("dead %d malformed %d", o.Totals.Dead, o.Malformed)
	}
}

func kindOfCode(c byte) records.Kind {
	k, _ := records.KindOfCode(c)
	return k
}

// Every record decoder of the store takes any bytes without panicking: what does not decode
// is counted as malformed.
func FuzzIngest(f *testing.F) {
	f.Add(byte('t'), marshal(f, lookupTrace("k")[1]))
	f.Add(byte('d'), marshal(f, modelError(f, "k", 1)))
	f.Add(byte('s'), []byte{0x0a, 0xff})
	st, err := console.Open(filepath.Join(f.TempDir(), "fuzz.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	f.Fuzz(func(t *testing.T, kind byte, b []byte) {
		if _, _, err := st.Ingest("", console.Offset{}, []console.Record{{Kind: kindOfCode(kind), Data: b}}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Overview(); err != nil {
			t.Fatal(err)
		}
	})
}

// A record larger than one read's chunk is read whole.
func TestIngestLargeRecord(t *testing.T) {
	dir := t.TempDir()
	snap := &pb.StateSnapshot{EntityKey: []byte("big"), Seq: 3, Memory: &pb.MemoryBlob{Entries: []*pb.MemoryEntry{{Key: "k", Value: bytes.Repeat([]byte{'v'}, 9<<20)}}}}
	os.WriteFile(filepath.Join(dir, "snapshots.binpb"), frames(t, snap, snap), 0o644)
	st := openStore(t, filepath.Join(t.TempDir(), "console.db"))
	if n := scan(t, st, dir); n != 1 {
		t.Fatalf("%d records", n)
	}
	e, err := st.Entity([]byte("big"))
	if err != nil || e.Snapshot.GetSeq() != 3 || overview(t, st).Malformed != 0 {
		t.Fatalf("%v %v", e.Snapshot.GetSeq(), err)
	}
}

// A Pub/Sub message of any type, attributes and data becomes a record or is counted as
// malformed, never a panic.
func FuzzMessageRecord(f *testing.F) {
	f.Add("beam_agents.v1.TraceEvent", "application/json", []byte(`{"entityKey":"aw=="}`))
	f.Add("beam_agents.v1.ActivationErrorRecord", "", marshal(f, modelError(f, "k", 1)))
	f.Add("beamagents.rejected_input", "", []byte("\xff"))
	st, err := console.Open(filepath.Join(f.TempDir(), "fuzz.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	f.Fuzz(func(t *testing.T, typ, ct string, data []byte) {
		r := console.MessageRecord(&pubsubpb.PubsubMessage{Data: data, Attributes: map[string]string{"type": typ, "content-type": ct}})
		if _, _, err := st.Ingest("", console.Offset{}, []console.Record{r}); err != nil {
			t.Fatal(err)
		}
	})
}

// A typed record file is read after its header; a file whose header names another type
// than its name's is skipped whole, neither ingested nor counted as malformed.
func TestIngestTypedFiles(t *testing.T) {
	dir := t.TempDir()
	traces := frames(t, lookupTrace("customer-9")...)
	typed := func(m proto.Message) []byte { return records.Header(m.ProtoReflect().Descriptor().FullName()) }
	os.WriteFile(filepath.Join(dir, "traces.binpb"), append(typed(&pb.TraceEvent{}), traces...), 0o644)
	os.WriteFile(filepath.Join(dir, "finals.binpb"), append(typed(&pb.TraceEvent{}), traces...), 0o644)
	st := openStore(t, filepath.Join(t.TempDir(), "console.db"))
	want := len(lookupTrace("customer-9"))
	if n := scan(t, st, dir); n != want {
		t.Fatalf("%d records, want the %d of the typed traces file only", n, want)
	}
	if o := overview(t, st); o.Malformed != 0 || o.Totals.Finals != 0 {
		t.Fatalf("malformed %d, finals %d: the mistyped file was read", o.Malformed, o.Totals.Finals)
	}
	if n := scan(t, st, dir); n != 0 {
		t.Fatalf("a second scan added %d", n)
	}
}
