package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/testschema"
	"github.com/beamagents/beamagents/migrate"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/transforms"
)

// "support-v2" is the next version of the support agent: a new build whose model id changed
// (so its replay-cache keys differ and it calls its model afresh). "support-state-v2" is the
// support agent built with the test-only state schema version 2 (internal/testkit/testschema): same
// model, prompt and tools, but every state blob it writes is stamped 2 and every version 1
// blob it reads is migrated first (memory keys move to the "fact/" namespace).
func init() {
	variant := func(name string, change func(*agent.Definition)) {
		agent.Register(name, func([]byte) (*agent.Agent, error) {
			def, err := support.Definition(support.ModelScript)
			if err != nil {
				return nil, err
			}
			def.Name = name
			change(&def.Definition)
			return bindings.New(def)
		})
	}
	variant("support-v2", func(d *agent.Definition) { d.ModelID = "support-scripted-2" })
	variant("support-state-v2", func(d *agent.Definition) { d.StateSchema = testschema.V2() })
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
	out, _ := runAgentCounted(t, name, input, restore)
	return out
}

// runAgentCounted runs the agent and returns its output directory and its counters.
func runAgentCounted(t *testing.T, name, input, restore string) (string, map[string]int64) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	res, err := pipeline.Run(context.Background(), "", pipeline.Options{
		Options: transforms.Options{Agent: name, Keyring: writeKeyring(t, dir)},
		Input:   input, Restore: restore, OutputDir: out,
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, res.Counters
}

func recordsOf[M proto.Message](t *testing.T, dir, name string, newM func() M) []M {
	t.Helper()
	r := bytes.NewReader(body(t, read(t, dir, name+".binpb")))
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
	t.Run("same state schema", func(t *testing.T) { rollingUpgrade(t, upgrade{agentB: "support-v2"}) })
	// Version A wrote its state blobs before state_schema_version existed (version 0, the
	// version 1 layout unstamped): B migrates each blob through the registered step 0 → 1
	// when it first reads it, and continues exactly as before. A key B never activates keeps
	// its blobs verbatim, so its later snapshot differs from the one run's by the stamp only.
	t.Run("pre-versioned state migrated", func(t *testing.T) { rollingUpgrade(t, upgrade{agentB: "support-v2", rewrite: unstamp}) })
	// Version B has a new state schema, version 2 (internal/testkit/testschema), with registered
	// steps 1 → 2. Every key is exported at the end of both runs, so the whole state of every
	// key is compared: B's equals the one run's migrated to version 2, B wrote version 2
	// wherever it wrote state, and version A refuses what B wrote.
	t.Run("state schema version 2", func(t *testing.T) {
		rollingUpgrade(t, upgrade{agentB: "support-state-v2", schemaB: testschema.V2(), exportAll: true})
	})
}

// upgrade is one rolling upgrade from the support agent (version A) to version B.
type upgrade struct {
	agentB    string
	rewrite   func(*pb.StateSnapshot) // applied to A's snapshots before B restores them
	schemaB   *migrate.Registry       // B's state schema; nil is the build's own
	exportAll bool                    // export every key at the end of the one run and of B
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

// endExport is the event time of the final exports: after every envelope and deadline.
const endExport = 1767236400000

// withExports appends an export request for each key at endExport to the envelope file in.
func withExports(t *testing.T, in string, keys []string) string {
	t.Helper()
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if strings.HasSuffix(in, ".jsonl") {
		out.Write(b)
		for _, k := range keys {
			line, _ := protojson.Marshal(exportAt(k))
			out.Write(append(line, '\n'))
		}
	} else {
		out.Write(b)
		for _, k := range keys {
			protodelim.MarshalTo(&out, exportAt(k))
		}
	}
	path := filepath.Join(t.TempDir(), "with-exports"+filepath.Ext(in))
	os.WriteFile(path, out.Bytes(), 0o644)
	return path
}

func exportAt(key string) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: endExport,
		Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{RequestId: "end-" + key}}}
}

var supportKeys = []string{"customer-1", "customer-2", "customer-3", "customer-4", "customer-5"}

// migrated returns the snapshot with each of its state blobs migrated to schema (the build's
// own when nil), so that snapshots of two state schemas compare by meaning.
func migrated(t *testing.T, schema *migrate.Registry, s *pb.StateSnapshot) *pb.StateSnapshot {
	t.Helper()
	if schema == nil {
		schema = migrate.Default()
	}
	s = proto.Clone(s).(*pb.StateSnapshot)
	s.StateSchemaVersion = 1 // the snapshot envelope's own version
	for _, m := range []proto.Message{s.GetMemory(), s.GetLlmCache(), s.GetContinuation()} {
		if m.ProtoReflect().IsValid() {
			if _, err := schema.Migrate(m); err != nil {
				t.Fatalf("%s: %v", s.GetEntityKey(), err)
			}
		}
	}
	return s
}

func rollingUpgrade(t *testing.T, u upgrade) {
	const cut = 1767225650000 // customer-2 waits for its order lookup, customer-3 and customer-4 for approval
	dir := t.TempDir()
	all := filepath.Join(dir, "all.jsonl")
	os.WriteFile(all, support.Envelopes, 0o644)
	inA, inB := upgradeAt(t, dir, cut)
	if u.exportAll {
		all, inB = withExports(t, all, supportKeys), withExports(t, inB, supportKeys)
	}

	once := runAgent(t, support.Name, all, "")
	outA := runAgent(t, support.Name, inA, "")
	snaps := recordsOf(t, outA, pipeline.SnapshotsName, func() *pb.StateSnapshot { return &pb.StateSnapshot{} })
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
	if u.rewrite != nil {
		var b bytes.Buffer
		for _, s := range snaps {
			u.rewrite(s)
			protodelim.MarshalTo(&b, s)
		}
		restore = filepath.Join(t.TempDir(), "snapshots.binpb")
		os.WriteFile(restore, b.Bytes(), 0o644)
	}
	outB, countersB := runAgentCounted(t, u.agentB, inB, restore)

	// A bounded run of A ends with the watermark at infinity, firing the suspended keys'
	// deadlines after the export: what A emitted after the cut is what a drained job would
	// not have, so only A's records from before the cut count. No deadline falls before the
	// cut (checked above), so A's escalations (attempt > 0) all come after it.
	intent := func() *pb.ToolIntent { return &pb.ToolIntent{} }
	beforeCut := func(ti *pb.ToolIntent) bool { return ti.GetAttempt() == 0 }
	anyIntent := func(*pb.ToolIntent) bool { return true }
	if got, want := append(keyed(recordsOf(t, outA, pipeline.IntentsName, intent), beforeCut), keyed(recordsOf(t, outB, pipeline.IntentsName, intent), anyIntent)...),
		keyed(recordsOf(t, once, pipeline.IntentsName, intent), anyIntent); !sameSet(got, want) {
		t.Errorf("intents: A before the cut and B give %d, one run %d", len(got), len(want))
	}
	final := func() *pb.FinalReply { return &pb.FinalReply{} }
	anyFinal := func(*pb.FinalReply) bool { return true }
	if got, want := append(keyed(recordsOf(t, outA, pipeline.FinalsName, final), anyFinal), keyed(recordsOf(t, outB, pipeline.FinalsName, final), anyFinal)...),
		keyed(recordsOf(t, once, pipeline.FinalsName, final), anyFinal); !sameSet(got, want) {
		t.Errorf("final replies: A and B give %d, one run %d", len(got), len(want))
	}
	dead := func() *pb.ActivationErrorRecord { return &pb.ActivationErrorRecord{} }
	deadBefore := func(d *pb.ActivationErrorRecord) bool { return d.GetEventTimeMs() < cut }
	anyDead := func(*pb.ActivationErrorRecord) bool { return true }
	if got, want := append(keyed(recordsOf(t, outA, pipeline.DeadLettersName, dead), deadBefore), keyed(recordsOf(t, outB, pipeline.DeadLettersName, dead), anyDead)...),
		keyed(recordsOf(t, once, pipeline.DeadLettersName, dead), func(d *pb.ActivationErrorRecord) bool { return d.GetReason() != string(records.ReasonEnvelopeInvalid) }); !sameSet(got, want) {
		t.Errorf("dead letters: A before the cut and B give\n%s\none run\n%s", got, want)
	}
	snap := func() *pb.StateSnapshot { return &pb.StateSnapshot{} }
	snapsB, snapsOnce := recordsOf(t, outB, pipeline.SnapshotsName, snap), recordsOf(t, once, pipeline.SnapshotsName, snap)
	if want := map[bool]int{false: 1, true: 1 + len(supportKeys)}[u.exportAll]; len(snapsB) != want || len(snapsOnce) != want {
		t.Fatalf("B exported %d snapshots, the one run %d; want %d", len(snapsB), len(snapsOnce), want)
	}
	norm := func(ms []*pb.StateSnapshot) []string {
		var out []string
		for _, s := range ms {
			b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(migrated(t, u.schemaB, s))
			out = append(out, string(b))
		}
		return out
	}
	if got, want := norm(snapsB), norm(snapsOnce); !sameSet(got, want) {
		t.Errorf("B's snapshots differ from the one run's, migrated to B's state schema:\n%s\n%s", read(t, outB, "snapshots.jsonl"), read(t, once, "snapshots.jsonl"))
	}
	if u.schemaB != nil {
		checkNewSchema(t, u.schemaB, snapsB, countersB)
	}
}

// checkNewSchema checks what version B wrote under its newer state schema: the state it wrote
// carries the new version, it migrated version 1 blobs on the way (counted), and version A,
// given B's snapshots, refuses every key whose state B rewrote and leaves that state as it
// was.
func checkNewSchema(t *testing.T, schema *migrate.Registry, snapsB []*pb.StateSnapshot, counters map[string]int64) {
	t.Helper()
	rewritten := map[string]bool{}
	var b bytes.Buffer
	after := filepath.Join(t.TempDir(), "after.jsonl")
	var events bytes.Buffer
	for _, s := range snapsB {
		if s.GetRequestId() != "end-"+string(s.GetEntityKey()) {
			continue
		}
		for _, m := range []interface{ GetStateSchemaVersion() uint32 }{s.GetMemory(), s.GetLlmCache(), s.GetContinuation()} {
			if m.GetStateSchemaVersion() == schema.Current() {
				rewritten[string(s.GetEntityKey())] = true
			}
		}
		protodelim.MarshalTo(&b, s)
		line, _ := protojson.Marshal(&pb.AgentEnvelope{EntityKey: s.GetEntityKey(), EventTimeMs: endExport + 1000,
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("hello again")}})
		events.Write(append(line, '\n'))
	}
	// customer-2 resumed on its tool result and customer-3 on its approval under B: both
	// rewrote their replay cache.
	if !rewritten["customer-2"] || !rewritten["customer-3"] {
		t.Fatalf("B wrote version %d state for %v, want customer-2 and customer-3 among them", schema.Current(), rewritten)
	}
	if counters["state.migrated"] == 0 {
		t.Errorf("B migrated no blob: counters %v", counters)
	}
	restore := filepath.Join(t.TempDir(), "snapshots-b.binpb")
	os.WriteFile(restore, b.Bytes(), 0o644)
	os.WriteFile(after, events.Bytes(), 0o644)
	outA := runAgent(t, support.Name, after, restore)
	refused := map[string]bool{}
	for _, d := range recordsOf(t, outA, pipeline.DeadLettersName, func() *pb.ActivationErrorRecord { return &pb.ActivationErrorRecord{} }) {
		if d.GetReason() == string(records.ReasonStateVersionUnsupported) {
			refused[string(d.GetEntityKey())] = true
		}
	}
	t.Logf("B migrated %d blobs (%d pre-versioned); wrote version %d for %v; A refused %v",
		counters["state.migrated"], counters["state.pre_versioned"], schema.Current(), slices.Sorted(maps.Keys(rewritten)), slices.Sorted(maps.Keys(refused)))
	if fmt.Sprint(refused) != fmt.Sprint(rewritten) {
		t.Errorf("version A refused %v, want exactly the keys B rewrote: %v", refused, rewritten)
	}
}

func sameSet(got, want []string) bool {
	slices.Sort(got)
	return fmt.Sprint(got) == fmt.Sprint(want)
}
