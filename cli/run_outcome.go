package cli

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
)

// nothingSucceeded returns, for a bounded run that wrote dead letters and not one final reply,
// intent or snapshot, the line that says so and names the commonest reason (with an example
// of its details when the run wrote the dead letters to one file); "" for any other run. The
// counts are the run's counters, which count the records of its outputs
// (pipeline.CountRecords).
func nothingSucceeded(res *pipeline.Result, opts pipeline.Options) string {
	type reason struct {
		name string
		n    int64
	}
	var reasons []reason
	total := int64(0)
	for name, n := range res.Counters {
		if r, ok := strings.CutPrefix(name, "dead_letters."); ok && n > 0 {
			reasons = append(reasons, reason{r, n})
			total += n
		}
	}
	if total == 0 || res.Counters["intents"]+res.Counters["final_replies"]+res.Counters["snapshots"] > 0 {
		return ""
	}
	commonest := slices.MinFunc(reasons, func(a, b reason) int { return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.name, b.name)) })
	letters := "dead letters"
	if total == 1 {
		letters = "dead letter"
	}
	why := fmt.Sprintf("nothing succeeded: %d %s and no final reply, intent or snapshot; the commonest reason is %s (%d of %d)",
		total, letters, commonest.name, commonest.n, total)
	if opts.OutputDir != "" && opts.Shards == 0 {
		if d := firstDeadLetter(opts.OutputDir, commonest.name); d != nil {
			why += fmt.Sprintf(", for example %q (%s)", d.GetDetail(), filepath.Join(opts.OutputDir, pipeline.DeadLettersName+".jsonl"))
		}
	}
	return why
}

// firstDeadLetter returns the first dead letter of reason in the dead letters file of dir (its
// records are sorted), or nil.
func firstDeadLetter(dir, reason string) *pb.ActivationErrorRecord {
	dead, err := readOutput(dir, pipeline.DeadLettersName, func() *pb.ActivationErrorRecord { return &pb.ActivationErrorRecord{} })
	if err != nil {
		return nil
	}
	for _, d := range dead {
		if d.GetReason() == reason {
			return d
		}
	}
	return nil
}
