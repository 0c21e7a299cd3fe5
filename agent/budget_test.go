package agent_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
	"github.com/beamagents/beamagents/tracing"
)

// The token budget decides the same way whether the answers come from the model or from the
// replay cache, which keeps each answer's recorded usage: the same dead letter, and no model
// call on the replay.
func TestTokenBudgetDecidesTheSameOnReplay(t *testing.T) {
	ctx := context.Background()
	doc := func(value string) string {
		return fmt.Sprintf(`{"schema":"beam_agents.interaction-value.v1","root_type_id":"assist.proposal","schema_digest":%q,"value":%s}`+"\n",
			testSchema(t).Digest(), value)
	}
	script := fmt.Sprintf("%s\n%s\n",
		fmt.Sprintf(`{"step":0,"response_text":%q,"input_tokens":90,"output_tokens":20}`, doc(`{"case":"assist.note","fields":{"assist.note.key":"a","assist.note.value":"1"}}`)),
		fmt.Sprintf(`{"step":1,"response_text":%q,"input_tokens":95,"output_tokens":15}`, doc(`{"case":"assist.reply","fields":{"assist.reply.text":"done"}}`)))
	scripted, err := model.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	env := &pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: 1_000_000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("two steps")}}
	deps := host.Deps{AllowUnsigned: true}
	withBudget := func(m model.Model, budget int64) *agent.Agent {
		return newTestAgentWith(t, m, &scenario{Limits: agentLimits{MaxTokens: budget}})
	}

	// Recorded: no budget; the cache keeps both answers and their usage (110 + 110 tokens).
	recorded := host.MapStore{}
	res, err := host.Activate(ctx, withBudget(scripted, 0), recorded, env, deps)
	if err != nil {
		t.Fatal(err)
	}
	recorded.Apply(res)
	cacheOnly := func() host.MapStore {
		return host.MapStore{statecodec.CellLLMCache: recorded[statecodec.CellLLMCache]}
	}
	never := refusingModel{t}

	for _, tc := range []struct {
		name   string
		budget int64
		fails  bool
	}{
		{"the second answer goes over the budget", 150, true},
		{"both answers fit", 220, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			called, err := host.Activate(ctx, withBudget(scripted, tc.budget), host.MapStore{}, env, deps)
			if (err != nil) != tc.fails {
				t.Fatalf("called: %v", err)
			}
			replayed, rerr := host.Activate(ctx, withBudget(never, tc.budget), cacheOnly(), env, deps)
			if (rerr != nil) != tc.fails {
				t.Fatalf("replayed: %v", rerr)
			}
			if tc.fails {
				if !errors.Is(err, &agent.Error{Reason: records.ReasonBudgetExceeded}) || len(called.DeadLetters) != 1 ||
					!proto.Equal(called.DeadLetters[0], replayed.DeadLetters[0]) {
					t.Fatalf("dead letters differ:\n%v\n%v", called.DeadLetters, replayed.DeadLetters)
				}
				if want := "step 1: the activation used 220 tokens; its token budget (MaxTokens) is 150"; called.DeadLetters[0].GetDetail() != "budget_exceeded: "+want {
					t.Fatalf("detail %q", called.DeadLetters[0].GetDetail())
				}
				return
			}
			for _, r := range []*host.Result{called, replayed} {
				if got := tokensTrace(r); got != "110,220" {
					t.Fatalf("charged %s, want 110,220", got)
				}
			}
		})
	}
}

func tokensTrace(r *host.Result) string {
	s := ""
	for _, ev := range r.Outputs.Traces {
		if ev.GetEventType() == pb.TraceEvent_LLM_CALL {
			if s != "" {
				s += ","
			}
			s += ev.GetAttributes()[tracing.AttrTokens]
		}
	}
	return s
}

// refusingModel fails the test when asked: every answer must come from the replay cache.
type refusingModel struct{ t *testing.T }

func (m refusingModel) Generate(context.Context, *model.Request) (*model.Response, error) {
	m.t.Error("the model was called")
	return nil, &model.Error{Code: model.CodeProvider, Detail: "not to be called"}
}
