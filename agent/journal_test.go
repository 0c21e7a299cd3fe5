package agent_test

import (
	"context"
	"os"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	goldenv1 "github.com/beamagents/beamagents/golden/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
)

// suspendedHandler runs the handler_tool scenario's first input: a handler activation
// suspended on its lookup intent, and the result that resumes it.
func suspendedHandler(tb testing.TB) (*agent.Agent, host.MapStore, *pb.AgentEnvelope) {
	tb.Helper()
	sc := loadScenario(tb, "testdata/scenarios/handler_tool.json")
	a := newTestAgentWith(tb, sc.script(tb), sc)
	st := host.MapStore{}
	res, err := host.Activate(context.Background(), a, st, ext(1000000, "where is A-1?"), host.Deps{Keyring: testKeyring(tb)})
	if err != nil {
		tb.Fatal(err)
	}
	st.Apply(res)
	return a, st, toolResult(1002000, 0, 1, `{"status":"packed"}`)
}

// withSnapshot returns st with its continuation's snapshot replaced.
func withSnapshot(tb testing.TB, st host.MapStore, snap []byte) host.MapStore {
	tb.Helper()
	cont := &pb.Continuation{}
	if err := proto.Unmarshal(st[statecodec.CellContinuation], cont); err != nil {
		tb.Fatal(err)
	}
	cont.Snapshot = snap
	out := host.MapStore{}
	for k, v := range st {
		out[k] = v
	}
	out[statecodec.CellContinuation], _ = proto.MarshalOptions{Deterministic: true}.Marshal(cont)
	return out
}

// FuzzHandlerJournal resumes a suspended handler activation whose journal bytes are
// arbitrary: the core never panics, and a failure commits nothing, emits one dead letter and
// names a reason of the vocabulary.
func FuzzHandlerJournal(f *testing.F) {
	a, st, resume := suspendedHandler(f)
	cont := &pb.Continuation{}
	if err := proto.Unmarshal(st[statecodec.CellContinuation], cont); err != nil {
		f.Fatal(err)
	}
	f.Add(cont.GetSnapshot())
	// The same journal, of a burst: its further events.
	j := &pb.HandlerJournal{}
	if err := proto.Unmarshal(cont.GetSnapshot(), j); err != nil {
		f.Fatal(err)
	}
	j.Burst = []*pb.AgentEnvelope{ext(1500, "and another thing"), ext(1900, "thanks")}
	burst, _ := proto.MarshalOptions{Deterministic: true}.Marshal(j)
	f.Add(burst)
	golden, err := os.ReadFile("../golden/v1/handler_journal.binpb")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	f.Add([]byte{0x08, 0x02})
	kr := testKeyring(f)
	f.Fuzz(func(t *testing.T, snap []byte) {
		res, err := host.Activate(context.Background(), a, withSnapshot(t, st, snap), resume, host.Deps{Keyring: kr})
		check(t, res, err, kr)
		var ae *agent.Error
		if err != nil && (!errorsAs(err, &ae) || !slices.Contains(records.Reasons, ae.Reason)) {
			t.Fatalf("untyped failure %v", err)
		}
	})
}

// The golden handler journal decodes as written: its version, trigger and operations.
func TestGoldenHandlerJournal(t *testing.T) {
	b, err := os.ReadFile("../golden/v1/continuation_handler_journal.binpb")
	if err != nil {
		t.Fatal(err)
	}
	cont, err := statecodec.DecodeContinuation(b)
	if err != nil {
		t.Fatal(err)
	}
	if cont.Adapter() != "beamagents.agent.handler.v1" {
		t.Fatalf("adapter %q", cont.Adapter())
	}
	j := &pb.HandlerJournal{}
	if err := proto.Unmarshal(cont.Snapshot(), j); err != nil {
		t.Fatal(err)
	}
	for _, c := range goldenv1.Cases() {
		if c.File == "handler_journal.binpb" && !proto.Equal(j, c.Build()) {
			t.Fatalf("the continuation's journal differs from handler_journal.binpb's builder")
		}
	}
}

// A journal of a future version is refused as state_version_unsupported; a bindings
// suspension is not resumed by a handler agent (state_corrupt). Neither commits anything.
func TestHandlerJournalRefusals(t *testing.T) {
	a, st, resume := suspendedHandler(t)
	future, _ := proto.Marshal(&pb.HandlerJournal{JournalVersion: 2})
	bindings := host.MapStore{}
	for k, v := range st {
		bindings[k] = v
	}
	cont := &pb.Continuation{}
	proto.Unmarshal(st[statecodec.CellContinuation], cont)
	cont.Adapter = "beamagents.agent.v1"
	bindings[statecodec.CellContinuation], _ = proto.Marshal(cont)
	for _, tc := range []struct {
		name string
		st   host.MapStore
		want records.Reason
	}{
		{"future journal", withSnapshot(t, st, future), records.ReasonStateVersionUnsupported},
		{"bindings suspension", bindings, records.ReasonStateCorrupt},
		{"not a journal", withSnapshot(t, st, []byte{0xff}), records.ReasonStateCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := host.Activate(context.Background(), a, tc.st, resume, host.Deps{Keyring: testKeyring(t)})
			var ae *agent.Error
			if !errorsAs(err, &ae) || ae.Reason != tc.want || len(res.Writes) != 0 {
				t.Fatalf("got %v with %d writes, want %s and none", err, len(res.Writes), tc.want)
			}
		})
	}
}

// Replaying a handler's resumed activation against its state before it, with the replay
// cache it left, makes no model call and reproduces the outputs byte for byte; the intent
// verifies.
func TestHandlerReplayIsByteIdentical(t *testing.T) {
	a, st, resume := suspendedHandler(t)
	kr := testKeyring(t)
	first, err := host.Activate(context.Background(), a, copyStore(st), resume, host.Deps{Keyring: kr})
	if err != nil {
		t.Fatal(err)
	}
	replay := copyStore(st)
	replay[statecodec.CellLLMCache] = first.Writes[statecodec.CellLLMCache]
	again, err := host.Activate(context.Background(), a, replay, resume, host.Deps{Keyring: kr})
	if err != nil {
		t.Fatal(err)
	}
	if first.ModelCalls != 1 || again.ModelCalls != 0 {
		t.Fatalf("model calls %d then %d, want 1 then 0", first.ModelCalls, again.ModelCalls)
	}
	if !slices.EqualFunc(first.Finals, again.Finals, func(x, y *pb.FinalReply) bool { return proto.Equal(x, y) }) || len(first.Finals) != 1 {
		t.Fatalf("finals differ between runs: %v vs %v", first.Finals, again.Finals)
	}
	for k, v := range first.Writes {
		if k != statecodec.CellLLMCache && string(again.Writes[k]) != string(v) {
			t.Fatalf("cell %s differs between runs", k)
		}
	}
	p, err := statecodec.DecodePending(st[statecodec.CellPending])
	if err != nil {
		t.Fatal(err)
	}
	for ti := range p.All() {
		if o := intent.Verify(ti, kr); o != intent.OK {
			t.Fatalf("pending intent verifies as %v", o)
		}
	}
}

func copyStore(st host.MapStore) host.MapStore {
	out := host.MapStore{}
	for k, v := range st {
		out[k] = v
	}
	return out
}
