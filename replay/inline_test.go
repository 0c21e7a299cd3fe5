package replay_test

import (
	"context"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/agenttest"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/replay"
)

// A run launched with a model of its own choosing (another model id) and a handler with an
// inline tool, replayed from its exported snapshots by the agent as registered: every model
// request is answered under the recorded model id, the inline tool is never run again, and
// the outputs are the recorded ones byte for byte.
func TestReplayAnswersModelAndInlineFromTheRecord(t *testing.T) {
	var runs atomic.Int64
	lookup := func(_ context.Context, args []byte) ([]byte, error) {
		runs.Add(1)
		return append([]byte("order "), args...), nil
	}
	a, err := agent.New(agent.Definition{Name: "orders", ModelID: "registered-id", Handler: func(hc *agent.Context, tr agent.Trigger) error {
		order, err := hc.Inline("orders.lookup", tr.Event, lookup)
		if err != nil {
			return err
		}
		turn, err := hc.Chat(agent.Chat{Messages: []model.Message{{Role: model.RoleUser, Content: string(order)}}})
		if err != nil {
			return err
		}
		return hc.Reply(turn.Text)
	}})
	if err != nil {
		t.Fatal(err)
	}
	asked := map[string]bool{}
	launched, err := a.WithModel(agenttest.ModelFunc(func(_ context.Context, req *model.Request) (*model.Response, error) {
		asked[req.Model] = true
		return agenttest.Text("shipped: " + agenttest.Last(req)), nil
	}), "gpt-launch", false)
	if err != nil {
		t.Fatal(err)
	}

	// The recorded run: three keys, two events each, then an export of each key's state.
	var inputs []replay.Input
	for _, k := range []string{"c1", "c2", "c3"} {
		in := replay.Input{Entity: []byte(k)}
		for i, env := range []*pb.AgentEnvelope{
			{EventTimeMs: 1000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(k + "-A")}},
			{EventTimeMs: 2000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(k + "-B")}},
			{EventTimeMs: 3000, Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{RequestId: "end"}}},
		} {
			env.EntityKey = []byte(k)
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(env)
			if err != nil {
				t.Fatal(i, err)
			}
			in.Values = append(in.Values, b)
		}
		inputs = append(inputs, in)
	}
	recorded := map[int64][][]byte{}
	var snaps []*pb.StateSnapshot
	var traces []*pb.TraceEvent
	d := &drive.Driver{Core: drive.Core{Agent: launched, Deps: host.Deps{AllowUnsigned: true}, OrderResolutionMs: 1}}
	for _, in := range inputs {
		d.Run(context.Background(), in.Entity, in.Values, func(kind int64, b []byte) {
			recorded[kind] = append(recorded[kind], b)
			switch kind {
			case records.OutSnapshot:
				s := &pb.StateSnapshot{}
				if err := proto.Unmarshal(b, s); err != nil {
					t.Fatal(err)
				}
				snaps = append(snaps, s)
			case records.OutTrace:
				e := &pb.TraceEvent{}
				if err := proto.Unmarshal(b, e); err != nil {
					t.Fatal(err)
				}
				traces = append(traces, e)
			}
		})
	}
	if runs.Load() != 6 || len(snaps) != 3 || !asked["gpt-launch"] || len(recorded[records.OutFinal]) != 6 {
		t.Fatalf("recorded run: %d inline runs, %d snapshots, models asked %v, %d finals", runs.Load(), len(snaps), asked, len(recorded[records.OutFinal]))
	}

	runs.Store(0)
	m := replay.NewModel(snaps, traces)
	keys, err := replay.Run(context.Background(), a, host.Deps{AllowUnsigned: true}, m, inputs, recorded)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.Divergence != "" {
			t.Errorf("key %s: %s", k.Entity, k.Divergence)
		}
	}
	if runs.Load() != 0 || m.Inlined() != 6 || m.Answered() != 6 || len(m.Misses()) != 0 {
		t.Fatalf("replay: %d inline runs (want 0), %d inline and %d model answers from the record, misses %v", runs.Load(), m.Inlined(), m.Answered(), m.Misses())
	}

	// Without the record of an inline run, the replay reports a miss and still runs nothing.
	m = replay.NewModel(nil, traces)
	keys, err = replay.Run(context.Background(), a, host.Deps{AllowUnsigned: true}, m, inputs[:1], recorded)
	if err != nil {
		t.Fatal(err)
	}
	if misses := m.Misses(); runs.Load() != 0 || len(misses) == 0 || misses[0].Inline != "orders.lookup" || keys[0].Divergence == "" {
		t.Fatalf("no record: %d inline runs, misses %v, divergence %q", runs.Load(), misses, keys[0].Divergence)
	}
}
