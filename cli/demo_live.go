package cli

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/devloop"
)

type liveFlags struct {
	on      *bool
	console *string
	timeout *time.Duration
}

func defineLiveFlags(fs *flag.FlagSet) liveFlags {
	return liveFlags{
		on:      fs.Bool("live", false, "run the whole loop live: Pub/Sub emulator, streaming pipeline, effector and approval console"),
		console: fs.String("console", "127.0.0.1:8089", "with --live: the approval console's address"),
		timeout: fs.Duration("live_timeout", 30*time.Minute, "with --live: give up after this long"),
	}
}

// liveConsoleReady, when set (by tests), is called with the console's URL and credentials
// once the live demo is up, as a person would open the page.
var liveConsoleReady func(url, user, password string)

// runLiveDemo is `beamagents dev` running the bundled agent (devloop.Serve): Pub/Sub (the client
// library's in-process emulator), the pipeline streaming on Prism, the effector running the
// example's tools, and the console (approvals included) on a loopback port, with its state
// under dir. It publishes the demo's events stamped now and ends when every entity that got
// one has a final reply or a dead letter, or on Ctrl-C.
func runLiveDemo(e *env, dir, consoleAddr string, timeout time.Duration) int {
	opts, _, err := prepareDemo(dir)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	var events []*pb.AgentEnvelope
	entities := map[string]bool{}
	for _, line := range bytes.Split(demo.Envelopes, []byte("\n")) {
		env := &pb.AgentEnvelope{}
		if protojson.Unmarshal(line, env) != nil || env.GetExternalEvent() == nil {
			continue
		}
		events = append(events, env)
		entities[string(env.GetEntityKey())] = true
	}
	stateDir := filepath.Join(dir, "dev")
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		e.errorf("%v", err)
		return 1
	}
	return serveDev(e, devloop.Config{
		Options: opts, StateDir: stateDir, Listen: consoleAddr, User: "demo", Password: devloop.RandomHex(8),
		Events: events, Until: entities, Ready: liveConsoleReady,
		Banner: fmt.Sprintf("beamagents demo --live: agent %q streaming on Prism over an in-process Pub/Sub emulator (beamagents dev with the bundled agent); %d events", demo.Agent, len(events)),
	}, timeout)
}
