package effector_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/effector/store"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

// stormResult is what a redelivery storm produced.
type stormResult struct {
	executions int64
	distinct   int
}

// storm delivers the same intent n times concurrently, alternating between two effectors
// sharing one Redis.
func storm(t *testing.T, addr string, n int) stormResult {
	a := newFixture(t, intent.ModeRequire, openRedis(t, addr))
	b := newFixture(t, intent.ModeRequire, openRedis(t, addr))
	ti := lookupIntent(t, a.kr, "storm", 1, "A-1001")
	var wg sync.WaitGroup
	outs := make([][]byte, n)
	for i := range n {
		f := a
		if i%2 == 1 {
			f = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := f.e.Handle(context.Background(), ti)
			if err != nil {
				t.Error(err)
				return
			}
			outs[i] = marshal(t, out.Envelope)
		}()
	}
	wg.Wait()
	distinct := map[string]bool{}
	for _, o := range outs {
		distinct[string(o)] = true
	}
	ma, mb := a.e.Metrics().Snapshot(), b.e.Metrics().Snapshot()
	if got := ma["executed"] + mb["executed"] + ma["deduplicated"] + mb["deduplicated"]; got != int64(n) {
		t.Errorf("executed+deduplicated = %d, want %d", got, n)
	}
	return stormResult{executions: a.counts["orders.lookup"].n.Load() + b.counts["orders.lookup"].n.Load(), distinct: len(distinct)}
}

// The same intent delivered 100 times at once to two effectors sharing Redis runs its tool
// once, and every delivery answers with the same result bytes.
func TestRedisStorm(t *testing.T) {
	r := storm(t, redisServer(t), 100)
	t.Logf("redelivery storm: 100 deliveries, %d execution(s), %d distinct result(s)", r.executions, r.distinct)
	if r.executions != 1 || r.distinct != 1 {
		t.Fatalf("storm: %d executions, %d distinct results", r.executions, r.distinct)
	}
}

// A claim held by a crashed effector (claimed, never completed) expires with its lease on
// Redis's clock; a waiting effector then takes it over and executes once.
func TestRedisTakeover(t *testing.T) {
	addr := redisServer(t)
	crashed := openRedis(t, addr)
	f := newFixture(t, intent.ModeRequire, openRedis(t, addr))
	ti := lookupIntent(t, f.kr, "c", 1, "A-1001")
	const lease = 300
	c, err := crashed.Claim(context.Background(), ti.GetIntentId(), "crashed", 0, lease)
	if err != nil || c.State != store.Claimed {
		t.Fatalf("%v %v", c, err)
	}
	busy, err := f.e.Handle(withTimeout(t, 50*time.Millisecond), ti)
	if err == nil || busy.Envelope != nil || f.counts["orders.lookup"].n.Load() != 0 {
		t.Fatalf("executed inside the crashed owner's lease: %v", err)
	}
	start := time.Now()
	res := f.handle(t, ti)
	if res.GetStatus() != pb.ToolResult_OK || f.counts["orders.lookup"].n.Load() != 1 {
		t.Fatalf("after the lease: %v", res)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("takeover took %s", time.Since(start))
	}
	again, err := crashed.Claim(context.Background(), ti.GetIntentId(), "crashed", 0, lease)
	if err != nil || again.State != store.Done {
		t.Fatalf("the completion is not recorded: %+v %v", again, err)
	}
	var env pb.AgentEnvelope
	if err := unmarshal(again.Result, &env); err != nil || !bytes.Equal(env.GetToolResult().GetPayload(), res.GetPayload()) {
		t.Fatalf("recorded %v", err)
	}
}

func withTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// One decision wins across effectors sharing a store: the second effector's console refuses
// a decision the first one already published.
func TestRedisOneDecision(t *testing.T) {
	addr := redisServer(t)
	a := newFixture(t, intent.ModeRequire, openRedis(t, addr))
	b := newFixture(t, intent.ModeRequire, openRedis(t, addr))
	ti := refundIntent(t, a.kr, "customer-3", pb.ToolIntent_APPROVAL, refundArgs)
	for _, f := range []*fixture{a, b} {
		if out, err := f.e.Handle(context.Background(), ti); err != nil || !out.Pending {
			t.Fatal(out, err)
		}
	}
	if _, err := a.e.Approvals().Decide(context.Background(), ti.GetIntentId(), true, "alice", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := b.e.Approvals().Decide(context.Background(), ti.GetIntentId(), false, "bob", ""); !errors.Is(err, effector.ErrApprovalDecided) {
		t.Fatalf("second effector's decision: %v", err)
	}
}
