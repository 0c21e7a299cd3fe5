package cli

import (
	"bytes"
	"encoding/base64"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pubsub/wire"
	"github.com/beamagents/beamagents/statedir"
)

// A streaming run drained while customer-2 waits on its order lookup, then started again
// with the same --state_dir: the tool result published to the second run resumes the
// activation to its final reply (customer-2's queued thanks travels in its snapshot's inbox
// and runs after it), exports show both keys' counters carried over, and no run
// dead-letters anything (without --state_dir the drain fails the suspension closed).
func TestRunStateDirKeepsStateAcrossRestarts(t *testing.T) {
	h := newStateDirHarness(t)
	srv, in, finals, ints, errs, snaps, lines, thanks, dir, run, publish := h.srv, h.in, h.finals, h.ints, h.errs, h.snaps, h.lines, h.thanks, h.dir, h.run, h.publish
	// Run 1: customer-1 gets its reply, customer-2 suspends on its lookup intent.
	publish(lines[0], lines[1], thanks)
	out, errOut := run(func() bool { return allAcked(srv, in, 3) && count(srv, finals) == 1 && count(srv, ints) == 1 })
	if !strings.Contains(out, "state of 2 keys and 0 envelopes written to "+dir) {
		t.Fatalf("first run's stdout: %s\nstderr: %s", out, errOut)
	}
	if strings.Contains(errOut, "did not finish its drain") {
		t.Errorf("a new directory reported as an unfinished drain:\n%s", errOut)
	}
	assertMarker(t, dir, statedir.Marker{State: statedir.StateDrained, Generation: 1, Keys: 2})

	// Run 2: the lookup's result and an export request per key.
	export := func(key, id string, ms string) []byte {
		return []byte(`{"entityKey":"` + base64.StdEncoding.EncodeToString([]byte(key)) + `","eventTimeMs":"` + ms + `","exportRequest":{"requestId":"` + id + `"}}`)
	}
	publish(lines[2], export("customer-1", "c1", "1767225700000"), export("customer-2", "c2", "1767225700000"))
	out, errOut = run(func() bool { return allAcked(srv, in, 6) && count(srv, finals) == 3 && count(srv, snaps) == 2 })
	if !strings.Contains(errOut, "restoring 2 keys and 0 envelopes from "+dir) || strings.Contains(errOut, "did not finish its drain") {
		t.Errorf("second run's stderr:\n%s", errOut)
	}
	if !strings.Contains(out, "state of 2 keys") {
		t.Errorf("second run's stdout: %s", out)
	}
	assertMarker(t, dir, statedir.Marker{State: statedir.StateDrained, Generation: 2, Keys: 2})
	if n := count(srv, errs); n != 0 {
		t.Fatalf("%d dead letters, want none", n)
	}
	var replies []string
	got := map[string]*pb.StateSnapshot{}
	for _, m := range srv.Messages() {
		switch m.Topic {
		case finals:
			f := &pb.FinalReply{}
			if err := proto.Unmarshal(m.Data, f); err != nil {
				t.Fatal(err)
			}
			if string(f.GetEntityKey()) == "customer-2" {
				replies = append(replies, string(f.GetMessage()))
			}
		case snaps:
			s := &pb.StateSnapshot{}
			if err := proto.Unmarshal(m.Data, s); err != nil {
				t.Fatal(err)
			}
			got[string(s.GetEntityKey())] = s
		}
	}
	if len(replies) != 2 || !strings.Contains(replies[0], "arrives on Thursday") || !strings.Contains(replies[1], "You are welcome.") {
		t.Fatalf("customer-2's replies after the restart: %q", replies)
	}
	for key, seq := range map[string]int64{"customer-1": 1, "customer-2": 2} {
		s := got[key]
		if s.GetSeq() != seq || s.GetContinuation() != nil || len(s.GetPending()) != 0 || s.GetLlmCache() == nil {
			t.Errorf("%s after the restart: %v", key, s)
		}
	}
}

// Envelopes the drain kept in the ordering buffer, not yet due, run after the restart even
// when no message arrives: the restarted reader's watermark starts where the drained run's
// stood and advances at the wall clock's pace (without it, the watermark waits for a message
// and the envelope never runs).
func TestRunStateDirRunsWaitingEnvelopesWithoutNewMessages(t *testing.T) {
	h := newStateDirHarness(t)
	// With an 8 s resolution customer-1's event, 1 ms past a bucket's start, waits in the
	// buffer for 8 s after it is pulled: the drain keeps it there.
	event := bytes.Replace(h.lines[0], []byte(`"1767225600000"`), []byte(`"1767225600001"`), 1)
	if bytes.Equal(event, h.lines[0]) {
		t.Fatalf("the demo's first line changed: %s", h.lines[0])
	}
	h.publish(event)
	out, errOut := h.run(func() bool { return allAcked(h.srv, h.in, 1) }, "--order_resolution_ms", "8000")
	if !strings.Contains(out, "state of 1 keys and 1 envelopes written to "+h.dir) || count(h.srv, h.finals) != 0 {
		t.Fatalf("first run: %d finals\nstdout: %s\nstderr: %s", count(h.srv, h.finals), out, errOut)
	}
	out, errOut = h.run(func() bool { return count(h.srv, h.finals) == 1 }, "--order_resolution_ms", "8000")
	if !strings.Contains(errOut, "restoring 1 keys and 1 envelopes from "+h.dir) {
		t.Errorf("second run's stderr:\n%s", errOut)
	}
	if !strings.Contains(out, "state of 1 keys and 0 envelopes") || count(h.srv, h.errs) != 0 {
		t.Errorf("second run: %d dead letters\nstdout: %s", count(h.srv, h.errs), out)
	}
}

// stateDirHarness is a pstest server with the support demo's topics, its signed demo lines,
// a keyring, a model script and a state directory, and a way to run `run --state_dir` on them
// until a condition holds and then interrupt it.
type stateDirHarness struct {
	srv                                *pstest.Server
	in, sub, finals, ints, errs, snaps string
	lines                              [][]byte
	thanks                             []byte
	dir                                string
	run                                func(until func() bool, extra ...string) (string, string)
}

func (h *stateDirHarness) publish(ls ...[]byte) {
	for _, l := range ls {
		h.srv.Publish(h.in, l, map[string]string{wire.AttrContentType: wire.ContentTypeJSON})
	}
}

func newStateDirHarness(t *testing.T) *stateDirHarness {
	srv, ring, lines := demoPubSub(t)
	t.Cleanup(func() {
		for _, f := range []string{"input_subscription", "intents_topic", "finals_topic", "errors_topic", "snapshots_topic", "status_interval", "agent", "keyring", "state_dir", "agent_config", "order_resolution_ms"} {
			flag.Set(f, flag.Lookup(f).DefValue)
		}
	})
	// customer-2 writes again while it waits: that event waits in the key's inbox, through
	// the restart, and runs after the resumed activation (its model answer added here).
	script := filepath.Join(t.TempDir(), "script.jsonl")
	extra := `{"entity":"customer-2","seq":1,"step":0,"response":{"case":"support.reply","fields":{"support.reply.text":"You are welcome."}},"input_tokens":190,"output_tokens":5}`
	if err := os.WriteFile(script, append(bytes.Clone(support.ModelScript), []byte("\n"+extra+"\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(config, []byte(`{"script":"`+script+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	thanks := []byte(`{"entityKey":"Y3VzdG9tZXItMg==","eventTimeMs":"1767225630000","externalEvent":"VGhhbmtzIQ=="}`)
	dir := filepath.Join(t.TempDir(), "state")
	run := func(until func() bool, extra ...string) (string, string) {
		t.Helper()
		args := append([]string{"run", "--agent", support.Name, "--input_subscription", demoSub,
			"--intents_topic", demoIntents, "--finals_topic", demoFinals, "--errors_topic", demoErrors, "--snapshots_topic", demoSnapshots,
			"--status_interval", "100ms", "--keyring", "file:" + ring, "--state_dir", dir, "--agent_config", config}, extra...)
		return streamUntil(t, 120*time.Second, until, args...)
	}
	return &stateDirHarness{srv: srv, in: demoIn, sub: demoSub, finals: demoFinals, ints: demoIntents, errs: demoErrors, snaps: demoSnapshots,
		lines: lines, thanks: thanks, dir: dir, run: run}
}

func assertMarker(t *testing.T, dir string, want statedir.Marker) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, statedir.MarkerName))
	if err != nil {
		t.Fatal(err)
	}
	m, err := statedir.ParseMarker(b)
	if err != nil {
		t.Fatal(err)
	}
	m.Time = ""
	if m.WatermarkMs <= 0 {
		t.Errorf("marker %+v: no watermark", m)
	}
	m.WatermarkMs = 0 // the wall clock's
	if m != want {
		t.Errorf("marker %+v, want %+v", m, want)
	}
}
