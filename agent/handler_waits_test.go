package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

func init() {
	testHandlers["timer"] = func(testing.TB) agent.Handler { return timerHandler }
	testHandlers["tools_by"] = func(testing.TB) agent.Handler { return toolsByHandler }
	testHandlers["signals"] = func(testing.TB) agent.Handler { return signalsHandler }
	testHandlers["signal_deadline"] = func(testing.TB) agent.Handler { return signalDeadlineHandler }
}

// timerHandler sleeps a minute of event time, then waits until two minutes after its trigger,
// and replies.
func timerHandler(hc *agent.Context, tr agent.Trigger) error {
	if err := hc.Sleep(time.Minute); err != nil {
		return err
	}
	if err := hc.Until(tr.EventTimeMs + 120000); err != nil {
		return err
	}
	return hc.Reply("woke after " + string(tr.Event))
}

// toolsByHandler asks two lookups with a 30-second deadline and replies with what came.
func toolsByHandler(hc *agent.Context, tr agent.Trigger) error {
	res, err := hc.ToolsBy(tr.EventTimeMs+30000,
		agent.ToolCall{Tool: "lookup", ArgsJSON: `{"q":"a"}`},
		agent.ToolCall{Tool: "lookup", ArgsJSON: `{"q":"b"}`})
	if err != nil {
		return err
	}
	var parts []string
	for _, r := range res {
		parts = append(parts, r.GetStatus().String()+":"+string(r.GetPayload()))
	}
	return hc.Reply(strings.Join(parts, " "))
}

// signalsHandler awaits "go", ships what it carried, then takes "note" within a minute.
func signalsHandler(hc *agent.Context, tr agent.Trigger) error {
	gosig, err := hc.Await("go")
	if err != nil {
		return err
	}
	res, err := hc.Tool("ship", string(gosig.GetPayload()))
	if err != nil {
		return err
	}
	note, ok, err := hc.AwaitBy("note", tr.EventTimeMs+60000)
	if err != nil {
		return err
	}
	return hc.Reply(fmt.Sprintf("shipped %s (%s); note %v %s", gosig.GetPayload(), res.GetStatus(), ok, note.GetPayload()))
}

// signalDeadlineHandler awaits "go" for 30 seconds, then "again" without a deadline.
func signalDeadlineHandler(hc *agent.Context, tr agent.Trigger) error {
	sig, ok, err := hc.AwaitBy("go", tr.EventTimeMs+30000)
	if err != nil {
		return err
	}
	again, err := hc.Await("again")
	if err != nil {
		return err
	}
	return hc.Reply(fmt.Sprintf("go %v %s; again %s", ok, sig.GetPayload(), again.GetPayload()))
}

// waitStep is one input of a wait test: an envelope, or a deadline firing at AtMs.
type waitStep struct {
	env  *pb.AgentEnvelope
	atMs int64
}

func waitEvent(t int64, text string) waitStep {
	return waitStep{env: &pb.AgentEnvelope{EntityKey: []byte(entity), EventTimeMs: t, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(text)}}}
}

func waitResult(t int64, seq int64, step uint32, payload string) waitStep {
	return waitStep{env: &pb.AgentEnvelope{EntityKey: []byte(entity), EventTimeMs: t, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
		IntentId: intent.ID([]byte(entity), seq, step), EntityKey: []byte(entity), Seq: seq, Status: pb.ToolResult_OK, Payload: []byte(payload), CompletedAtMs: t}}}}
}

func waitSignal(t int64, name, id, payload string) waitStep {
	return waitStep{env: &pb.AgentEnvelope{EntityKey: []byte(entity), EventTimeMs: t, Payload: &pb.AgentEnvelope_Signal_{Signal: &pb.AgentEnvelope_Signal{
		Name: name, SignalId: id, Payload: []byte(payload), EntityKey: []byte(entity)}}}}
}

func waitFire(atMs int64) waitStep { return waitStep{atMs: atMs} }

// runWaits runs steps on st and returns every output rendered, in emission order.
func runWaits(t *testing.T, a *agent.Agent, st host.MapStore, steps []waitStep) []string {
	t.Helper()
	var out []string
	for _, s := range steps {
		var res *host.Result
		var err error
		if s.env != nil {
			res, err = host.Activate(context.Background(), a, st, s.env, host.Deps{Keyring: testKeyring(t)})
		} else {
			res, err = host.Fire(context.Background(), a, st, []byte(entity), host.TagDeadline, s.atMs, host.Deps{Keyring: testKeyring(t)})
		}
		var ae *agent.Error
		if err != nil && !errors.As(err, &ae) {
			t.Fatalf("untyped error %v", err)
		}
		for _, m := range res.Intents {
			out = append(out, "intent "+compact(m))
		}
		for _, m := range res.Traces {
			out = append(out, "trace "+compact(m))
		}
		for _, m := range res.Finals {
			out = append(out, "final "+compact(m))
		}
		for _, m := range res.DeadLetters {
			out = append(out, "dead_letter "+compact(m))
		}
		st.Apply(res)
	}
	for _, c := range host.Cells() {
		if b, ok := st[c]; ok {
			out = append(out, fmt.Sprintf("state %s = %s", c, renderCell(c, b)))
		}
	}
	return out
}

// An answer at or after a wait's deadline loses whether it reaches the key before the timer
// fires or after: both arrival orders give the same outputs (in another order) and state.
func TestWaitRaceArrivalOrders(t *testing.T) {
	for _, tc := range []struct {
		name, handler string
		before        []waitStep
		late          waitStep
		deadline      int64
		after         []waitStep
	}{
		{"tool result", "tools_by", []waitStep{waitEvent(1000000, "race"), waitResult(1010000, 0, 0, "A")},
			waitResult(1030000, 0, 1, "late"), 1030000, []waitStep{waitEvent(1040000, "again"), waitResult(1041000, 1, 0, "B")}},
		{"signal", "signal_deadline", []waitStep{waitEvent(1000000, "wait")},
			waitSignal(1030000, "go", "g-1", "late"), 1030000, []waitStep{waitSignal(1031000, "again", "a-1", "x")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &scenario{Handler: tc.handler}
			run := func(order ...waitStep) []string {
				a := newTestAgentWith(t, sc.script(t), sc)
				steps := append(append(slices.Clone(tc.before), order...), tc.after...)
				return runWaits(t, a, host.MapStore{}, steps)
			}
			early := run(tc.late, waitFire(tc.deadline))
			late := run(waitFire(tc.deadline), tc.late)
			if !slices.Equal(slices.Sorted(slices.Values(early)), slices.Sorted(slices.Values(late))) {
				t.Fatalf("the arrival orders differ:\nlate answer first:\n%s\ntimer first:\n%s", strings.Join(early, "\n"), strings.Join(late, "\n"))
			}
			if !slices.ContainsFunc(early, func(s string) bool { return strings.HasPrefix(s, "dead_letter ") }) {
				t.Fatal("the late answer is not a dead letter")
			}
		})
	}
}

// A key waiting on a timer or a signal, exported and restored into an empty store, continues
// its wait: the wake (or the signal) gives the same outputs as on the original key.
func TestRestoredKeyContinuesItsWait(t *testing.T) {
	for _, tc := range []struct {
		name, handler string
		start         []waitStep
		then          []waitStep
	}{
		{"timer", "timer", []waitStep{waitEvent(1000000, "first"), waitEvent(1010000, "queued")},
			[]waitStep{waitFire(1060000), waitFire(1120000)}},
		{"signal", "signals", []waitStep{waitEvent(1000000, "order"), waitSignal(1001000, "note", "n-1", "fragile")},
			[]waitStep{waitSignal(1002000, "go", "g-1", "box"), waitResult(1003000, 0, 1, "ok")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &scenario{Handler: tc.handler}
			a := newTestAgentWith(t, sc.script(t), sc)
			orig := host.MapStore{}
			runWaits(t, a, orig, tc.start)
			res, err := host.Activate(context.Background(), a, orig, &pb.AgentEnvelope{EntityKey: []byte(entity), EventTimeMs: 1001500,
				Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{RequestId: "r"}}}, host.Deps{})
			if err != nil || len(res.Snapshots) != 1 {
				t.Fatalf("export: %v", err)
			}
			restored := host.MapStore{}
			rres, err := host.Restore(context.Background(), a, restored, res.Snapshots[0])
			if err != nil {
				t.Fatalf("restore: %v", err)
			}
			restored.Apply(rres)
			want := runWaits(t, a, orig, tc.then)
			got := runWaits(t, a, restored, tc.then)
			if !slices.Equal(got, want) {
				t.Fatalf("restored key:\n%s\noriginal:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "final ") }) {
				t.Fatalf("the wait did not end in a reply:\n%s", strings.Join(got, "\n"))
			}
		})
	}
}

// An approval that carries edited arguments releases the gated tool with them.
func TestApprovedRunsTheEditedArguments(t *testing.T) {
	sc := &scenario{Handler: "approval", Model: []modelRule{{Seq: 0, Step: 0,
		Value: json.RawMessage(`{"case":"assist.refund","fields":{"assist.refund.order_id":"A-1","assist.refund.amount":"500"}}`)}}}
	a := newTestAgentWith(t, sc.script(t), sc)
	edited := `{"assist.refund.order_id":"A-1","assist.refund.amount":"200"}`
	for _, tc := range []struct{ edit, want string }{{"", `"500"`}, {edited, `"200"`}} {
		st := host.MapStore{}
		runWaits(t, a, st, []waitStep{waitEvent(1000000, "refund A-1")})
		res, err := host.Activate(context.Background(), a, st, &pb.AgentEnvelope{EntityKey: []byte(entity), EventTimeMs: 1001000,
			Payload: &pb.AgentEnvelope_Approval_{Approval: &pb.AgentEnvelope_Approval{IntentId: intent.ID([]byte(entity), 0, 1), Approved: true,
				Approver: "ops", ArgsJson: tc.edit}}}, host.Deps{Keyring: testKeyring(t)})
		if err != nil || len(res.Intents) != 1 {
			t.Fatalf("approval: %v, %d intents", err, len(res.Intents))
		}
		if got := res.Intents[0].GetArgsJson(); !strings.Contains(got, `"assist.refund.amount":`+tc.want) {
			t.Errorf("edit %q: the gated intent carries %s", tc.edit, got)
		}
	}
}
