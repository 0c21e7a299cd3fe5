// Package lcdevices is the devices example (examples/devices) written with langchaingo: an
// agents.Executor over an agents.OpenAIFunctionsAgent whose model and tools are bound to the
// runtime (package langchaingo). Same tools, same behaviour, same outputs' shape: a quiet
// reading updates the memory ring without a model call; an anomaly runs the executor with
// the inline devices.lookup and the side-effecting devices.dispatch, whose uint64 device_id
// reaches the signed intent exactly, and the executor's answer is the final reply.
//
// Its configuration (JSON, all optional, devices.VariantConfig) also makes it the conformance
// agent of the adapters' conformance kit: model_id (the model id requests name), script (a
// model script file replacing the recorded one), prompt (the system prompt), max_tokens (the
// activation's token budget) and approve_over_milli_c (a dispatch for a reading at or above
// it waits for an approval).
package lcdevices

import (
	"errors"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/beamagents/beamagents/adapters/langchaingo"
	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/examples/devices"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/records"
)

// Name is the agent's registered name.
const Name = "devices-langchaingo"

func init() { agent.Register(Name, New) }

// Config is the factory's configuration: the native devices agent's (script, model_id,
// prompt), a token budget, and an approval gate on dispatches for readings at or above a
// threshold.
type Config = devices.VariantConfig

// New is the agent's factory: config is empty or a JSON Config (unknown members refused).
func New(config []byte) (*agent.Agent, error) {
	def, err := devices.VariantDefinition(Name, config, func(cfg Config, la, da *interaction.Schema) (agent.Handler, error) {
		return Handler(cfg, la, da), nil
	})
	if err != nil {
		return nil, err
	}
	return agent.New(def)
}

// Handler is the agent: the devices handler's decisions in code, and langchaingo's executor
// for the model's turns, over a model and tools built once.
func Handler(cfg Config, lookupArgs, dispatchArgs *interaction.Schema) agent.Handler {
	llm, bound := lc.New(cfg.ToolDecls(lookupArgs, dispatchArgs)...)
	ts := make([]tools.Tool, len(bound))
	for i, t := range bound {
		ts[i] = t
	}
	return func(hc *agent.Context, tr agent.Trigger) error {
		r, recent, err := devices.Observe(hc, tr)
		if err != nil || r.Quiet() {
			return err
		}
		ex := agents.NewExecutor(
			agents.NewOpenAIFunctionsAgent(llm, ts, agents.NewOpenAIOption().WithSystemMessage(cfg.System())),
			agents.WithMaxIterations(devices.MaxTurns))
		out, err := ex.Call(hc.Context(), map[string]any{"input": devices.Anomaly(r, recent)})
		if errors.Is(err, agents.ErrNotFinished) {
			return hc.Fail(records.ReasonBudgetExceeded, "no answer after %d model turns", devices.MaxTurns)
		}
		if err != nil {
			return err
		}
		text, _ := out["output"].(string)
		return hc.Reply(text)
	}
}
