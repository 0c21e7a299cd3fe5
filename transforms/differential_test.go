package transforms_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/examples/devices"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/scenario"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/transforms"
)

// The differential tests run generated scenarios through four executions of the same agent
// and compare every output byte for byte: RunAgent on Prism (the streaming path, stateful
// DoFn and timers, ordering resolution 1 s), RunAgent again with its firings' steps run apart
// from their bundles (ModelConcurrency 8, resolution 1 ms, so that keys have several timers
// in a bundle), RunAgentBatch on Prism (the bounded fast path, resolution 1 ms, three groups
// of keys at once) in the same pipeline, and the in-memory driver alone (resolution 250 ms).

// differentialScenarios is how many scenarios TestDifferential runs, each on its own keys, in
// one pipeline.
const differentialScenarios = 520

func TestDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a large Prism pipeline")
	}
	stats := differential(t, 1, differentialScenarios)
	t.Logf("%d scenarios, %d keys, %d records, %d snapshots; outputs: %v", differentialScenarios, stats.keys, stats.records, stats.snapshots, stats.outputs)
	for _, name := range []string{pipeline.IntentsName, pipeline.FinalsName, pipeline.SnapshotsName, pipeline.DeadLettersName} {
		if stats.outputs[name] == 0 {
			t.Errorf("the scenarios produced no %s: the generator lost its coverage", name)
		}
	}
	for _, reason := range []records.Reason{records.ReasonEnvelopeInvalid, records.ReasonOrphanedResult, records.ReasonApprovalTimeout,
		records.ReasonActivationTimeout, records.ReasonModelError, records.ReasonProposalRefused, records.ReasonRestoreRefused} {
		if stats.reasons[string(reason)] == 0 {
			t.Errorf("no %s dead letter among the scenarios: the generator lost its coverage", reason)
		}
	}
}

// TestDifferentialHandlers runs generated traffic of a handler agent (examples/devices:
// memory rings, native tools with an inline lookup and one or two dispatch intents, results
// in and out of order, late or never, refused arguments, model errors, unreadable readings,
// restored suspensions that a changed handler finds nondeterministic) through the same four
// executions; then the traffic of a handler with durable waits (timers and signals racing
// their answers: early, in time, at the deadline, late, duplicated).
func TestDifferentialHandlers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Prism pipeline")
	}
	t.Run("waits", differentialWaits)
	gen := scenario.NewDevices(3, 160)
	script := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(script, gen.Script(), 0o644); err != nil {
		t.Fatal(err)
	}
	ref, kr := keyringRef(t)
	build := func(config []byte) *drive.Driver {
		a, err := agent.Build(devices.Name, config)
		if err != nil {
			t.Fatal(err)
		}
		return &drive.Driver{Core: drive.Core{Agent: a, Deps: host.Deps{Keyring: kr}, OrderResolutionMs: 250}}
	}
	// The restored keys' suspensions are recorded by the handler with its own prompt; the
	// executions run it with another, so each of their resumptions is nondeterministic.
	set, err := gen.Build(context.Background(), build([]byte(fmt.Sprintf(`{"script":%q}`, script))))
	if err != nil {
		t.Fatal(err)
	}
	config := []byte(fmt.Sprintf(`{"script":%q,"prompt":"You watch sensors; be brief."}`, script))
	stats := compareExecutions(t, devices.Name, config, ref, build(config), set, nil)
	t.Logf("%d keys, %d records, %d snapshots; outputs: %v; dead letters: %v", len(set.Keys), stats.records, stats.snapshots, stats.outputs, stats.reasons)
	for _, name := range []string{pipeline.IntentsName, pipeline.FinalsName, pipeline.SnapshotsName, pipeline.DeadLettersName} {
		if stats.outputs[name] == 0 {
			t.Errorf("the traffic produced no %s: the generator lost its coverage", name)
		}
	}
	for _, reason := range []records.Reason{records.ReasonNondeterministicAgent, records.ReasonActivationTimeout, records.ReasonProposalRefused,
		records.ReasonModelError, records.ReasonEnvelopeInvalid, records.ReasonOrphanedResult} {
		if stats.reasons[string(reason)] == 0 {
			t.Errorf("no %s dead letter in the traffic: the generator lost its coverage", reason)
		}
	}
}

// FuzzDifferential runs a few scenarios of a fuzzed seed through the three executions.
func FuzzDifferential(f *testing.F) {
	f.Add(uint64(7))
	f.Fuzz(func(t *testing.T, seed uint64) { differential(t, seed, 8) })
}

var diffKeys = flag.String("differential.keys", "", "run only the generated keys matching this regexp (to study a divergence)")

// filterSet keeps the records and snapshots of the keys matching re.
func filterSet(t *testing.T, set *scenario.Set, re *regexp.Regexp) *scenario.Set {
	out := &scenario.Set{Script: set.Script, Prices: set.Prices}
	for _, rec := range set.Records {
		if env, _, err := drive.DecodeEnvelope(records.Binary, rec); err == nil && re.Match(env.GetEntityKey()) {
			out.Records = append(out.Records, rec)
		}
	}
	for _, rec := range set.Snapshots {
		if snap, err := drive.DecodeSnapshot(transforms.Binary, rec); err == nil && re.Match(snap.GetEntityKey()) {
			out.Snapshots = append(out.Snapshots, rec)
		}
	}
	for _, rec := range out.Records {
		env := &pb.AgentEnvelope{}
		proto.Unmarshal(rec, env)
		t.Logf("record %s", protojson.Format(env))
	}
	return out
}

type diffStats struct {
	keys, records, snapshots int
	parked                   int
	outputs                  map[string]int
	reasons                  map[string]int
}

func differential(t *testing.T, seed uint64, n int) diffStats {
	return differentialEnding(t, seed, n, false)
}

// TestDifferentialParked runs generated scenarios through the four executions with the keys
// still waiting at the end of the input parked (transforms.AtEndPark, the input ending at its
// last envelope's event time, as pipeline.InputEnd reads it): every execution parks the same
// keys with the same snapshots, and fails closed the same deadlines the input's own event
// time passes.
func TestDifferentialParked(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Prism pipeline")
	}
	stats := differentialEnding(t, 5, 120, true)
	t.Logf("%d keys, %d records; outputs: %v; dead letters: %v; parked %d", stats.keys, stats.records, stats.outputs, stats.reasons, stats.parked)
	if stats.parked == 0 {
		t.Error("no key was parked: the comparison would be vacuous")
	}
	if stats.reasons[string(records.ReasonActivationTimeout)]+stats.reasons[string(records.ReasonApprovalTimeout)] == 0 {
		t.Error("no deadline within the input failed closed: the comparison would miss it")
	}
}

func differentialEnding(t *testing.T, seed uint64, n int, park bool) diffStats {
	ctx := context.Background()
	gen, err := scenario.New(seed, n)
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(script, gen.Script(), 0o644); err != nil {
		t.Fatal(err)
	}
	config := []byte(fmt.Sprintf(`{"script":%q}`, script))
	ref, kr := keyringRef(t)
	a, err := agent.Build(support.Name, config)
	if err != nil {
		t.Fatal(err)
	}
	d := &drive.Driver{Core: drive.Core{Agent: a, Deps: host.Deps{Keyring: kr}, OrderResolutionMs: 250}}
	set, err := gen.Build(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	var end *int64
	if park {
		// The input stops an hour in: the keys whose answers were still to come wait at
		// its end, some deadlines before it have passed.
		cut := &scenario.Set{Script: set.Script, Snapshots: set.Snapshots, Keys: set.Keys}
		e := int64(math.MinInt64)
		for _, rec := range set.Records {
			env, _, err := drive.DecodeEnvelope(records.Binary, rec)
			if err == nil && env.GetEventTimeMs() > scenario.T0+60*60*1000 {
				continue
			}
			if err == nil {
				e = max(e, env.GetEventTimeMs())
			}
			cut.Records = append(cut.Records, rec)
		}
		set, end, d.Park, d.EndMs = cut, &e, true, e
	}
	return compareExecutions(t, support.Name, config, ref, d, set, end)
}

// compareExecutions runs set through the driver d (the agent name with config) and through
// the three Beam executions, and compares every output byte for byte. With parkAt, the Beam
// executions park at the end of the input (d must too).
func compareExecutions(t *testing.T, name string, config []byte, ref string, d *drive.Driver, set *scenario.Set, parkAt *int64) diffStats {
	if *diffKeys != "" {
		set = filterSet(t, set, regexp.MustCompile(*diffKeys))
	}
	want := driveSet(t, d, set)

	stream, async, batch := t.TempDir(), t.TempDir(), t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	keyed, dead := transforms.DecodeEnvelopes(s, transforms.Binary, beam.CreateList(s, set.Records))
	restores, restoreDead := transforms.DecodeSnapshots(s, transforms.Binary, beam.CreateList(s, set.Snapshots))
	keyed = beam.Flatten(s, keyed, restores)
	opts := transforms.Options{Agent: name, Config: config, Keyring: ref, OrderResolutionMs: 1000, Prices: set.Prices}
	if parkAt != nil {
		opts.AtEnd, opts.InputEndMs = transforms.AtEndPark, parkAt
	}
	writeOutputs(s, stream, transforms.RunAgent(s, opts, keyed), dead, restoreDead)
	opts.OrderResolutionMs = 1
	concurrent := opts
	concurrent.ModelConcurrency = 8
	sa := s.Scope("concurrent")
	writeOutputs(sa, async, transforms.RunAgent(sa, concurrent, keyed), dead, restoreDead)
	opts.BatchWorkers = 3 // groups of keys at once and out of step, whatever the machine's cores
	writeOutputs(s, batch, transforms.RunAgentBatch(s, opts, keyed), dead, restoreDead)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	st := diffStats{keys: len(set.Keys), records: len(set.Records), snapshots: len(set.Snapshots), outputs: map[string]int{}, reasons: map[string]int{}}
	for _, o := range pipeline.Outputs() {
		w := want[o.Name]
		st.outputs[o.Name] = len(w)
		for path, dir := range map[string]string{"RunAgent": stream, "RunAgent/concurrent": async, "RunAgentBatch": batch} {
			got := readRecords(t, filepath.Join(dir, o.Name+".binpb"))
			if i := firstDifference(got, w); i >= 0 {
				t.Errorf("%s: %s differs from the driver at record %d of %d/%d (keys %q):\n  %s: %s\n  driver: %s",
					o.Name, path, i, len(got), len(w), differingKeys(o.Type, got, w), path, render(o.Type, got, i), render(o.Type, w, i))
			}
		}
	}
	for _, b := range want[pipeline.SnapshotsName] {
		if snap, err := drive.DecodeSnapshot(transforms.Binary, b); err == nil && snap.GetRequestId() == drive.ParkedRequestID {
			st.parked++
		}
	}
	for _, b := range want[pipeline.DeadLettersName] {
		rec := &pb.ActivationErrorRecord{}
		proto.Unmarshal(b, rec)
		st.reasons[rec.GetReason()]++
	}
	return st
}

func writeOutputs(s beam.Scope, dir string, out transforms.Outputs, dead ...beam.PCollection) {
	cols := map[string]beam.PCollection{pipeline.IntentsName: out.Intents, pipeline.TracesName: out.Traces,
		pipeline.FinalsName: out.Finals, pipeline.SnapshotsName: out.Snapshots, pipeline.DeadLettersName: beam.Flatten(s, append(dead, out.DeadLetters)...)}
	for _, o := range pipeline.Outputs() {
		pipeline.WriteRecords(s, dir, o.Name, o.Type, cols[o.Name])
	}
}

// driveSet runs a generated set through the driver alone: decoding as DecodeEnvelopes and
// DecodeSnapshots do, then each key's values in order. It returns each output's records,
// sorted as the file sinks sort them.
func driveSet(t *testing.T, d *drive.Driver, set *scenario.Set) map[string][][]byte {
	t.Helper()
	out := map[string][][]byte{}
	names := map[int64]string{records.OutIntent: pipeline.IntentsName, records.OutTrace: pipeline.TracesName, records.OutFinal: pipeline.FinalsName,
		records.OutSnapshot: pipeline.SnapshotsName, records.OutDeadLetter: pipeline.DeadLettersName}
	emit := func(kind int64, b []byte) { out[names[kind]] = append(out[names[kind]], b) }
	values := map[string][][]byte{}
	var keys []string
	add := func(key, v []byte) {
		if _, ok := values[string(key)]; !ok {
			keys = append(keys, string(key))
		}
		values[string(key)] = append(values[string(key)], v)
	}
	for _, rec := range set.Snapshots {
		snap, err := drive.DecodeSnapshot(transforms.Binary, rec)
		if err != nil {
			emit(records.OutDeadLetter, drive.Marshal(drive.DeadLetter(snap.GetEntityKey(), 0, records.ReasonRestoreRefused, err, rec)))
			continue
		}
		add(snap.GetEntityKey(), drive.RestoreValue(snap))
	}
	for _, rec := range set.Records {
		env, canon, err := drive.DecodeEnvelope(records.Binary, rec)
		if err != nil {
			emit(records.OutDeadLetter, drive.Marshal(drive.DeadLetter(env.GetEntityKey(), env.GetEventTimeMs(), records.ReasonEnvelopeInvalid, err, rec)))
			continue
		}
		add(drive.Route(d.Agent.Shards(), env.GetEntityKey(), canon)) // as RunAgent keys a sharded agent's events
	}
	// The tenant budget's admission (when the agent declares one) runs across keys first, as
	// the admission stage before RunAgent and RunAgentBatch does.
	ids, vals := make([][]byte, len(keys)), make([][][]byte, len(keys))
	for i, k := range keys {
		ids[i], vals[i] = []byte(k), values[k]
	}
	admitted, err := drive.Admit(d.Agent, set.Prices, ids, vals)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range admitted {
		d.Run(context.Background(), ids[i], v, emit)
	}
	for _, v := range out {
		slices.SortFunc(v, bytes.Compare)
	}
	return out
}

func readRecords(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, data, err = records.Split(data) // the typed file's header
	if err != nil {
		t.Fatal(err)
	}
	out, err := records.Frames(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// firstDifference is the index of the first record that differs, or -1.
func firstDifference(a, b [][]byte) int {
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || !bytes.Equal(a[i], b[i]) {
			return i
		}
	}
	return -1
}

// render shows record i of recs as protojson.
func render(typ protoreflect.FullName, recs [][]byte, i int) string {
	if i >= len(recs) {
		return "(none)"
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(typ)
	if err != nil {
		return err.Error()
	}
	m := mt.New().Interface()
	if err := proto.Unmarshal(recs[i], m); err != nil {
		return err.Error()
	}
	return protojson.Format(m)
}

// differingKeys lists the entity keys whose records differ between a and b.
func differingKeys(typ protoreflect.FullName, a, b [][]byte) []string {
	byKey := func(recs [][]byte) map[string]string {
		m := map[string]string{}
		mt, _ := protoregistry.GlobalTypes.FindMessageByName(typ)
		for _, r := range recs {
			msg := mt.New()
			proto.Unmarshal(r, msg.Interface())
			k := string(msg.Get(msg.Descriptor().Fields().ByName("entity_key")).Bytes())
			m[k] += string(r)
		}
		return m
	}
	ka, kb := byKey(a), byKey(b)
	var keys []string
	for k := range ka {
		if ka[k] != kb[k] {
			keys = append(keys, k)
		}
	}
	for k := range kb {
		if _, ok := ka[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
