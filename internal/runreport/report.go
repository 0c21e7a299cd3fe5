package runreport

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
)

// Counters prints the run's counters by name; dead_letters becomes the sum of the
// dead_letters.<reason> counters when there are any.
func Counters(w io.Writer, res *pipeline.Result) {
	// dead_letters counts the agent's own; dead_letters.<reason> every dead letter of the run
	// (undecodable input included): the headline is their sum.
	total, byReason := int64(0), false
	for n, v := range res.Counters {
		if strings.HasPrefix(n, "dead_letters.") {
			total, byReason = total+v, true
		}
	}
	if byReason {
		res.Counters["dead_letters"] = total
	}
	for _, n := range slices.Sorted(maps.Keys(res.Counters)) {
		fmt.Fprintf(w, "  %-30s %d\n", n, res.Counters[n])
	}
}

// Distributions prints the run's distribution metrics by name.
func Distributions(w io.Writer, res *pipeline.Result) {
	for _, n := range slices.Sorted(maps.Keys(res.Distributions)) {
		d := res.Distributions[n]
		mean := int64(0)
		if d.Count > 0 {
			mean = d.Sum / d.Count
		}
		fmt.Fprintf(w, "  %-30s n=%d mean=%d min=%d max=%d\n", n, d.Count, mean, d.Min, d.Max)
	}
}

// NothingSucceeded returns, for a bounded run that wrote dead letters and not one final reply,
// intent or snapshot, the line that says so and names the commonest reason (with an example
// of its details when the run wrote the dead letters to one file); "" for any other run. The
// counts are the run's counters, which count the records of its outputs
// (pipeline.CountRecords).
func NothingSucceeded(res *pipeline.Result, opts pipeline.Options) string {
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
