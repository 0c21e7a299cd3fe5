package cli

import (
	"fmt"
	"maps"
	"slices"

	"github.com/beamagents/beamagents/pipeline"
)

// printDistributions prints the run's distribution metrics after its counters.
func printDistributions(e *env, res *pipeline.Result) {
	for _, n := range slices.Sorted(maps.Keys(res.Distributions)) {
		d := res.Distributions[n]
		mean := int64(0)
		if d.Count > 0 {
			mean = d.Sum / d.Count
		}
		fmt.Fprintf(e.stdout, "  %-30s n=%d mean=%d min=%d max=%d\n", n, d.Count, mean, d.Min, d.Max)
	}
}
