package cli

import (
	"context"
	"flag"
	"fmt"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/pipeline"
)

// runCheckFlags are the run flags of the start-up checks below.
var runCheckFlags struct {
	once          sync.Once
	allowUnsigned *bool
	verifyResults *string
}

func defineRunCheckFlags() {
	runCheckFlags.once.Do(func() {
		runCheckFlags.allowUnsigned = flag.Bool("allow_unsigned_intents", false,
			"run an agent that emits intents without --keyring: its intents are emitted unsigned "+
				"(an effector verifying with --verify off or permissive accepts them; require refuses them)")
		runCheckFlags.verifyResults = flag.String("verify_results", "",
			"verification of tool results and approvals against --keyring: off, permissive or require "+
				"(default: require with --keyring, off without one)")
	})
}

// resultsMode resolves --verify_results: by default require when the run has a keyring and off
// when it has none (its intents are unsigned too, and nothing could be verified).
func resultsMode(flagValue, keyring string) (string, error) {
	if flagValue == "" {
		if keyring == "" {
			return "off", nil
		}
		return "require", nil
	}
	m, err := intent.ParseMode(flagValue)
	if err != nil {
		return "", fmt.Errorf("--verify_results: %v", err)
	}
	if m != intent.ModeOff && keyring == "" {
		return "", fmt.Errorf("--verify_results %s needs --keyring (the key that verifies results and approvals), or --verify_results off", m)
	}
	return m.String(), nil
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
