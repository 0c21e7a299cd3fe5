package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/model"
)

// BenchmarkWaitRoundTrips: one durable wait's round trip on a fresh key, by what answers it:
// an external event whose handler waits (a TOOL intent, a timer, a signal), then the answer
// that resumes it to a reply (the tool result, the deadline firing at the wake time, the
// Signal envelope). No model call: the figures are the runtime's own work per wait.
func BenchmarkWaitRoundTrips(b *testing.B) {
	for _, tc := range []struct {
		name    string
		handler agent.Handler
		answer  func() waitStep
	}{
		{"tool_result", func(hc *agent.Context, tr agent.Trigger) error {
			if _, err := hc.Tool("ship", `{"box":"7"}`); err != nil {
				return err
			}
			return hc.Reply("shipped")
		}, func() waitStep { return waitResult(2000, 0, 0, `{}`) }},
		{"timer", func(hc *agent.Context, tr agent.Trigger) error {
			if err := hc.Sleep(time.Second); err != nil {
				return err
			}
			return hc.Reply("woke")
		}, func() waitStep { return waitFire(2000) }},
		{"signal", func(hc *agent.Context, tr agent.Trigger) error {
			if _, err := hc.Await("go"); err != nil {
				return err
			}
			return hc.Reply("went")
		}, func() waitStep { return waitSignal(2000, "go", "g-1", "box 7") }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			a, err := agent.New(agent.Definition{Name: "waits", Handler: tc.handler, Model: &model.Scripted{}})
			if err != nil {
				b.Fatal(err)
			}
			deps := host.Deps{Keyring: testKeyring(b)}
			ctx := context.Background()
			start := waitEvent(1000, "go").env
			b.ReportAllocs()
			for b.Loop() {
				st := host.MapStore{}
				res, err := host.Activate(ctx, a, st, start, deps)
				if err != nil {
					b.Fatal(err)
				}
				st.Apply(res)
				ans := tc.answer()
				if ans.env != nil {
					res, err = host.Activate(ctx, a, st, ans.env, deps)
				} else {
					res, err = host.Fire(ctx, a, st, []byte(entity), host.TagDeadline, ans.atMs, deps)
				}
				if err != nil || len(res.Finals) != 1 {
					b.Fatalf("%v, %d finals", err, len(res.Finals))
				}
			}
		})
	}
}
