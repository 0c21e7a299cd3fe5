package console_test

import (
	"bytes"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/effector/store"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

// t0 is the tests' effector clock origin.
const t0 = int64(1767225600000)

// fakeClock is a settable clock (the effector reads it; tests move it).
type fakeClock struct{ ms atomic.Int64 }

func (c *fakeClock) now() time.Time { return time.UnixMilli(c.ms.Load()) }
func (c *fakeClock) set(ms int64)   { c.ms.Store(ms) }

type fixture struct {
	e     *effector.Effector
	clock *fakeClock
	kr    *intent.Keyring
}

// newFixture is an effector with the support agent's tools, a bbolt store and a clock at t0.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	kr, err := intent.NewKeyring("k1", map[string][]byte{"k1": bytes.Repeat([]byte{0x11}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	bs, err := effector.AgentBindings(support.Name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.OpenBolt(filepath.Join(t.TempDir(), "dedup.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	clock := &fakeClock{}
	clock.set(t0)
	e, err := effector.New(effector.Options{Keyring: kr, Store: s, Tools: bs, Clock: clock.now, Lease: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{e: e, clock: clock, kr: kr}
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
