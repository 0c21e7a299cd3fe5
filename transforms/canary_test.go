package transforms_test

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/canary"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/tracing"
	"github.com/beamagents/beamagents/transforms"
)

// supportCandidate is the support agent under another name: a candidate whose runs the
// traces tell apart from the baseline's.
const supportCandidate = "support-candidate"

func init() { agent.Register(supportCandidate, support.NewNamed(supportCandidate)) }

// exampleLines are the support example's envelopes (JSON Lines, one of them broken).
func exampleLines() [][]byte {
	return bytes.Split(bytes.TrimSpace(support.Envelopes), []byte("\n"))
}

// agentsByKey maps each key to the agents its traces name.
func agentsByKey(traces []*pb.TraceEvent) map[string][]string {
	m := map[string][]string{}
	for _, e := range traces {
		k, a := string(e.GetEntityKey()), e.GetAttributes()[tracing.AttrAgent]
		if !slices.Contains(m[k], a) {
			m[k] = append(m[k], a)
		}
	}
	return m
}

// With a 50% canary over the example traffic, the keys in the slice run on the candidate and
// the others on the baseline, on Prism exactly as in the driver.
func TestCanaryOnPrism(t *testing.T) {
	opts := transforms.Options{Agent: support.Name, AllowUnsignedIntents: true,
		Canary: transforms.Canary{Agent: supportCandidate, Percent: 50}}
	half, _ := canary.FromPercent(50)

	dir := t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	keyed, dead := transforms.DecodeEnvelopes(s, transforms.JSON, beam.CreateList(s, exampleLines()))
	out := transforms.RunAgent(s, opts, keyed)
	cols := map[string]beam.PCollection{pipeline.IntentsName: out.Intents, pipeline.TracesName: out.Traces,
		pipeline.FinalsName: out.Finals, pipeline.SnapshotsName: out.Snapshots, pipeline.DeadLettersName: beam.Flatten(s, dead, out.DeadLetters)}
	for _, o := range pipeline.Outputs() {
		pipeline.WriteRecords(s, dir, o.Name, o.Type, cols[o.Name])
	}
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	beamOut := map[string][][]byte{}
	for _, o := range pipeline.Outputs() {
		beamOut[o.Name] = readRecords(t, filepath.Join(dir, o.Name+".binpb"))
		slices.SortFunc(beamOut[o.Name], bytes.Compare)
	}
	var traces []*pb.TraceEvent
	for _, b := range beamOut[pipeline.TracesName] {
		e := &pb.TraceEvent{}
		if err := proto.Unmarshal(b, e); err != nil {
			t.Fatal(err)
		}
		traces = append(traces, e)
	}
	byKey := agentsByKey(traces)
	if len(byKey) != 5 {
		t.Fatalf("traces of %d keys, want 5: %v", len(byKey), byKey)
	}
	cands := 0
	for k, agents := range byKey {
		want := support.Name
		if half.Contains([]byte(k)) {
			want, cands = supportCandidate, cands+1
		}
		if len(agents) != 1 || agents[0] != want {
			t.Errorf("key %s ran on %v, want %s", k, agents, want)
		}
	}
	if cands == 0 || cands == len(byKey) {
		t.Errorf("%d of %d keys on the candidate: the slice should split the example", cands, len(byKey))
	}
	// customer-4's refund waits for an approval that never comes: four replies.
	if n := len(beamOut[pipeline.FinalsName]); n != 4 {
		t.Errorf("%d finals, want 4", n)
	}

	// The driver, over the same routing agent, emits the same bytes.
	base, err := agent.Build(support.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	cand, err := agent.Build(supportCandidate, nil)
	if err != nil {
		t.Fatal(err)
	}
	routed, err := host.WithCanary(base, cand, half)
	if err != nil {
		t.Fatal(err)
	}
	d := &drive.Driver{Core: drive.Core{Agent: routed, Deps: host.Deps{AllowUnsigned: true}, OrderResolutionMs: transforms.DefaultOrderMs}}
	driven := driveLines(t, d, exampleLines())
	for _, name := range []string{pipeline.TracesName, pipeline.FinalsName, pipeline.IntentsName} {
		if !slices.EqualFunc(beamOut[name], driven[name], bytes.Equal) {
			t.Errorf("%s: Prism wrote %d records, the driver %d, not the same bytes", name, len(beamOut[name]), len(driven[name]))
		}
	}
}

// driveLines runs JSON envelope lines through d, key by key, and returns each output's
// records sorted.
func driveLines(t *testing.T, d *drive.Driver, lines [][]byte) map[string][][]byte {
	t.Helper()
	names := map[int64]string{records.OutIntent: pipeline.IntentsName, records.OutTrace: pipeline.TracesName, records.OutFinal: pipeline.FinalsName,
		records.OutSnapshot: pipeline.SnapshotsName, records.OutDeadLetter: pipeline.DeadLettersName}
	out := map[string][][]byte{}
	values := map[string][][]byte{}
	var keys []string
	for _, l := range lines {
		env, canon, err := drive.DecodeEnvelope(records.JSON, l)
		if err != nil {
			continue // the broken line: a dead letter of the decoder
		}
		k := string(env.GetEntityKey())
		if _, ok := values[k]; !ok {
			keys = append(keys, k)
		}
		values[k] = append(values[k], canon)
	}
	for _, k := range keys {
		d.Run(context.Background(), []byte(k), values[k], func(kind int64, b []byte) { out[names[kind]] = append(out[names[kind]], b) })
	}
	for _, v := range out {
		slices.SortFunc(v, bytes.Compare)
	}
	return out
}

// A canary that cannot share the baseline's state, or names the baseline, is refused when
// the pipeline is built.
func TestCanaryOptionsCheck(t *testing.T) {
	for name, c := range map[string]transforms.Canary{
		"itself":     {Agent: support.Name, Percent: 10},
		"unknown":    {Agent: "no-such-agent", Percent: 10},
		"over 100":   {Agent: supportCandidate, Percent: 101},
		"below zero": {Agent: supportCandidate, Percent: -1},
	} {
		if err := (transforms.Options{Agent: support.Name, Canary: c}).Check(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := (transforms.Options{Agent: support.Name, Canary: transforms.Canary{Agent: supportCandidate, Percent: 12.5}}).Check(); err != nil {
		t.Errorf("a valid canary: %v", err)
	}
}

// The canary adds no transform, state id, timer or coder: a relaunch with another
// percentage, or none, is an --update of the pinned pipeline.
func TestCanaryKeepsTheManifest(t *testing.T) {
	for name, o := range manifestConfigs() {
		if o.Agent != support.Name {
			continue // the candidate is a variant of the support agent
		}
		plain, err := pipeline.BuildManifest(o)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []float64{0, 5, 50, 100} {
			o.Canary = transforms.Canary{Agent: supportCandidate, Percent: p}
			m, err := pipeline.BuildManifest(o)
			if err != nil {
				t.Fatal(err)
			}
			if d := m.Diff(plain, nil); len(d) > 0 {
				t.Errorf("%s with a %v%% canary differs from the pinned pipeline:\n%v", name, p, d)
			}
		}
	}
}
