package effector_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	pubsub "cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/effector/store"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

// syncLog is a log sink safe for the service's concurrent handlers.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *syncLog) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// conflictCase is one way intents reach an effector: Handle, the file mode's HandleAll, or
// the Pub/Sub service.
type conflictCase struct {
	name    string
	deliver func(t *testing.T, e *effector.Effector, ti *pb.ToolIntent) *pb.AgentEnvelope
}

func deliverHandle(t *testing.T, e *effector.Effector, ti *pb.ToolIntent) *pb.AgentEnvelope {
	out, err := e.Handle(context.Background(), ti)
	if err != nil || out.Envelope == nil {
		t.Fatalf("Handle: %v, %v", out, err)
	}
	return out.Envelope
}

func deliverFiles(t *testing.T, e *effector.Effector, ti *pb.ToolIntent) *pb.AgentEnvelope {
	res, malformed, err := e.HandleAll(context.Background(), []effector.Record{{Source: "intents.binpb:1", Intent: ti}}, 4)
	if err != nil || len(malformed) != 0 || len(res) != 1 {
		t.Fatalf("HandleAll: %d results, %d malformed, %v", len(res), len(malformed), err)
	}
	return res[0]
}

// deliverService publishes ti to a pstest Pub/Sub server served by e and returns the result
// published for it.
func deliverService(t *testing.T, e *effector.Effector, ti *pb.ToolIntent) *pb.AgentEnvelope {
	return deliverServiceAt(t, e, ti, nil)
}

// deliverServiceAt is deliverService on a server whose clock, and so the message's publish
// time, is now (nil: the wall clock).
func deliverServiceAt(t *testing.T, e *effector.Effector, ti *pb.ToolIntent, now func() time.Time) *pb.AgentEnvelope {
	srv := pstest.NewServer()
	defer srv.Close()
	if now != nil {
		srv.SetTimeNowFunc(now)
	}
	t.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr)
	const (
		intents = "projects/p/topics/intents"
		sub     = "projects/p/subscriptions/effector"
		results = "projects/p/topics/results"
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: intents})
	srv.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: results})
	if _, err := srv.GServer.CreateSubscription(ctx, &pubsubpb.Subscription{Name: sub, Topic: intents, AckDeadlineSeconds: 10}); err != nil {
		t.Fatal(err)
	}
	client, err := pubsub.NewClient(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	done := make(chan error, 1)
	go func() {
		done <- e.Serve(ctx, client, effector.ServiceOptions{Subscription: sub, ResultsTopic: results})
	}()
	srv.Publish(intents, marshal(t, ti), nil)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, m := range srv.Messages() {
			if m.Topic == results {
				cancel()
				<-done
				env := &pb.AgentEnvelope{}
				if err := proto.Unmarshal(m.Data, env); err != nil {
					t.Fatal(err)
				}
				return env
			}
		}
	}
	t.Fatal("no result published")
	return nil
}

// Two intents signed independently with the same id and different arguments (a key whose
// counter started again): the second is REJECTED naming intent_id_conflict, its tool never
// runs, and it is counted and logged with its id and key; a true redelivery (an escalated
// attempt included) still gets the recorded result byte for byte. On bbolt and on Redis,
// through Handle, the file mode and the Pub/Sub service. Every result is signed and bound to
// the intent it answers.
func TestIntentIDConflict(t *testing.T) {
	stores := map[string]func(t *testing.T) store.Store{
		"bbolt": func(t *testing.T) store.Store { return openBolt(t) },
		"redis": func(t *testing.T) store.Store { return openRedis(t, redisServer(t)) },
	}
	paths := []conflictCase{{"handle", deliverHandle}, {"files", deliverFiles}, {"pubsub", deliverService}}
	for _, sname := range []string{"bbolt", "redis"} {
		for _, p := range paths {
			t.Run(sname+"/"+p.name, func(t *testing.T) {
				var logs syncLog
				kr := testRing(t)
				bs, counts := supportBindings(t)
				e, err := effector.New(effector.Options{Keyring: kr, Store: stores[sname](t), Tools: bs,
					Logger: slog.New(slog.NewTextHandler(&logs, nil))})
				if err != nil {
					t.Fatal(err)
				}
				first := lookupIntent(t, kr, "customer-9", 0, "A-1001")
				first.ExpiresAtMs = time.Now().Add(time.Hour).UnixMilli()
				if err := intent.Sign(first, kr); err != nil {
					t.Fatal(err)
				}
				second := proto.CloneOf(first) // the same id, another call
				second.ArgsJson = `{"support.lookup_order.order_id":"A-9999"}`
				if err := intent.Sign(second, kr); err != nil {
					t.Fatal(err)
				}
				escalated := proto.CloneOf(first)
				escalated.Attempt, escalated.ExpiresAtMs = 1, first.ExpiresAtMs+60_000
				if err := intent.Sign(escalated, kr); err != nil {
					t.Fatal(err)
				}

				recorded := p.deliver(t, e, first)
				if r := recorded.GetToolResult(); r.GetStatus() != pb.ToolResult_OK || intent.VerifyResult(r, first, kr) != intent.OK {
					t.Fatalf("first: %v (verify %v)", r, intent.VerifyResult(r, first, kr))
				}
				conflict := p.deliver(t, e, second).GetToolResult()
				if conflict.GetStatus() != pb.ToolResult_REJECTED || !strings.HasPrefix(conflict.GetErrorMessage(), effector.ReasonIDConflict+": ") {
					t.Fatalf("second: %v", conflict)
				}
				if o := intent.VerifyResult(conflict, second, kr); o != intent.OK {
					t.Fatalf("the refusal is not signed for the intent it answers: %v", o)
				}
				for _, again := range []*pb.ToolIntent{proto.CloneOf(first), escalated} {
					if got := p.deliver(t, e, again); !bytes.Equal(marshal(t, got), marshal(t, recorded)) {
						t.Fatalf("redelivery answered differently:\n%v\n%v", got, recorded)
					}
				}
				if n := counts["orders.lookup"].n.Load(); n != 1 {
					t.Fatalf("the tool ran %d times", n)
				}
				m := e.Metrics().Snapshot()
				if m[effector.CountIDConflicts] != 1 || m["rejected_"+effector.ReasonIDConflict] != 1 || m[effector.CountDeduplicated] != 2 {
					t.Fatalf("counters %v", m)
				}
				if l := logs.String(); !strings.Contains(l, "intent id conflict") || !strings.Contains(l, first.GetIntentId()) || !strings.Contains(l, "customer-9") {
					t.Fatalf("log: %s", l)
				}
			})
		}
	}
}

// A completion recorded before results carried an intent digest cannot be checked: it
// answers every delivery of its id, as before, counted as dedup_unchecked.
func TestRecordWithoutDigest(t *testing.T) {
	st := openBolt(t)
	f := newFixture(t, intent.ModeRequire, st)
	ti := lookupIntent(t, f.kr, "old", 1, "A-1001")
	old := &pb.AgentEnvelope{EntityKey: ti.EntityKey, EventTimeMs: t0, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
		IntentId: ti.IntentId, EntityKey: ti.EntityKey, Seq: 1, Status: pb.ToolResult_OK, Payload: []byte(`{"status":"shipped"}`), CompletedAtMs: t0,
	}}}
	ctx := context.Background()
	if _, err := st.Claim(ctx, ti.IntentId, "old-owner", t0, 1000); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Complete(ctx, ti.IntentId, "old-owner", marshal(t, old)); err != nil {
		t.Fatal(err)
	}
	other := lookupIntent(t, f.kr, "old", 1, "A-9999")
	for _, d := range []*pb.ToolIntent{ti, other} {
		out, err := f.e.Handle(ctx, d)
		if err != nil || !bytes.Equal(marshal(t, out.Envelope), marshal(t, old)) {
			t.Fatalf("answer %v, %v", out.Envelope, err)
		}
	}
	if m := f.e.Metrics().Snapshot(); m[effector.CountUnchecked] != 2 || m[effector.CountIDConflicts] != 0 || f.counts["orders.lookup"].n.Load() != 0 {
		t.Fatalf("counters %v", m)
	}
}

// The console gets the same check: an APPROVAL intent whose id is listed for another call is
// REJECTED intent_id_conflict and not listed; a decision is signed and bound to the listed
// intent; a decision recorded (by an earlier effector, on a shared store) for another call
// with the same id refuses the new one's decision with ErrIntentConflict.
func TestApprovalIDConflict(t *testing.T) {
	st := openBolt(t)
	f := newFixture(t, intent.ModeRequire, st)
	ctx := context.Background()
	f.e.Approvals().SetSink(func(context.Context, *pb.AgentEnvelope) error { return nil })
	ti := refundIntent(t, f.kr, "customer-3", pb.ToolIntent_APPROVAL, refundArgs)
	if out, err := f.e.Handle(ctx, ti); err != nil || !out.Pending {
		t.Fatalf("%+v %v", out, err)
	}
	other := refundIntent(t, f.kr, "customer-3", pb.ToolIntent_APPROVAL, strings.Replace(refundArgs, "4599", "99000", 1))
	res := f.handle(t, other)
	if res.GetStatus() != pb.ToolResult_REJECTED || !strings.HasPrefix(res.GetErrorMessage(), effector.ReasonIDConflict+": ") {
		t.Fatalf("conflicting approval: %v", res)
	}
	if l := f.e.Approvals().List(); len(l) != 1 || !proto.Equal(l[0].Intent, ti) {
		t.Fatalf("listing changed: %+v", l)
	}
	env, err := f.e.Approvals().Decide(ctx, ti.GetIntentId(), true, "ops@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	if o := intent.VerifyApproval(env.GetApproval(), ti, f.kr); o != intent.OK {
		t.Fatalf("decision verifies %v", o)
	}
	if o := intent.VerifyApproval(env.GetApproval(), other, f.kr); o != intent.BindingMismatch {
		t.Fatalf("decision for another call verifies %v", o)
	}
	// A later effector on the same store meets the other call with the same id.
	g := newFixture(t, intent.ModeRequire, st)
	g.e.Approvals().SetSink(func(context.Context, *pb.AgentEnvelope) error { return nil })
	if out, err := g.e.Handle(ctx, other); err != nil || !out.Pending {
		t.Fatalf("%+v %v", out, err)
	}
	if _, err := g.e.Approvals().Decide(ctx, other.GetIntentId(), true, "ops@example.com", ""); !errors.Is(err, effector.ErrIntentConflict) {
		t.Fatalf("decision over another call's record: %v", err)
	}
	if m := f.e.Metrics().Snapshot(); m[effector.CountIDConflicts] != 1 {
		t.Fatalf("counters %v", m)
	}
	if m := g.e.Metrics().Snapshot(); m[effector.CountIDConflicts] != 1 || m[effector.CountDecisions] != 0 {
		t.Fatalf("counters %v", m)
	}
}
