package runreport

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/records"
)

// readOutput reads NAME.binpb of dir (a typed record file) into messages of m's type.
func readOutput[M proto.Message](dir, name string, newM func() M) ([]M, error) {
	return records.ReadMessages([]string{filepath.Join(dir, name+".binpb")}, newM)
}

// Demo prints the demo's summary of the run res, whose outputs are in dir: what it emitted,
// how many intents verify with kr, and its wall time. Intents that do not verify are an
// error.
func Demo(w io.Writer, res *pipeline.Result, dir string, kr *intent.Keyring, wall time.Duration) error {
	intents, err := readOutput(dir, pipeline.IntentsName, func() *pb.ToolIntent { return &pb.ToolIntent{} })
	if err != nil {
		return err
	}
	finals, err := readOutput(dir, pipeline.FinalsName, func() *pb.FinalReply { return &pb.FinalReply{} })
	if err != nil {
		return err
	}
	snaps, err := readOutput(dir, pipeline.SnapshotsName, func() *pb.StateSnapshot { return &pb.StateSnapshot{} })
	if err != nil {
		return err
	}
	dead, err := readOutput(dir, pipeline.DeadLettersName, func() *pb.ActivationErrorRecord { return &pb.ActivationErrorRecord{} })
	if err != nil {
		return err
	}
	traces, err := readOutput(dir, pipeline.TracesName, func() *pb.TraceEvent { return &pb.TraceEvent{} })
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nactivations       %d (model calls %d)\n", res.Counters["activations"], res.Counters["model_calls"])
	kinds := map[string]int{}
	verified := 0
	for _, ti := range intents {
		k := ti.GetKind().String()
		if ti.GetAttempt() > 0 {
			k += " (escalation)"
		}
		kinds[k]++
		if intent.Verify(ti, kr) == intent.OK {
			verified++
		}
	}
	fmt.Fprintf(w, "intents           %d, by kind: %s\n", len(intents), countList(kinds))
	fmt.Fprintf(w, "signatures        %d of %d verify (HMAC-SHA256, key %q)\n", verified, len(intents), kr.Active())
	fmt.Fprintf(w, "final replies     %d\n", len(finals))
	fmt.Fprintf(w, "state snapshots   %d\n", len(snaps))
	reasons := map[string]int{}
	for _, d := range dead {
		reasons[d.GetReason()]++
	}
	fmt.Fprintf(w, "dead letters      %d, by reason: %s\n", len(dead), countList(reasons))
	fmt.Fprintf(w, "trace events      %d\n", len(traces))
	fmt.Fprintf(w, "wall time         %s\n", wall.Round(time.Millisecond))
	fmt.Fprintf(w, "outputs           %s/{intents,traces,finals,snapshots,dead_letters}.{jsonl,binpb}\n", dir)
	if verified != len(intents) {
		return fmt.Errorf("%d intents do not verify", len(intents)-verified)
	}
	return nil
}

// countList is "KEY N, …" by key, or "none".
func countList(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
