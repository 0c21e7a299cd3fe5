package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/pipeline"
)

// "support-v2" is the next version of the support agent: a new build whose model id changed
// (so its replay-cache keys differ and it calls its model afresh).
func init() {
	agent.Register("support-v2", func([]byte) (*agent.Agent, error) {
		schema, err := support.Schema()
		if err != nil {
			return nil, err
		}
		args, err := support.RefundArgs()
		if err != nil {
			return nil, err
		}
		m, err := model.ParseScript(support.ModelScript)
		if err != nil {
			return nil, err
		}
		return agent.New(agent.Definition{Name: "support-v2", Schema: schema, Model: m, ModelID: "support-scripted-2",
			Prompt: agent.DefaultPrompt(support.SystemPrompt), Bindings: support.Bindings(), Limits: support.Limits,
			Tools: map[string]agent.ToolSpec{support.ToolRefund: {Args: args, Agreement: support.RefundAgreement}}})
	})
}

// upgradeAt splits the example's envelopes at event time cut: version A gets those before it
// and an export request for every key at cut, version B the rest.
func upgradeAt(t *testing.T, dir string, cut int64) (a, b string) {
	t.Helper()
	var before, after bytes.Buffer
	keys := map[string]bool{}
	for _, line := range bytes.Split(bytes.TrimSpace(support.Envelopes), []byte("\n")) {
		env := &pb.AgentEnvelope{}
		if protojson.Unmarshal(line, env) != nil {
			continue // the deliberately broken line is no key's
		}
		keys[string(env.GetEntityKey())] = true
		if env.GetEventTimeMs() < cut {
			protodelim.MarshalTo(&before, env)
		} else {
			protodelim.MarshalTo(&after, env)
		}
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	}) {
		protodelim.MarshalTo(&before, &pb.AgentEnvelope{EntityKey: []byte(k), EventTimeMs: cut,
			Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{RequestId: "upgrade-" + k}}})
	}
	a, b = filepath.Join(dir, "a.binpb"), filepath.Join(dir, "b.binpb")
	os.WriteFile(a, before.Bytes(), 0o644)
	os.WriteFile(b, after.Bytes(), 0o644)
	return a, b
}

func runAgent(t *testing.T, name, input, restore string) string {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), "", pipeline.Options{
		Agent: name, Keyring: writeKeyring(t, dir), Input: input, Restore: restore, OutputDir: out,
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func records[M proto.Message](t *testing.T, dir, name string, newM func() M) []M {
	t.Helper()
	r := bytes.NewReader(read(t, dir, name+".binpb"))
	var out []M
	for r.Len() > 0 {
		m := newM()
		if err := protodelim.UnmarshalFrom(r, m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func keyed[M proto.Message](ms []M, keep func(M) bool) []string {
	var out []string
	for _, m := range ms {
		if keep(m) {
			b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(m)
			out = append(out, string(b))
		}
	}
	slices.Sort(out)
	return out
}

// A rolling upgrade on Prism, the recovery path for a runner that cannot update a job in
// place: version A runs until every key's state is exported (with three keys suspended, one on
// a tool result, two on an approval), version B restores every key from those snapshots
// and runs the rest of the input. Together they emit exactly what one uninterrupted run
// emits: the same signed intents, final replies, dead letters and later snapshots, byte for
// byte, none lost and none twice.
func TestRollingUpgradeThroughSnapshots(t *testing.T) {
	t.Run("same state schema", func(t *testing.T) { rollingUpgrade(t, nil) })
	// Version A wrote its state blobs before state_schema_version existed (version 0, the
	// version 1 layout unstamped): B migrates each blob through the registered step 0 → 1
	// when it first reads it, and continues exactly as before. A key B never activates keeps
	// its blobs verbatim, so its later snapshot differs from the one run's by the stamp only.
	t.Run("pre-versioned state migrated", func(t *testing.T) { rollingUpgrade(t, unstamp) })
}

// unstamp rewrites a snapshot's state blobs as pre-versioned (state_schema_version 0).
func unstamp(s *pb.StateSnapshot) {
	s.StateSchemaVersion = 0
	if m := s.GetMemory(); m != nil {
		m.StateSchemaVersion = 0
	}
	if c := s.GetLlmCache(); c != nil {
		c.StateSchemaVersion = 0
	}
	if c := s.GetContinuation(); c != nil {
		c.StateSchemaVersion = 0
	}
}

func rollingUpgrade(t *testing.T, rewrite func(*pb.StateSnapshot)) {
	const cut = 1767225650000 // customer-2 waits for its order lookup, customer-3 and customer-4 for approval
	dir := t.TempDir()
	all := filepath.Join(dir, "all.jsonl")
	os.WriteFile(all, support.Envelopes, 0o644)
	inA, inB := upgradeAt(t, dir, cut)

	once := runAgent(t, support.Name, all, "")
	outA := runAgent(t, support.Name, inA, "")
	snaps := records(t, outA, pipeline.SnapshotsName, func() *pb.StateSnapshot { return &pb.StateSnapshot{} })
	if len(snaps) != 5 {
		t.Fatalf("version A exported %d snapshots, want one per key (5)", len(snaps))
	}
	suspended := 0
	for _, s := range snaps {
		if s.GetContinuation() != nil && len(s.GetPending()) > 0 {
			suspended++
			if s.GetContinuation().GetDeadlineMs() <= cut {
				t.Fatalf("%s: a deadline before the cut: A's escalations would not be told apart", s.GetEntityKey())
			}
		}
	}
	if suspended != 3 {
		t.Fatalf("%d keys suspended at the cut, want 3", suspended)
	}
	restore := filepath.Join(outA, pipeline.SnapshotsName+".binpb")
	if rewrite != nil {
		var b bytes.Buffer
		for _, s := range snaps {
			rewrite(s)
			protodelim.MarshalTo(&b, s)
		}
		restore = filepath.Join(t.TempDir(), "snapshots.binpb")
		os.WriteFile(restore, b.Bytes(), 0o644)
	}
	outB := runAgent(t, "support-v2", inB, restore)

	// A bounded run of A ends with the watermark at infinity, firing the suspended keys'
	// deadlines after the export: what A emitted after the cut is what a drained job would
	// not have, so only A's records from before the cut count. No deadline falls before the
	// cut (checked above), so A's escalations (attempt > 0) all come after it.
	intent := func() *pb.ToolIntent { return &pb.ToolIntent{} }
	beforeCut := func(ti *pb.ToolIntent) bool { return ti.GetAttempt() == 0 }
	anyIntent := func(*pb.ToolIntent) bool { return true }
	if got, want := append(keyed(records(t, outA, pipeline.IntentsName, intent), beforeCut), keyed(records(t, outB, pipeline.IntentsName, intent), anyIntent)...),
		keyed(records(t, once, pipeline.IntentsName, intent), anyIntent); !sameSet(got, want) {
		t.Errorf("intents: A before the cut and B give %d, one run %d", len(got), len(want))
	}
	final := func() *pb.FinalReply { return &pb.FinalReply{} }
	anyFinal := func(*pb.FinalReply) bool { return true }
	if got, want := append(keyed(records(t, outA, pipeline.FinalsName, final), anyFinal), keyed(records(t, outB, pipeline.FinalsName, final), anyFinal)...),
		keyed(records(t, once, pipeline.FinalsName, final), anyFinal); !sameSet(got, want) {
		t.Errorf("final replies: A and B give %d, one run %d", len(got), len(want))
	}
	dead := func() *pb.ActivationErrorRecord { return &pb.ActivationErrorRecord{} }
	deadBefore := func(d *pb.ActivationErrorRecord) bool { return d.GetEventTimeMs() < cut }
	anyDead := func(*pb.ActivationErrorRecord) bool { return true }
	if got, want := append(keyed(records(t, outA, pipeline.DeadLettersName, dead), deadBefore), keyed(records(t, outB, pipeline.DeadLettersName, dead), anyDead)...),
		keyed(records(t, once, pipeline.DeadLettersName, dead), func(d *pb.ActivationErrorRecord) bool { return d.GetReason() != string(agent.ReasonEnvelopeInvalid) }); !sameSet(got, want) {
		t.Errorf("dead letters: A before the cut and B give\n%s\none run\n%s", got, want)
	}
	snap := func() *pb.StateSnapshot { return &pb.StateSnapshot{} }
	restamp := func(s *pb.StateSnapshot) bool {
		if rewrite != nil {
			s.StateSchemaVersion = 1
			if s.Memory != nil {
				s.Memory.StateSchemaVersion = 1
			}
			if s.LlmCache != nil {
				s.LlmCache.StateSchemaVersion = 1
			}
		}
		return true
	}
	if got, want := keyed(records(t, outB, pipeline.SnapshotsName, snap), restamp),
		keyed(records(t, once, pipeline.SnapshotsName, snap), func(*pb.StateSnapshot) bool { return true }); !sameSet(got, want) {
		t.Errorf("B's snapshot of customer-5 differs from the one run's:\n%s\n%s", read(t, outB, "snapshots.jsonl"), read(t, once, "snapshots.jsonl"))
	}
}

func sameSet(got, want []string) bool {
	slices.Sort(got)
	return fmt.Sprint(got) == fmt.Sprint(want)
}
