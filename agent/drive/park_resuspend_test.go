package drive_test

import (
	"context"
	"testing"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

// A parked key restored with the answer it waited for, which suspends again on a later
// deadline (a tool then an approval, as a handler that notes a ticket before asking for a
// refund does), parks once at the end of the resumed input.
func TestParkedKeyThatSuspendsAgainParksOnce(t *testing.T) {
	kr, err := intent.NewKeyring("k", map[string][]byte{"k": make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Definition{Name: "resuspend", Limits: agent.Limits{ToolTimeoutMs: 300_000, ApprovalTimeoutMs: 86_400_000},
		Handler: func(hc *agent.Context, tr agent.Trigger) error {
			if _, err := hc.Tool("tickets.note", `{"text":"hi"}`); err != nil {
				return err
			}
			_, _, err := hc.Approved("payments.refund", `{"order":"A-1"}`)
			if err != nil {
				return err
			}
			return hc.Reply("done")
		}})
	if err != nil {
		t.Fatal(err)
	}
	const t0 = int64(1767225600000)
	key := []byte("c1")
	d := &drive.Driver{Core: drive.Core{Agent: a, Deps: host.Deps{Keyring: kr}, OrderResolutionMs: 1, Park: true, EndMs: t0}}
	r1 := runKey(t, d, key, envelope(t, &pb.AgentEnvelope{EntityKey: key, EventTimeMs: t0, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("refund A-1")}}))
	if len(r1.snaps) != 1 || len(r1.intents) != 1 {
		t.Fatalf("run 1: %d snapshots, %d intents", len(r1.snaps), len(r1.intents))
	}
	note := r1.intents[0]
	res := &pb.ToolResult{IntentId: note.GetIntentId(), EntityKey: key, Status: pb.ToolResult_OK, CompletedAtMs: t0 + 1000}
	intent.SignResult(res, note, kr)
	d.EndMs = t0 + 1000
	r2 := runKey(t, d, key, drive.RestoreValue(r1.snaps[0]), envelope(t, &pb.AgentEnvelope{EntityKey: key, EventTimeMs: t0 + 1000, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: res}}))
	if len(r2.snaps) != 1 || len(r2.intents) != 1 || r2.intents[0].GetKind() != pb.ToolIntent_APPROVAL || len(r2.dead) != 0 {
		t.Fatalf("run 2: %d snapshots, intents %v, dead letters %v", len(r2.snaps), r2.intents, r2.dead)
	}

	// A stale deadline (the restored suspension's, which the resumed activation moved) that
	// fires after the end, as a shell's buffer may still hold it, parks nothing more.
	parked := r2.snaps[0]
	store := host.MapStore{}
	b := d.Batch(store)
	d.Restore(context.Background(), b, parked, drive.Timers{}, func(*host.Result) {})
	stale := parked.GetContinuation().GetDeadlineMs() - 1
	var out int
	e := d.Step(context.Background(), b, key, drive.Trigger{Tag: host.TagDeadline, AtMs: stale},
		drive.ReadBuffer([][]byte{drive.AppendTimers(nil, drive.Timers{host.TagDeadline: stale})}, stale))
	for range e.Outputs {
		out++
	}
	if out != 0 {
		t.Fatalf("a stale deadline after the end parked the key again: %d outputs", out)
	}
	e = d.Step(context.Background(), b, key, drive.Trigger{Tag: host.TagDeadline, AtMs: stale + 1},
		drive.ReadBuffer([][]byte{drive.AppendTimers(nil, drive.Timers{host.TagDeadline: stale + 1})}, stale+1))
	if len(e.Outputs) != 1 {
		t.Fatalf("the current deadline after the end parks the key: %d outputs", len(e.Outputs))
	}
}
