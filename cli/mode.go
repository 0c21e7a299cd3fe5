package cli

import (
	"flag"
	"sync"

	"github.com/beamagents/beamagents/pipeline"
)

// modeFlags are the run flags of the bounded fast path.
var modeFlags struct {
	once sync.Once
	mode *string
}

func defineModeFlags() {
	modeFlags.once.Do(func() {
		modeFlags.mode = flag.String("mode", string(pipeline.Streaming),
			"streaming (keyed state and timers) or batch (bounded input only: group each key's envelopes and run them in memory; the same outputs, faster)")
	})
}

func runMode() pipeline.Mode { return pipeline.Mode(*modeFlags.mode) }
