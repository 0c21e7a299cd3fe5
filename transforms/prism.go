package transforms

import (
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
)

// PrismNoSplit is the Prism experiment that turns off its dynamic splitting of bundles.
//
// Prism splits a slow bundle and hands the residual elements to a new bundle, releasing their
// keys although the primary bundle, still running, holds elements of the same keys. Two
// bundles of one key then run at once, each on its own copy of the key's state, and the one
// committed last erases the other's writes: a stateful step loses envelopes (the differential
// tests caught it on a loaded machine). A keyed stateful step must own its key, so every
// pipeline holding RunAgent runs with this experiment. Other runners ignore it.
const PrismNoSplit = "prism_disable_sdf_split"

// requirePrismNoSplit adds PrismNoSplit to the job's experiments (the --experiments flag),
// once. Pipelines are submitted with the flags of the launching process, after construction.
func requirePrismNoSplit() {
	exps := jobopts.GetExperiments()
	if slices.Contains(exps, PrismNoSplit) {
		return
	}
	*jobopts.Experiments = strings.Join(append(exps, PrismNoSplit), ",")
}
