package cli

import (
	"encoding/base64"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pubsub/wire"
)

// sleeperAgent waits an hour of event time (a durable timer), then replies.
const sleeperAgent = "test-sleeper"

func init() {
	agent.Register(sleeperAgent, func([]byte) (*agent.Agent, error) {
		return agent.New(agent.Definition{Name: sleeperAgent, Handler: func(hc *agent.Context, tr agent.Trigger) error {
			if err := hc.Sleep(time.Hour); err != nil {
				return err
			}
			return hc.Reply("an hour after " + string(tr.Event))
		}})
	})
}

// A streaming run with --state_dir is drained while a key's 1-hour timer is pending; the
// restarted run restores it, and the timer fires once, when a later reading (another key's)
// moves the watermark past it; a third run fires nothing again.
func TestRunStateDirTimerFiresOnceAfterRestart(t *testing.T) {
	srv, ring, _ := demoPubSub(t)
	t.Cleanup(func() {
		for _, f := range []string{"input_subscription", "finals_topic", "errors_topic", "status_interval", "agent", "state_dir", "keyring"} {
			flag.Set(f, flag.Lookup(f).DefValue)
		}
	})
	dir := filepath.Join(t.TempDir(), "state")
	const t0 = int64(1767225600000)
	publish := func(key string, at int64) {
		line := fmt.Sprintf(`{"entityKey":%q,"eventTimeMs":"%d","externalEvent":%q}`,
			base64.StdEncoding.EncodeToString([]byte(key)), at, base64.StdEncoding.EncodeToString([]byte("reading of "+key)))
		srv.Publish(demoIn, []byte(line), map[string]string{wire.AttrContentType: wire.ContentTypeJSON})
	}
	run := func(until func() bool) (string, string) {
		t.Helper()
		return streamUntil(t, 120*time.Second, until, "run", "--agent", sleeperAgent, "--input_subscription", demoSub,
			"--finals_topic", demoFinals, "--errors_topic", demoErrors, "--status_interval", "100ms", "--state_dir", dir, "--keyring", "file:"+ring)
	}
	replies := func() map[string]int {
		got := map[string]int{}
		for _, m := range srv.Messages() {
			if m.Topic != demoFinals {
				continue
			}
			f := &pb.FinalReply{}
			if err := proto.Unmarshal(m.Data, f); err != nil {
				t.Fatal(err)
			}
			got[string(f.GetEntityKey())]++
		}
		return got
	}

	// Run 1: device-1 sleeps until t0+1h; the run is drained with the timer pending.
	publish("device-1", t0)
	out, errOut := run(func() bool { return allAcked(srv, demoIn, 1) })
	if !strings.Contains(out, "state of 1 keys") || len(replies()) != 0 {
		t.Fatalf("first run: replies %v\nstdout: %s\nstderr: %s", replies(), out, errOut)
	}

	// Run 2: device-2's reading two hours later moves the watermark past the timer.
	publish("device-2", t0+2*time.Hour.Milliseconds())
	_, errOut = run(func() bool { return replies()["device-1"] == 1 })
	if !strings.Contains(errOut, "restoring 1 keys") {
		t.Errorf("second run's stderr:\n%s", errOut)
	}

	// Run 3: a reading three hours later fires device-2's timer, and device-1's not again.
	publish("device-3", t0+3*time.Hour.Milliseconds())
	out, errOut = run(func() bool { return replies()["device-2"] == 1 })
	if got := replies(); got["device-1"] != 1 || got["device-3"] != 0 || count(srv, demoErrors) != 0 {
		t.Fatalf("replies %v, %d dead letters; want device-1 and device-2 once\nstdout: %s\nstderr: %s", got, count(srv, demoErrors), out, errOut)
	}
}
