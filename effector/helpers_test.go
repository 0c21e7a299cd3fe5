package effector_test

import (
	"bytes"
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/effector/store"
	"github.com/beamagents/beamagents/effector/tool"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/testkit/testsvc"
)

var (
	key1 = bytes.Repeat([]byte{0x11}, 32)
	key2 = bytes.Repeat([]byte{0x22}, 32)
)

// refundArgs are a refund proposal's fields, as the support agent writes them.
const refundArgs = `{"payments.refund.order_id":"A-2002","payments.refund.amount_cents":"4599","payments.refund.reason":"arrived broken"}`

// t0 is the tests' effector clock origin.
const t0 = int64(1767225600000)

func testRing(t testing.TB) *intent.Keyring {
	t.Helper()
	kr, err := intent.NewKeyring("k1", map[string][]byte{"k1": key1})
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// fakeClock is a settable clock (the effector reads it; tests move it).
type fakeClock struct{ ms atomic.Int64 }

func newClock(ms int64) *fakeClock  { c := &fakeClock{}; c.ms.Store(ms); return c }
func (c *fakeClock) now() time.Time { return time.UnixMilli(c.ms.Load()) }
func (c *fakeClock) set(ms int64)   { c.ms.Store(ms) }

// lookupIntent is a signed orders.lookup intent of the support agent (its args are the
// proposal case's fields, as the agent writes them).
func lookupIntent(t testing.TB, kr *intent.Keyring, entity string, seq int64, order string) *pb.ToolIntent {
	t.Helper()
	ti := &pb.ToolIntent{
		IntentId: intent.ID([]byte(entity), seq, 0), EntityKey: []byte(entity), Seq: seq,
		ToolName: support.ToolLookupOrder, ArgsJson: `{"support.lookup_order.order_id":"` + order + `"}`,
		CreatedAtMs: t0 - 1000, ExpiresAtMs: t0 + 60_000, Kind: pb.ToolIntent_TOOL,
	}
	if kr != nil {
		if err := intent.Sign(ti, kr); err != nil {
			t.Fatal(err)
		}
	}
	return ti
}

func refundIntent(t testing.TB, kr *intent.Keyring, entity string, kind pb.ToolIntent_Kind, args string) *pb.ToolIntent {
	t.Helper()
	ti := &pb.ToolIntent{
		IntentId: intent.ID([]byte(entity), 0, 1), EntityKey: []byte(entity), StepIndex: 1,
		ToolName: support.ToolRefund, ArgsJson: args,
		CreatedAtMs: t0 - 1000, ExpiresAtMs: t0 + 600_000, Kind: kind,
	}
	if err := intent.Sign(ti, kr); err != nil {
		t.Fatal(err)
	}
	return ti
}

// counting wraps a tool and counts its calls.
type counting struct {
	tool.Tool
	n atomic.Int64
}

func (c *counting) Invoke(ctx context.Context, call tool.Call) ([]byte, error) {
	c.n.Add(1)
	return c.Tool.Invoke(ctx, call)
}

// supportBindings returns the support agent's bindings with a call counter on each tool.
func supportBindings(t testing.TB) ([]effector.Binding, map[string]*counting) {
	t.Helper()
	bs, err := effector.AgentBindings(support.Name)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]*counting{}
	for i, b := range bs {
		c := &counting{Tool: b.Tool}
		counts[b.Tool.Name()] = c
		if n, ok := b.Tool.(tool.Negotiated); ok {
			bs[i].Tool = tool.WithAgreement(c, n.Agreement())
		} else {
			bs[i].Tool = c
		}
	}
	return bs, counts
}

func openBolt(t testing.TB) *store.Bolt {
	t.Helper()
	s, err := store.OpenBolt(filepath.Join(t.TempDir(), "dedup.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

type fixture struct {
	e      *effector.Effector
	clock  *fakeClock
	counts map[string]*counting
	kr     *intent.Keyring
}

func newFixture(t testing.TB, mode intent.Mode, store store.Store) *fixture {
	t.Helper()
	kr := testRing(t)
	bs, counts := supportBindings(t)
	clock := newClock(t0)
	e, err := effector.New(effector.Options{Keyring: kr, Verify: mode, Store: store, Tools: bs, Clock: clock.now, Lease: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{e: e, clock: clock, counts: counts, kr: kr}
}

func (f *fixture) handle(t testing.TB, ti *pb.ToolIntent) *pb.ToolResult {
	t.Helper()
	out, err := f.e.Handle(context.Background(), ti)
	if err != nil {
		t.Fatal(err)
	}
	if out.Envelope == nil {
		t.Fatalf("no result for %s", ti.GetIntentId())
	}
	if !bytes.Equal(out.Envelope.GetEntityKey(), ti.GetEntityKey()) {
		t.Fatalf("result on key %q, intent on %q", out.Envelope.GetEntityKey(), ti.GetEntityKey())
	}
	return out.Envelope.GetToolResult()
}

func marshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func redisServer(t testing.TB) string { return testsvc.Redis(t) }

func openRedis(t testing.TB, addr string) *store.Redis {
	t.Helper()
	s, err := store.OpenRedis(store.RedisOptions{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func unmarshal(b []byte, m proto.Message) error { return proto.Unmarshal(b, m) }
