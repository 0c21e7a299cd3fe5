package effector_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/effector/store"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/records"
)

// Forged, tampered, unknown-key, unsigned and unsupported-scheme intents under each mode: an
// admitted intent runs its tool, a refused one is a REJECTED result naming the outcome, and
// each outcome has its own counter.
func TestSignatureModes(t *testing.T) {
	other, err := intent.NewKeyring("k2", map[string][]byte{"k2": key2})
	if err != nil {
		t.Fatal(err)
	}
	variants := []struct {
		name    string
		outcome intent.Outcome
		make    func(t *testing.T, kr *intent.Keyring, seq int64) *pb.ToolIntent
	}{
		{"ok", intent.OK, func(t *testing.T, kr *intent.Keyring, seq int64) *pb.ToolIntent {
			return lookupIntent(t, kr, "c", seq, "A-1001")
		}},
		{"forged", intent.BadSignature, func(t *testing.T, kr *intent.Keyring, seq int64) *pb.ToolIntent {
			ti := lookupIntent(t, nil, "c", seq, "A-1001")
			ti.SignatureScheme, ti.SigningKeyId, ti.Signature = pb.ToolIntent_HMAC_SHA256, "k1", bytes.Repeat([]byte{1}, 32)
			return ti
		}},
		{"tampered", intent.BadSignature, func(t *testing.T, kr *intent.Keyring, seq int64) *pb.ToolIntent {
			ti := lookupIntent(t, kr, "c", seq, "A-1001")
			ti.CreatedAtMs++
			return ti
		}},
		{"unknown key", intent.UnknownKey, func(t *testing.T, kr *intent.Keyring, seq int64) *pb.ToolIntent {
			return lookupIntent(t, other, "c", seq, "A-1001")
		}},
		{"unsigned", intent.Unsigned, func(t *testing.T, kr *intent.Keyring, seq int64) *pb.ToolIntent {
			return lookupIntent(t, nil, "c", seq, "A-1001")
		}},
		{"unsupported scheme", intent.UnsupportedScheme, func(t *testing.T, kr *intent.Keyring, seq int64) *pb.ToolIntent {
			ti := lookupIntent(t, kr, "c", seq, "A-1001")
			ti.SignatureScheme = 9
			return ti
		}},
	}
	admitted := map[intent.Mode]map[intent.Outcome]bool{
		intent.ModeRequire:    {intent.OK: true},
		intent.ModePermissive: {intent.OK: true, intent.Unsigned: true},
		intent.ModeOff:        {intent.OK: true, intent.BadSignature: true, intent.UnknownKey: true, intent.Unsigned: true, intent.UnsupportedScheme: true},
	}
	for _, mode := range []intent.Mode{intent.ModeRequire, intent.ModePermissive, intent.ModeOff} {
		for i, v := range variants {
			t.Run(mode.String()+"/"+v.name, func(t *testing.T) {
				f := newFixture(t, mode, openBolt(t))
				res := f.handle(t, v.make(t, f.kr, int64(i)))
				m := f.e.Metrics().Snapshot()
				calls := f.counts["orders.lookup"].n.Load()
				if admitted[mode][v.outcome] {
					if res.GetStatus() != pb.ToolResult_OK || calls != 1 || m["executed"] != 1 {
						t.Fatalf("admitted intent: status %v, calls %d, metrics %v (%s)", res.GetStatus(), calls, m, res.GetErrorMessage())
					}
					if string(res.GetPayload()) != `{"status":"shipped","eta":"Thursday"}` {
						t.Fatalf("payload %s", res.GetPayload())
					}
				} else {
					reason := v.outcome.Reason()
					if res.GetStatus() != pb.ToolResult_REJECTED || calls != 0 || !strings.HasPrefix(res.GetErrorMessage(), reason+": ") {
						t.Fatalf("refused intent: status %v, calls %d, message %q", res.GetStatus(), calls, res.GetErrorMessage())
					}
					if m["rejected"] != 1 || m["rejected_"+reason] != 1 {
						t.Fatalf("counters %v", m)
					}
				}
				if mode == intent.ModeOff {
					if m["signature_off"] != 1 {
						t.Fatalf("counters %v", m)
					}
				} else if m["signature_"+v.outcome.String()] != 1 {
					t.Fatalf("signature counter for %v missing: %v", v.outcome, m)
				}
			})
		}
	}
}

// An expired intent is an EXPIRED result and its tool is never called, even if it was never
// seen before.
func TestExpired(t *testing.T) {
	f := newFixture(t, intent.ModeRequire, openBolt(t))
	ti := lookupIntent(t, f.kr, "c", 1, "A-1001")
	f.clock.set(ti.GetExpiresAtMs())
	res := f.handle(t, ti)
	if res.GetStatus() != pb.ToolResult_EXPIRED || f.counts["orders.lookup"].n.Load() != 0 || !strings.HasPrefix(res.GetErrorMessage(), effector.ReasonExpired+": ") {
		t.Fatalf("expired: %v", res)
	}
	if res.GetCompletedAtMs() != ti.GetExpiresAtMs() {
		t.Fatalf("completed_at_ms %d", res.GetCompletedAtMs())
	}
	if m := f.e.Metrics().Snapshot(); m["expired"] != 1 || m["executed"] != 0 {
		t.Fatalf("counters %v", m)
	}
}

// A redelivered intent whose completion is recorded returns the recorded result, byte for
// byte, without running the tool again — also after a restart on the same bbolt file.
func TestDedupBolt(t *testing.T) {
	path := t.TempDir() + "/dedup.db"
	st, err := store.OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, intent.ModeRequire, st)
	ti := lookupIntent(t, f.kr, "c", 1, "A-1001")
	first, _ := f.e.Handle(context.Background(), ti)
	f.clock.set(t0 + 1000)
	second, _ := f.e.Handle(context.Background(), proto.CloneOf(ti))
	if !bytes.Equal(marshal(t, first.Envelope), marshal(t, second.Envelope)) {
		t.Fatalf("redelivery answered differently:\n%v\n%v", first.Envelope, second.Envelope)
	}
	if n := f.counts["orders.lookup"].n.Load(); n != 1 {
		t.Fatalf("tool ran %d times", n)
	}
	st.Close()
	st, err = store.OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g := newFixture(t, intent.ModeRequire, st)
	third, _ := g.e.Handle(context.Background(), ti)
	if !bytes.Equal(marshal(t, first.Envelope), marshal(t, third.Envelope)) || g.counts["orders.lookup"].n.Load() != 0 {
		t.Fatal("the completion did not survive a restart")
	}
	if m := g.e.Metrics().Snapshot(); m["deduplicated"] != 1 || m["executed"] != 0 {
		t.Fatalf("counters %v", m)
	}
}

// An intent for a tool no registered agent provides is a configuration error of the effector,
// not an outcome: it is held back (ErrToolUnregistered) and nothing is recorded for its id,
// so an effector that registers the tool runs it.
func TestUnknownToolHeldBack(t *testing.T) {
	st := openBolt(t)
	f := newFixture(t, intent.ModeRequire, st)
	ti := lookupIntent(t, nil, "c", 1, "")
	ti.ToolName = "payments.wire"
	intent.Sign(ti, f.kr)
	out, err := f.e.Handle(context.Background(), ti)
	if !errors.Is(err, effector.ErrToolUnregistered) || out.Envelope != nil {
		t.Fatalf("outcome %v, err %v; want held back", out, err)
	}
	if m := f.e.Metrics().Snapshot(); m[effector.CountHeldBack] != 1 || m[effector.CountRejected] != 0 {
		t.Fatalf("counters %v", m)
	}
	c, err := st.Claim(context.Background(), ti.GetIntentId(), "probe", 0, 1000)
	if err != nil || c.State == store.Done {
		t.Fatalf("a completion was recorded for a held-back intent: %v %v", c, err)
	}
}

// Arguments that do not decode or negotiate are REJECTED before the tool runs; the refusal
// is recorded like a result.
func TestRejectedArguments(t *testing.T) {
	for _, tc := range []struct {
		name, tool, args, reason string
	}{
		{"not canonical", "orders.lookup", `{ "support.lookup_order.order_id":"A-1001"}`, effector.ReasonBadArguments},
		{"unknown field", "orders.lookup", `{"support.lookup_order.order_id":"A-1001","x":"1"}`, effector.ReasonBadArguments},
		{"missing field", "orders.lookup", `{}`, effector.ReasonBadArguments},
		{"over the bound", "orders.lookup", `{"support.lookup_order.order_id":"` + strings.Repeat("9", 33) + `"}`, effector.ReasonBadArguments},
		{"not json", "orders.lookup", `order A-1001`, effector.ReasonBadArguments},
		{"refund over the tool's bound", "payments.refund", `{"payments.refund.order_id":"A-2002","payments.refund.amount_cents":"100001","payments.refund.reason":"x"}`, effector.ReasonBadArguments},
		{"refund integer as number", "payments.refund", `{"payments.refund.order_id":"A-2002","payments.refund.amount_cents":4599,"payments.refund.reason":"x"}`, effector.ReasonBadArguments},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, intent.ModeRequire, openBolt(t))
			ti := lookupIntent(t, nil, "c", 1, "")
			ti.ToolName, ti.ArgsJson = tc.tool, tc.args
			intent.Sign(ti, f.kr)
			res := f.handle(t, ti)
			if res.GetStatus() != pb.ToolResult_REJECTED || !strings.HasPrefix(res.GetErrorMessage(), tc.reason+": ") {
				t.Fatalf("%v: %q", res.GetStatus(), res.GetErrorMessage())
			}
			for name, c := range f.counts {
				if c.n.Load() != 0 {
					t.Fatalf("%s ran", name)
				}
			}
			if m := f.e.Metrics().Snapshot(); m["rejected_"+tc.reason] != 1 {
				t.Fatalf("counters %v", m)
			}
			again := f.handle(t, ti)
			if !proto.Equal(res, again) {
				t.Fatal("the refusal was not recorded")
			}
		})
	}
}

// The refund tool receives its arguments in its own shape: property names and a JSON number
// for the bounded amount.
func TestRefundExecutes(t *testing.T) {
	f := newFixture(t, intent.ModeRequire, openBolt(t))
	ti := refundIntent(t, f.kr, "customer-3", pb.ToolIntent_TOOL, `{"payments.refund.order_id":"A-2002","payments.refund.amount_cents":"4599","payments.refund.reason":"arrived broken"}`)
	res := f.handle(t, ti)
	if res.GetStatus() != pb.ToolResult_OK || !strings.Contains(string(res.GetPayload()), `"order_id":"A-2002","amount_cents":4599}`) {
		t.Fatalf("%v %s %s", res.GetStatus(), res.GetPayload(), res.GetErrorMessage())
	}
}

// APPROVAL intents are never executed: they wait for a decision, which becomes an Approval
// envelope once; expired, unknown and repeated decisions are refused.
func TestApprovals(t *testing.T) {
	f := newFixture(t, intent.ModeRequire, openBolt(t))
	var published []*pb.AgentEnvelope
	f.e.Approvals().SetSink(func(_ context.Context, env *pb.AgentEnvelope) error {
		published = append(published, env)
		return nil
	})
	args := `{"payments.refund.order_id":"A-2002","payments.refund.amount_cents":"4599","payments.refund.reason":"arrived broken"}`
	ti := refundIntent(t, f.kr, "customer-3", pb.ToolIntent_APPROVAL, args)
	out, err := f.e.Handle(context.Background(), ti)
	if err != nil || out.Envelope != nil || !out.Pending {
		t.Fatalf("approval intent: %+v %v", out, err)
	}
	esc := proto.CloneOf(ti)
	esc.Attempt = 1
	intent.Sign(esc, f.kr)
	f.e.Handle(context.Background(), esc)
	if n := f.counts["payments.refund"].n.Load(); n != 0 {
		t.Fatalf("an approval intent executed its tool %d times", n)
	}
	list := f.e.Approvals().List()
	if len(list) != 1 || list[0].Escalations != 1 || list[0].Expired || f.e.Approvals().Open() != 1 {
		t.Fatalf("list %+v", list)
	}
	ctx := context.Background()
	if _, err := f.e.Approvals().Decide(ctx, "nope", true, "ops", ""); !errors.Is(err, effector.ErrApprovalUnknown) {
		t.Fatalf("unknown: %v", err)
	}
	f.clock.set(t0 + 5000)
	env, err := f.e.Approvals().Decide(ctx, ti.GetIntentId(), true, "ops@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	a := env.GetApproval()
	if !a.GetApproved() || a.GetApprover() != "ops@example.com" || a.GetDecidedAtMs() != t0+5000 || env.GetEventTimeMs() != t0+5000 || string(env.GetEntityKey()) != "customer-3" {
		t.Fatalf("decision %v", env)
	}
	if _, err := f.e.Approvals().Decide(ctx, ti.GetIntentId(), false, "ops", ""); !errors.Is(err, effector.ErrApprovalDecided) {
		t.Fatalf("second decision: %v", err)
	}
	if len(published) != 1 || f.e.Approvals().Open() != 0 {
		t.Fatalf("published %d", len(published))
	}
	late := refundIntent(t, f.kr, "customer-4", pb.ToolIntent_APPROVAL, args)
	f.e.Handle(ctx, late)
	f.clock.set(late.GetExpiresAtMs())
	if _, err := f.e.Approvals().Decide(ctx, late.GetIntentId(), true, "ops", ""); !errors.Is(err, effector.ErrApprovalExpired) {
		t.Fatalf("expired decision: %v", err)
	}
	if l := f.e.Approvals().List(); !l[1].Expired {
		t.Fatalf("not shown expired: %+v", l[1])
	}
	if res := f.handle(t, late); res.GetStatus() != pb.ToolResult_EXPIRED {
		t.Fatalf("a redelivered expired approval: %v", res)
	}
}

// An effector that claimed an intent and died before recording its completion holds the
// claim only for its lease; then another effector takes it over and executes.
func TestTakeoverBolt(t *testing.T) {
	st := openBolt(t)
	f := newFixture(t, intent.ModeRequire, st)
	ti := lookupIntent(t, f.kr, "c", 1, "A-1001")
	c, err := st.Claim(context.Background(), ti.GetIntentId(), "crashed", t0, 5000)
	if err != nil || c.State != store.Claimed {
		t.Fatalf("%v %v", c, err)
	}
	f.clock.set(t0 + 4999)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := f.e.Handle(ctx, ti); !errors.Is(err, effector.ErrStore) {
		t.Fatalf("inside the lease: %v", err)
	}
	if f.counts["orders.lookup"].n.Load() != 0 {
		t.Fatal("executed inside another owner's lease")
	}
	f.clock.set(t0 + 5000)
	if res := f.handle(t, ti); res.GetStatus() != pb.ToolResult_OK {
		t.Fatal(res)
	}
	if m := f.e.Metrics().Snapshot(); m["taken_over"] != 1 || m["executed"] != 1 {
		t.Fatalf("counters %v", m)
	}
}

// Concurrent deliveries of one intent inside one effector exclude each other like
// deliveries to two effectors: the tool runs once (bbolt).
func TestBoltStorm(t *testing.T) {
	f := newFixture(t, intent.ModeRequire, openBolt(t))
	ti := lookupIntent(t, f.kr, "storm", 1, "A-1001")
	recs := make([]effector.Record, 100)
	for i := range recs {
		recs[i] = effector.Record{Intent: proto.CloneOf(ti)}
	}
	res, _, err := f.e.HandleAll(context.Background(), recs, 100)
	if err != nil || len(res) != 100 {
		t.Fatalf("%d results, %v", len(res), err)
	}
	for _, r := range res[1:] {
		if !proto.Equal(r, res[0]) {
			t.Fatal("deliveries answered differently")
		}
	}
	if n := f.counts["orders.lookup"].n.Load(); n != 1 {
		t.Fatalf("tool ran %d times", n)
	}
}

// An approver may edit the arguments of the call they approve: the edit is checked as the
// tool's arguments before it is signed with the decision, and a rejection carries none.
func TestApprovalWithEditedArgs(t *testing.T) {
	ctx := context.Background()
	args := `{"payments.refund.order_id":"A-2002","payments.refund.amount_cents":"4599","payments.refund.reason":"arrived broken"}`
	edited := `{"payments.refund.order_id":"A-2002","payments.refund.amount_cents":"2000","payments.refund.reason":"arrived broken"}`
	for _, c := range []struct {
		name string
		d    effector.Decision
		ok   bool
	}{
		{"rejection with arguments", effector.Decision{Approver: "ops", ArgsJSON: edited}, false},
		{"not an object", effector.Decision{Approved: true, Approver: "ops", ArgsJSON: `["A-2002"]`}, false},
		{"not JSON", effector.Decision{Approved: true, Approver: "ops", ArgsJSON: `{"payments.refund.order_id":`}, false},
		{"unknown field", effector.Decision{Approved: true, Approver: "ops", ArgsJSON: `{"payments.refund.order":"A-2002"}`}, false},
		{"over the bound", effector.Decision{Approved: true, Approver: "ops", ArgsJSON: `{"x":"` + strings.Repeat("a", records.MaxApprovalArgsBytes) + `"}`}, false},
		{"edited amount", effector.Decision{Approved: true, Approver: "ops", Note: "half now", ArgsJSON: edited}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, intent.ModeRequire, openBolt(t))
			f.e.Approvals().SetSink(func(context.Context, *pb.AgentEnvelope) error { return nil })
			ti := refundIntent(t, f.kr, "customer-3", pb.ToolIntent_APPROVAL, args)
			if _, err := f.e.Handle(ctx, ti); err != nil {
				t.Fatal(err)
			}
			env, err := f.e.Approvals().DecideWith(ctx, ti.GetIntentId(), c.d)
			if !c.ok {
				if !errors.Is(err, effector.ErrConsole) {
					t.Fatalf("refused with %v, want ErrConsole", err)
				}
				if f.e.Approvals().Open() != 1 {
					t.Fatal("a refused decision decided the approval")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ap := env.GetApproval()
			if ap.GetArgsJson() != edited || records.CheckEnvelope(env) != nil {
				t.Fatalf("decision %v", env)
			}
			if got := intent.VerifyApproval(ap, ti, f.kr); got != intent.OK {
				t.Fatalf("the signed decision verifies as %v", got)
			}
			ap.ArgsJson = args
			if got := intent.VerifyApproval(ap, ti, f.kr); got == intent.OK {
				t.Fatal("the signature does not cover the edited arguments")
			}
		})
	}
}
