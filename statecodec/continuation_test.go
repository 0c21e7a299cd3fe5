package statecodec_test

import (
	"bytes"
	"slices"
	"testing"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	goldenv1 "github.com/beamagents/beamagents/golden/v1"
	"github.com/beamagents/beamagents/statecodec"
)

func goldenContinuation(name string) *pb.Continuation {
	for _, c := range goldenv1.Cases() {
		if c.File == name {
			return c.Build().(*pb.Continuation)
		}
	}
	panic(name)
}

func suspension() statecodec.Suspension {
	return statecodec.Suspension{
		Seq: 7, StepIndex: 2, PendingIntentIDs: []string{"i-1", "i-2"}, Adapter: "beamagents.agent.v1",
		Snapshot: []byte{0, 1, 0xff}, SuspendedAtMs: t0, DeadlineMs: t0 + 300000,
	}
}

func TestSuspend(t *testing.T) {
	tests := []struct {
		name string
		edit func(*statecodec.Suspension)
		ok   bool
	}{
		{"valid", func(*statecodec.Suspension) {}, true},
		{"empty snapshot and adapter", func(s *statecodec.Suspension) { s.Snapshot, s.Adapter = nil, "" }, true},
		{"negative seq", func(s *statecodec.Suspension) { s.Seq = -1 }, false},
		{"no pending intent", func(s *statecodec.Suspension) { s.PendingIntentIDs = nil }, false},
		{"empty intent id", func(s *statecodec.Suspension) { s.PendingIntentIDs = []string{"i-1", ""} }, false},
		{"repeated intent id", func(s *statecodec.Suspension) { s.PendingIntentIDs = []string{"i-1", "i-1"} }, false},
		{"non-UTF-8 intent id", func(s *statecodec.Suspension) { s.PendingIntentIDs = []string{"\xff"} }, false},
		{"non-UTF-8 adapter", func(s *statecodec.Suspension) { s.Adapter = "\xc3" }, false},
		{"deadline at suspension", func(s *statecodec.Suspension) { s.DeadlineMs = s.SuspendedAtMs }, false},
		{"deadline before suspension", func(s *statecodec.Suspension) { s.DeadlineMs = s.SuspendedAtMs - 1 }, false},
		{"timer without intents", func(s *statecodec.Suspension) { s.PendingIntentIDs, s.WakeAtMs = nil, s.DeadlineMs }, true},
		{"signal without intents", func(s *statecodec.Suspension) { s.PendingIntentIDs, s.AwaitingSignal = nil, "approved" }, true},
		{"wake other than the deadline", func(s *statecodec.Suspension) { s.WakeAtMs = s.DeadlineMs + 1 }, false},
		{"non-UTF-8 signal name", func(s *statecodec.Suspension) { s.AwaitingSignal = "\xc3" }, false},
		{"started by a canary's agent", func(s *statecodec.Suspension) { s.Agent = "support-next" }, true},
		{"non-UTF-8 agent name", func(s *statecodec.Suspension) { s.Agent = "\xc3" }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := suspension()
			tc.edit(&s)
			c, err := statecodec.Suspend(s)
			if !tc.ok {
				wantErr(t, err, statecodec.ErrInvalidArgument, statecodec.CellContinuation)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mustEqualProto(t, &pb.Continuation{StateSchemaVersion: 1, Seq: s.Seq, StepIndex: s.StepIndex,
				PendingIntentIds: s.PendingIntentIDs, Adapter: s.Adapter, Snapshot: s.Snapshot,
				SuspendedAtMs: s.SuspendedAtMs, DeadlineMs: s.DeadlineMs, WakeAtMs: s.WakeAtMs,
				AwaitingSignal: s.AwaitingSignal, Agent: s.Agent}, c.Proto())
			if c.Agent() != s.Agent {
				t.Errorf("Agent() = %q, want %q", c.Agent(), s.Agent)
			}
		})
	}
}

func TestSuspendCopiesItsInputs(t *testing.T) {
	s := suspension()
	c, err := statecodec.Suspend(s)
	if err != nil {
		t.Fatal(err)
	}
	s.PendingIntentIDs[0], s.Snapshot[0] = "changed", 9
	if p := c.Proto(); p.PendingIntentIds[0] != "i-1" || p.Snapshot[0] != 0 {
		t.Fatal("the continuation aliases the caller's slices")
	}
}

func TestContinuationLifecycle(t *testing.T) {
	c, err := statecodec.Suspend(suspension())
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func() bool
		want bool
	}{
		{"orphan result is not pending", func() bool { return c.Resolve("i-9") }, false},
		{"not all resolved yet", c.AllResolved, false},
		{"i-1 pending", func() bool { return c.IsPending("i-1") }, true},
		{"resolve i-1", func() bool { return c.Resolve("i-1") }, true},
		{"i-1 no longer pending", func() bool { return c.IsPending("i-1") }, false},
		{"resolving i-1 twice is an orphan", func() bool { return c.Resolve("i-1") }, false},
		{"i-2 still pending", func() bool { return slices.Equal(c.Pending(), []string{"i-2"}) }, true},
		{"deadline not due a millisecond before", func() bool { return c.DeadlineDue(t0 + 299999) }, false},
		{"deadline due at the deadline", func() bool { return c.DeadlineDue(t0 + 300000) }, true},
		{"escalate to a later deadline", func() bool { return c.Escalate(t0+600000) == nil }, true},
		{"escalation counted", func() bool { return c.Escalations() == 1 && c.DeadlineMs() == t0+600000 }, true},
		{"deadline no longer due", func() bool { return c.DeadlineDue(t0 + 300000) }, false},
		{"escalating to an earlier deadline is refused", func() bool { return c.Escalate(t0+600000) == nil }, false},
		{"refused escalation changed nothing", func() bool { return c.Escalations() == 1 && c.DeadlineMs() == t0+600000 }, true},
		{"resolve i-2", func() bool { return c.Resolve("i-2") }, true},
		{"all resolved", c.AllResolved, true},
		{"seq and step kept", func() bool { return c.Seq() == 7 && c.StepIndex() == 2 }, true},
	}
	for _, s := range steps {
		if got := s.do(); got != s.want {
			t.Fatalf("%s: got %v", s.name, got)
		}
	}
	b, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := statecodec.DecodeContinuation(b)
	if err != nil {
		t.Fatal(err)
	}
	mustEqualProto(t, c.Proto(), back.Proto())
}

func TestEscalationCountIsBounded(t *testing.T) {
	c, err := statecodec.DecodeContinuation(marshal(t, &pb.Continuation{StateSchemaVersion: 1, PendingIntentIds: []string{"i"}, DeadlineMs: 5, Escalations: 1<<32 - 1}))
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, c.Escalate(6), statecodec.ErrInvalidArgument, statecodec.CellContinuation)
	if c.Escalations() != 1<<32-1 || c.DeadlineMs() != 5 {
		t.Fatal("refused escalation changed the continuation")
	}
}

func TestDecodeContinuation(t *testing.T) {
	tests := []struct {
		name      string
		in        []byte
		want      *pb.Continuation // nil: not suspended
		wantStats statecodec.Stats
		wantErr   *statecodec.Error
	}{
		{name: "empty cell is not suspended"},
		{name: "golden v1", in: golden(t, "continuation.binpb"), want: goldenContinuation("continuation.binpb")},
		{name: "golden v1 with escalations", in: golden(t, "continuation_escalations.binpb"), want: goldenContinuation("continuation_escalations.binpb")},
		{name: "pre-versioned upgraded explicitly", in: marshal(t, &pb.Continuation{Seq: 4, PendingIntentIds: []string{"i"}, DeadlineMs: 9}),
			want:      &pb.Continuation{StateSchemaVersion: 1, Seq: 4, PendingIntentIds: []string{"i"}, DeadlineMs: 9},
			wantStats: statecodec.Stats{Migrated: 1, PreVersioned: 1}},
		{name: "repeated pending id kept once", in: marshal(t, &pb.Continuation{StateSchemaVersion: 1, PendingIntentIds: []string{"a", "b", "a"}}),
			want:      &pb.Continuation{StateSchemaVersion: 1, PendingIntentIds: []string{"b", "a"}},
			wantStats: statecodec.Stats{DuplicatesDropped: 1}},
		{name: "truncated bytes are corrupt", in: golden(t, "continuation.binpb")[:12], wantErr: statecodec.ErrCorrupt},
		{name: "future version is refused", in: marshal(t, &pb.Continuation{StateSchemaVersion: 2, Seq: 1}), wantErr: statecodec.ErrFutureVersion},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := bytes.Clone(tc.in)
			c, err := statecodec.DecodeContinuation(in)
			if !bytes.Equal(in, tc.in) {
				t.Fatal("decode modified its input")
			}
			switch {
			case tc.wantErr != nil:
				wantErr(t, err, tc.wantErr, statecodec.CellContinuation)
			case err != nil:
				t.Fatal(err)
			case tc.want == nil:
				if c != nil {
					t.Fatalf("got %v, want not suspended", c.Proto())
				}
				if b, err := c.Encode(); b != nil || err != nil {
					t.Fatalf("not suspended encodes as %x, %v; want no bytes", b, err)
				}
			default:
				mustEqualProto(t, tc.want, c.Proto())
				if c.Stats() != tc.wantStats {
					t.Fatalf("stats = %+v, want %+v", c.Stats(), tc.wantStats)
				}
			}
		})
	}
}

func TestContinuationUnknownFieldsSurviveRewrite(t *testing.T) {
	c, err := statecodec.DecodeContinuation(withUnknown(golden(t, "continuation.binpb")))
	if err != nil {
		t.Fatal(err)
	}
	c.Resolve(c.Pending()[0])
	out, err := c.Encode()
	if err != nil || !hasUnknown99(out) {
		t.Fatalf("unknown field lost on rewrite (%v)", err)
	}
}

// SetSnapshot swaps the resume state in place: what encodes is the suspension with only the
// snapshot changed, and the accessors read it back.
func TestContinuationSetSnapshot(t *testing.T) {
	s := suspension()
	c, err := statecodec.Suspend(s)
	if err != nil {
		t.Fatal(err)
	}
	if c.Adapter() != s.Adapter || !bytes.Equal(c.Snapshot(), s.Snapshot) {
		t.Fatalf("adapter %q snapshot %x", c.Adapter(), c.Snapshot())
	}
	c.SetSnapshot([]byte("progress"))
	s.Snapshot = []byte("progress")
	want, _ := statecodec.Suspend(s)
	got, _ := c.Encode()
	wantB, _ := want.Encode()
	if !bytes.Equal(got, wantB) {
		t.Errorf("after SetSnapshot the cell encodes %x, want %x", got, wantB)
	}
	back, err := statecodec.DecodeContinuation(got)
	if err != nil || !bytes.Equal(back.Snapshot(), []byte("progress")) || back.Seq() != s.Seq {
		t.Errorf("decoded %v, %v", back, err)
	}
}
