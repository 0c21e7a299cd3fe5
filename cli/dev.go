package cli

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/consoleserve"
	"github.com/beamagents/beamagents/internal/devloop"
	"github.com/beamagents/beamagents/internal/runstate"
)

func init() {
	register(&command{name: "dev", summary: "develop an agent locally: streaming on Prism, its tools, the console and approvals, state kept across restarts", run: runDev})
}

// devRunFlags are the flags of run's table that dev takes too (declared once, in runFlags):
// the agent, its configuration, the keyring and result verification, the long-term memory
// store, and the whole model group.
func devRunFlags() []runFlag {
	names := map[string]bool{"agent": true, "agent_config": true, "keyring": true, "verify_results": true, "memory_store": true}
	var out []runFlag
	model := false
	for _, f := range runFlags {
		if f.heading != "" {
			model = f.heading == "The model"
			continue
		}
		if f.define != nil && (model || names[f.name]) {
			out = append(out, f)
		}
	}
	return out
}

// devUsage is dev's usage line.
const devUsage = "dev --agent NAME [--state_dir DIR] [--listen ADDR] [--follow FILE] [--model openai --base_url URL --api_key REF ...] [--keyring REF] [--memory_store REF]"

func runDev(e *env, args []string) int {
	fs := newFlags(e, "dev", devUsage)
	flags := devRunFlags()
	for _, f := range flags {
		f.define(fs)
	}
	stateDir := fs.String("state_dir", "", "directory keeping every key's state, the effector's records and the console's store across restarts (default: beamagents/dev/AGENT under the user cache directory)")
	listen := fs.String("listen", "127.0.0.1:8089", "the console's address (loopback): pages, approvals, and the JSON API that takes events and decisions")
	follow := fs.String("follow", "", "a JSON Lines file of events ({\"key\":…,\"body\":…} per line) read as it grows; where it was read to is kept in the state directory")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	s := &runSettings{}
	for _, f := range flags {
		f.apply(s)
	}
	checks := []check{noArgs(fs), required("agent", s.Agent, "a registered agent (beamagents help lists the commands; run --help the flags)")}
	for _, f := range flags {
		checks = append(checks, f.check(s))
	}
	checks = append(checks, when(!consoleserve.Loopback(*listen), func() error {
		return refuseFlag("listen", "dev serves on loopback only (for example 127.0.0.1:8089): its console has no sign-in beyond a generated password")
	}), when(*follow != "", func() error {
		if st, err := os.Stat(*follow); err == nil && st.IsDir() {
			return refuseFlag("follow", "%s is a folder, not a file", *follow)
		}
		return nil
	}))
	if code, ok := checkFlags(e, checks...); !ok {
		return code
	}
	dir := *stateDir
	if dir == "" {
		var err error
		if dir, err = devloop.DefaultStateDir(s.Agent); err != nil {
			e.errorf("%v", err)
			return 2
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		e.errorf("--state_dir: %v", unwrapPath(err))
		return 2
	}
	if err := devDefaults(s, dir); err != nil {
		e.errorf("%v", err)
		return 1
	}
	if err := s.finish(); err != nil {
		e.errorf("%v", err)
		return 2
	}
	if modelless(s.Options) {
		e.errorf(noModelHelp, s.Agent, s.Model.Provider)
		return 2
	}
	if code := checkSecretRefs(e, "prism", s.Options); code != 0 {
		return code
	}
	beam.Init()
	return serveDev(e, devloop.Config{Options: s.Options, StateDir: dir, Listen: *listen, Follow: *follow, User: "dev", Password: devloop.RandomHex(8)}, 0)
}

// devDefaults gives a dev run without --keyring or --memory_store its own, in the state
// directory dir.
func devDefaults(s *runSettings, dir string) error {
	if s.Keyring == "" {
		ref, err := devloop.KeyringRef(dir)
		if err != nil {
			return err
		}
		s.Keyring = ref
	}
	if s.MemoryStore == "" {
		s.MemoryStore = devloop.MemoryStoreRef(dir)
	}
	return nil
}

// serveDev runs the dev loop (devloop.Serve) until interrupted, or for at most timeout when
// it is not zero, with the keyring its options name.
func serveDev(e *env, c devloop.Config, timeout time.Duration) int {
	quietRunner(e)
	ctx, stop := effectorContext()
	defer stop()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	kr, err := intent.LoadKeyring(c.Options.Keyring)
	if err != nil {
		e.errorf("--keyring: %v", redact(err, c.Options.Keyring))
		return 2
	}
	c.Keyring, c.Stdout, c.Stderr, c.Errorf = kr, e.stdout, e.stderr, e.errorf
	err = devloop.Serve(ctx, c)
	var refused *runstate.RefusedError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, devloop.ErrFailed):
		return 1
	case errors.As(err, &refused):
		e.errorf("%v", err)
		return 2
	}
	e.errorf("%v", err)
	return 1
}
