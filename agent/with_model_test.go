package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
)

// askedModel answers like fixedModel and keeps the model id of every request it was asked.
type askedModel struct {
	fixedModel
	mu    sync.Mutex
	asked []string
}

func (m *askedModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	m.mu.Lock()
	m.asked = append(m.asked, req.Model)
	m.mu.Unlock()
	return m.fixedModel.Generate(ctx, req)
}

// WithModel is the one model swap: the new model answers every call, under the agent's model
// id unless it is given another, and the agent's own model is never asked.
func TestWithModel(t *testing.T) {
	text := replyHi(t)
	for _, tc := range []struct {
		name, id, want string
	}{
		{name: "keeps the model id", id: "", want: "scripted-1"},
		{name: "takes a launcher's model id", id: "gpt-x", want: "gpt-x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			own := &askedModel{fixedModel: fixedModel{resp: &model.Response{Text: []byte(text)}}}
			swapped := &askedModel{fixedModel: fixedModel{resp: &model.Response{Text: []byte(text)}}}
			a := newTestAgent(t, own, agentLimits{}, false)
			if a.PinsModel() {
				t.Fatal("the test agent pins its model")
			}
			b, err := a.WithModel(swapped, tc.id, true)
			if err != nil {
				t.Fatal(err)
			}
			env := &pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: 1_000_000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("hi")}}
			res, err := host.Activate(context.Background(), b, host.MapStore{}, env, host.Deps{AllowUnsigned: true})
			if err != nil || len(res.Outputs.Finals) != 1 {
				t.Fatalf("activation: %v, %d finals", err, len(res.Outputs.Finals))
			}
			if len(own.asked) != 0 || len(swapped.asked) != 1 || swapped.asked[0] != tc.want {
				t.Fatalf("own model asked %v, swapped model asked %v; want one request for %q", own.asked, swapped.asked, tc.want)
			}
		})
	}
}
