package cli

import (
	"context"
	"flag"
	"fmt"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/pipeline"
)

// runCheckFlags are the run flags of the start-up checks below.
var runCheckFlags struct {
	once          sync.Once
	allowUnsigned *bool
}

func defineRunCheckFlags() {
	runCheckFlags.once.Do(func() {
		runCheckFlags.allowUnsigned = flag.Bool("allow_unsigned_intents", false,
			"run an agent that emits intents without --keyring: its intents are emitted unsigned "+
				"(an effector verifying with --verify off or permissive accepts them; require refuses them)")
	})
}

// noKeyringHelp explains the refusal to run an agent that emits intents without a keyring.
const noKeyringHelp = `agent %q emits tool or approval intents and --keyring is not set, so every intent would be
dead-lettered as signing_failed. Pass --keyring env:VAR or file:PATH to sign them, or
--allow_unsigned_intents to emit them unsigned (an effector verifying with --verify off or
--verify permissive accepts unsigned intents; --verify require refuses them).`

// unsignedIntents reports whether the run would emit intents it cannot sign without the
// user's consent. An agent that does not build is left to the pipeline to report.
func unsignedIntents(o pipeline.Options) bool {
	if o.Keyring != "" || o.AllowUnsignedIntents {
		return false
	}
	a, err := agent.Build(o.Agent, o.Config)
	return err == nil && a.EmitsIntents()
}

// checkGlob fails unless glob, the value of flag name, matches at least one file.
func checkGlob(ctx context.Context, name, glob string) error {
	fs, err := filesystem.New(ctx, glob)
	if err != nil {
		return fmt.Errorf("--%s %q: %v", name, glob, err)
	}
	defer fs.Close()
	files, err := fs.List(ctx, glob)
	if err != nil {
		return fmt.Errorf("--%s %q: listing the files: %v", name, glob, err)
	}
	if len(files) == 0 {
		return fmt.Errorf("--%s %q matches no file: nothing to run", name, glob)
	}
	return nil
}
