package pipeline_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protodelim"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
)

// readIntents reads the intents a run wrote under dir.
func readIntents(t *testing.T, dir string) []*pb.ToolIntent {
	t.Helper()
	r := bytes.NewReader(body(t, read(t, dir, pipeline.IntentsName+".binpb")))
	var out []*pb.ToolIntent
	for r.Len() > 0 {
		ti := &pb.ToolIntent{}
		if err := protodelim.UnmarshalFrom(r, ti); err != nil {
			t.Fatal(err)
		}
		out = append(out, ti)
	}
	return out
}

// Migration: the same envelopes yield the same intent ids whether one pipeline runs them
// straight through or a first pipeline runs the first half and exports its keys, and a
// second pipeline restores the snapshots and runs the rest, as when one runtime is drained
// and another takes over the subscription. Both runs are then fed, together, to an effector:
// since the effector deduplicates by intent id (an id it has seen is not executed again,
// whatever the attempt), equal ids mean each tool runs once. The test asserts that
// condition: the two runs' intents agree id for id, and the union of everything both runs
// emitted holds exactly as many distinct TOOL ids as the straight run's tools.
func TestMigrationKeepsIntentIDs(t *testing.T) {
	lines := bytes.Split(bytes.TrimSpace(support.Envelopes), []byte("\n"))
	// customer-2: lines 1 (event) and 2 (tool result); customer-3: lines 3 (event), 4 (approval)
	// and 5 (tool result of the gated call). The split falls between the events that suspend
	// the keys and the envelopes that resume them.
	join := func(ls ...[]byte) []byte { return append(bytes.Join(ls, []byte("\n")), '\n') }
	exports := []byte(`{"entityKey":"Y3VzdG9tZXItMg==","eventTimeMs":"1767225650000","exportRequest":{"requestId":"handover"}}` + "\n" +
		`{"entityKey":"Y3VzdG9tZXItMw==","eventTimeMs":"1767225650000","exportRequest":{"requestId":"handover"}}`)
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	all := write("all.jsonl", join(lines[1], lines[2], lines[3], lines[4], lines[5]))
	first := write("first.jsonl", join(lines[1], lines[3], exports))
	rest := write("rest.jsonl", join(lines[2], lines[4], lines[5]))

	straightOut, _ := runSupport(t, all, "")
	firstOut, res := runSupport(t, first, "")
	// Both keys suspend; the end of this bounded input then fires their deadlines, which
	// re-emit the pending intents (same ids) and fail closed after the handover snapshot.
	if res.Counters["model_calls"] != 2 || res.Counters["dead_letters"] != 2 {
		t.Fatalf("first half: counters %v", res.Counters)
	}
	secondOut, res := runSupport(t, rest, filepath.Join(firstOut, pipeline.SnapshotsName+".binpb"))
	if res.Counters["dead_letters"] != 0 {
		t.Fatalf("second half: counters %v\n%s", res.Counters, read(t, secondOut, pipeline.DeadLettersName+".jsonl"))
	}

	straight := readIntents(t, straightOut)
	migrated := append(readIntents(t, firstOut), readIntents(t, secondOut)...)
	byID := func(list []*pb.ToolIntent) map[string]*pb.ToolIntent {
		m := map[string]*pb.ToolIntent{}
		for _, ti := range list {
			m[ti.GetIntentId()] = ti
		}
		return m
	}
	a, b := byID(straight), byID(migrated)
	if len(a) != 3 || len(a) != len(b) {
		t.Fatalf("%d distinct intent ids straight through, %d across the migration", len(a), len(b))
	}
	for id, ti := range a {
		other, ok := b[id]
		if !ok {
			t.Fatalf("intent %s (%s, %q seq %d step %d) has another id after the migration", id, ti.GetToolName(), ti.GetEntityKey(), ti.GetSeq(), ti.GetStepIndex())
		}
		if other.GetToolName() != ti.GetToolName() || other.GetArgsJson() != ti.GetArgsJson() || other.GetKind() != ti.GetKind() ||
			!bytes.Equal(other.GetTraceId(), ti.GetTraceId()) {
			t.Fatalf("intent %s differs:\n%v\n%v", id, ti, other)
		}
	}
	// An effector receiving both runs' intents executes each distinct TOOL id once.
	emitted, executed := 0, map[string]bool{}
	for _, ti := range append(straight, migrated...) {
		if ti.GetKind() == pb.ToolIntent_TOOL {
			emitted++
			executed[ti.GetIntentId()] = true
		}
	}
	if len(executed) != 2 || emitted < 2*len(executed) {
		t.Fatalf("%d TOOL intents emitted by both runs, %d distinct ids", emitted, len(executed))
	}
}
