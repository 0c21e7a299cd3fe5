package agenttest_test

import (
	"testing"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/agenttest"
	"github.com/beamagents/beamagents/agent/shard"
	"github.com/beamagents/beamagents/model"
)

// A sharded agent's events go to their sub-keys, and an answer to an intent comes back to the
// sub-key that made it.
func TestShardedHarness(t *testing.T) {
	a, err := agent.New(agent.Definition{Name: "hot", Model: &model.Scripted{}, Shards: 8,
		Handler: func(hc *agent.Context, _ agent.Trigger) error {
			r, err := hc.Tool("audit", `{}`)
			if err != nil {
				return err
			}
			return hc.Reply(string(r.GetPayload()))
		}})
	if err != nil {
		t.Fatal(err)
	}
	h := agenttest.New(t, a, agenttest.Options{})
	res := h.Send("dev", []byte("ping"))
	if len(res.Intents) != 1 {
		t.Fatalf("intents %v, dead letters %v", res.Intents, res.DeadLetters)
	}
	sub := res.Intents[0].GetEntityKey()
	if entity, _, ok := shard.Split(sub, 8); !ok || string(entity) != "dev" {
		t.Fatalf("intent of %q, want a sub-key of dev", sub)
	}
	h.Answer(res.Intents[0], []byte("done"))
	if got := h.Replies(string(sub)); len(got) != 1 || got[0] != "done" {
		t.Fatalf("replies of %q: %q", sub, got)
	}
	if got := h.Replies("dev"); len(got) != 0 {
		t.Fatalf("the entity's own key replied %q", got)
	}
}
