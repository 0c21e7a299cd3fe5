package effector_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/effector/store"
	"github.com/beamagents/beamagents/effector/tool"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

const childEnv = "BEAMAGENTS_EFFECTOR_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "crash" {
		crashChild()
		return
	}
	os.Exit(m.Run())
}

// hanging is a tool that announces its call on stdout and never returns: the process is
// killed while it holds the intent's claim.
type hanging struct{ tool.Tool }

func (h hanging) Invoke(ctx context.Context, c tool.Call) ([]byte, error) {
	fmt.Println("CLAIMED " + c.IntentID)
	select {}
}

// crashChild is the effector process the takeover test kills mid-call.
func crashChild() {
	st, err := store.OpenRedis(store.RedisOptions{Addr: os.Getenv("REDIS_ADDR")})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	bs, err := effector.AgentBindings("support")
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	for i, b := range bs {
		if n, ok := b.Tool.(tool.Negotiated); ok {
			bs[i].Tool = tool.WithAgreement(hanging{b.Tool}, n.Agreement())
		}
	}
	e, err := effector.New(effector.Options{Verify: intent.ModeOff, Store: st, Tools: bs, Lease: 500 * time.Millisecond})
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	raw, _ := base64.StdEncoding.DecodeString(os.Getenv("INTENT"))
	ti := &pb.ToolIntent{}
	unmarshal(raw, ti)
	e.Handle(context.Background(), ti)
}

// An effector process killed (SIGKILL) between its claim and its completion record leaves a
// claim that a second effector takes over once the lease ends; the tool then runs once more
// (the crash window docs/effector.md describes) and the completion is recorded.
func TestKilledEffectorTakenOver(t *testing.T) {
	addr := redisServer(t)
	f := newFixture(t, intent.ModeRequire, openRedis(t, addr))
	ti := lookupIntent(t, f.kr, "killed", 1, "A-1001")
	ti.ExpiresAtMs = time.Now().Add(time.Hour).UnixMilli()
	intent.Sign(ti, f.kr)
	f.clock.set(time.Now().UnixMilli())
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=crash", "REDIS_ADDR="+addr, "INTENT="+base64.StdEncoding.EncodeToString(marshal(t, ti)))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "CLAIMED "+ti.GetIntentId()+"\n" {
		cmd.Process.Kill()
		t.Fatalf("child: %q %v", line, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	killed := time.Now()
	if _, err := f.e.Handle(withTimeout(t, 100*time.Millisecond), ti); err == nil {
		t.Fatal("executed while the killed effector's lease was live")
	}
	res := f.handle(t, ti)
	if res.GetStatus() != pb.ToolResult_OK || f.counts["orders.lookup"].n.Load() != 1 {
		t.Fatalf("takeover: %v", res)
	}
	t.Logf("taken over %s after the kill (lease 500ms)", time.Since(killed).Round(time.Millisecond))
}
