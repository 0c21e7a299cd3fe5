package effector_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beamagents/beamagents/effector"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/records"
)

const (
	hourMs   = int64(time.Hour / time.Millisecond)
	windowMs = int64(5 * time.Minute / time.Millisecond) // the support agent's tool deadline
)

var backfill = effector.Expiry{Policy: effector.ExpiryEmission, MaxLag: 24 * time.Hour}

// backfillFixture is an effector on the tests' clock (t0) under expiry x.
func backfillFixture(t *testing.T, x effector.Expiry) *fixture {
	t.Helper()
	kr := testRing(t)
	bs, counts := supportBindings(t)
	clock := newClock(t0)
	e, err := effector.New(effector.Options{Keyring: kr, Store: openBolt(t), Tools: bs, Clock: clock.now, Lease: 5 * time.Second, Expiry: x})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{e: e, clock: clock, counts: counts, kr: kr}
}

// oldIntent is a signed lookup intent emitted by an activation at event time created, with
// the support agent's 5-minute deadline.
func oldIntent(t *testing.T, kr *intent.Keyring, entity string, created int64) *pb.ToolIntent {
	t.Helper()
	ti := &pb.ToolIntent{
		IntentId: intent.ID([]byte(entity), 0, 0), EntityKey: []byte(entity),
		ToolName: "orders.lookup", ArgsJson: `{"support.lookup_order.order_id":"A-1001"}`,
		CreatedAtMs: created, ExpiresAtMs: created + windowMs, Kind: pb.ToolIntent_TOOL,
	}
	if err := intent.Sign(ti, kr); err != nil {
		t.Fatal(err)
	}
	return ti
}

// writeIntentFile writes intents as a typed record file whose modification time is mtime
// (the emission the file records).
func writeIntentFile(t *testing.T, path string, mtime int64, tis ...*pb.ToolIntent) {
	t.Helper()
	b := records.Header((&pb.ToolIntent{}).ProtoReflect().Descriptor().FullName())
	for _, ti := range tis {
		b = records.AppendFrame(b, marshal(t, ti))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, time.UnixMilli(mtime), time.UnixMilli(mtime)); err != nil {
		t.Fatal(err)
	}
}

// A backfill through files: intents whose event times are 4 hours behind the effector's
// clock, in a file written 10 s ago. Under the clock policy every one is EXPIRED and no tool
// runs; under the emission policy each runs once, and its result carries the intent's event
// time (created_at_ms plus the 10 s since the file was written), inside its window. An
// intent file written an hour ago is stale under the emission policy too, and an intent
// older than MaxLag is refused whatever its file says.
func TestExpiryBackfillFiles(t *testing.T) {
	dir := t.TempDir()
	created := t0 - 4*hourMs
	kr := testRing(t)
	fresh := filepath.Join(dir, "fresh", "intents.binpb")
	stale := filepath.Join(dir, "stale", "intents.binpb")
	ancient := filepath.Join(dir, "ancient", "intents.binpb")
	for _, d := range []string{fresh, stale, ancient} {
		os.MkdirAll(filepath.Dir(d), 0o755)
	}
	writeIntentFile(t, fresh, t0-10_000, oldIntent(t, kr, "customer-a", created), oldIntent(t, kr, "customer-b", created+90*60_000))
	writeIntentFile(t, stale, t0-hourMs, oldIntent(t, kr, "customer-c", created))
	writeIntentFile(t, ancient, t0-1_000, oldIntent(t, kr, "customer-d", t0-25*hourMs))

	handle := func(t *testing.T, x effector.Expiry, glob string) (*fixture, []*pb.AgentEnvelope) {
		t.Helper()
		f := backfillFixture(t, x)
		recs, err := effector.ReadIntents(glob)
		if err != nil {
			t.Fatal(err)
		}
		res, malformed, err := f.e.HandleAll(context.Background(), recs, 4)
		if err != nil || len(malformed) != 0 || len(res) != len(recs) {
			t.Fatalf("%d results of %d intents, %d malformed, %v", len(res), len(recs), len(malformed), err)
		}
		return f, res
	}

	t.Run("the file's modification time is the emission", func(t *testing.T) {
		recs, err := effector.ReadIntents(fresh)
		if err != nil || len(recs) != 2 {
			t.Fatalf("%d records, %v", len(recs), err)
		}
		for _, r := range recs {
			if r.Emitted.UnixMilli() != t0-10_000 {
				t.Fatalf("emitted %v", r.Emitted)
			}
		}
	})
	t.Run("clock refuses the backfill", func(t *testing.T) {
		f, res := handle(t, effector.Expiry{}, fresh)
		for _, env := range res {
			r := env.GetToolResult()
			if r.GetStatus() != pb.ToolResult_EXPIRED || env.GetEventTimeMs() != t0 {
				t.Fatalf("result %v at %d", r, env.GetEventTimeMs())
			}
		}
		if n := f.counts["orders.lookup"].n.Load(); n != 0 || f.e.Metrics().Snapshot()["expired"] != 2 {
			t.Fatalf("%d calls, counters %v", n, f.e.Metrics().Snapshot())
		}
	})
	t.Run("emission runs the backfill", func(t *testing.T) {
		f, res := handle(t, backfill, fresh)
		for _, env := range res {
			r := env.GetToolResult()
			want := created + 10_000
			if string(env.GetEntityKey()) == "customer-b" {
				want += 90 * 60_000
			}
			if r.GetStatus() != pb.ToolResult_OK || env.GetEventTimeMs() != want || r.GetCompletedAtMs() != want {
				t.Fatalf("result %v at %d, want OK at %d", r, env.GetEventTimeMs(), want)
			}
			if o := intent.VerifyResult(r, oldIntent(t, f.kr, string(env.GetEntityKey()), want-10_000), f.kr); o != intent.OK {
				t.Fatalf("the result verifies as %v", o)
			}
		}
		if n := f.counts["orders.lookup"].n.Load(); n != 2 {
			t.Fatalf("%d calls", n)
		}
	})
	t.Run("emission refuses a file written an hour ago", func(t *testing.T) {
		f, res := handle(t, backfill, stale)
		r := res[0].GetToolResult()
		if r.GetStatus() != pb.ToolResult_EXPIRED || !strings.HasPrefix(r.GetErrorMessage(), effector.ReasonExpired+": ") ||
			!strings.Contains(r.GetErrorMessage(), "from its emission") || f.counts["orders.lookup"].n.Load() != 0 {
			t.Fatalf("stale intent: %v", r)
		}
	})
	t.Run("emission refuses an intent older than MaxLag", func(t *testing.T) {
		f, res := handle(t, backfill, ancient)
		if r := res[0].GetToolResult(); r.GetStatus() != pb.ToolResult_EXPIRED || f.counts["orders.lookup"].n.Load() != 0 {
			t.Fatalf("ancient intent: %v", r)
		}
	})
	t.Run("Handle knows no emission: the clock", func(t *testing.T) {
		f := backfillFixture(t, backfill)
		if r := f.handle(t, oldIntent(t, f.kr, "customer-e", created)); r.GetStatus() != pb.ToolResult_EXPIRED {
			t.Fatalf("result %v", r)
		}
	})
}

// A backfilled approval under the emission policy: listed with its deadline on the
// effector's clock (its window from its emission), decided with the intent's event time, and
// refused once that window has passed.
func TestExpiryBackfillApproval(t *testing.T) {
	f := backfillFixture(t, effector.Expiry{Policy: effector.ExpiryEmission, MaxLag: 24 * time.Hour})
	f.e.Approvals().SetSink(func(context.Context, *pb.AgentEnvelope) error { return nil })
	ctx := context.Background()
	mk := func(entity string) *pb.ToolIntent {
		ti := refundIntent(t, f.kr, entity, pb.ToolIntent_APPROVAL, refundArgs)
		ti.CreatedAtMs, ti.ExpiresAtMs = t0-4*hourMs, t0-4*hourMs+10*60_000
		if err := intent.Sign(ti, f.kr); err != nil {
			t.Fatal(err)
		}
		return ti
	}
	ti, late := mk("customer-3"), mk("customer-4")
	emitted := time.UnixMilli(t0 - 2_000)
	for _, x := range []*pb.ToolIntent{ti, late} {
		if out, err := f.e.HandleEmitted(ctx, x, emitted); err != nil || !out.Pending {
			t.Fatalf("approval intent: %+v %v", out, err)
		}
	}
	list := f.e.Approvals().List()
	if len(list) != 2 || list[0].Expired || list[0].DeadlineMs != t0-2_000+10*60_000 || f.e.Approvals().Open() != 2 {
		t.Fatalf("list %+v", list)
	}
	f.clock.set(t0 + 60_000)
	env, err := f.e.Approvals().Decide(ctx, ti.GetIntentId(), true, "ops@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := ti.GetCreatedAtMs() + 62_000; env.GetEventTimeMs() != want || env.GetApproval().GetDecidedAtMs() != want {
		t.Fatalf("decision at %d (decided_at %d), want %d", env.GetEventTimeMs(), env.GetApproval().GetDecidedAtMs(), want)
	}
	f.clock.set(t0 - 2_000 + 10*60_000)
	if _, err := f.e.Approvals().Decide(ctx, late.GetIntentId(), true, "ops", ""); !errors.Is(err, effector.ErrApprovalExpired) {
		t.Fatalf("a decision after the window: %v", err)
	}
	if l := f.e.Approvals().List(); !l[1].Expired || f.e.Approvals().Open() != 0 {
		t.Fatalf("not shown expired: %+v", l[1])
	}
}

// Through the Pub/Sub service a message's publish time is its intent's emission: a 4-hour-old
// intent published now runs under the emission policy (its result at the intent's event
// time), one published an hour ago is EXPIRED, and the clock policy refuses both.
func TestExpiryBackfillService(t *testing.T) {
	created := t0 - 4*hourMs
	for _, tc := range []struct {
		name      string
		x         effector.Expiry
		published int64
		status    pb.ToolResult_Status
		event     int64
	}{
		{"emission, published 3 s ago", backfill, t0 - 3_000, pb.ToolResult_OK, created + 3_000},
		{"emission, published an hour ago", backfill, t0 - hourMs, pb.ToolResult_EXPIRED, created + hourMs},
		{"clock, published 3 s ago", effector.Expiry{}, t0 - 3_000, pb.ToolResult_EXPIRED, t0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := backfillFixture(t, tc.x)
			env := deliverServiceAt(t, f.e, oldIntent(t, f.kr, "customer-p", created), func() time.Time { return time.UnixMilli(tc.published) })
			if r := env.GetToolResult(); r.GetStatus() != tc.status || env.GetEventTimeMs() != tc.event {
				t.Fatalf("result %v at %d, want %v at %d", r, env.GetEventTimeMs(), tc.status, tc.event)
			}
		})
	}
}
