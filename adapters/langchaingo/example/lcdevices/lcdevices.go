// Package lcdevices is the devices example (examples/devices) written with langchaingo: an
// agents.Executor over an agents.OpenAIFunctionsAgent whose model and tools are bound to the
// runtime (package langchaingo). Same tools, same behaviour, same outputs' shape: a quiet
// reading updates the memory ring without a model call; an anomaly runs the executor with
// the inline devices.lookup and the side-effecting devices.dispatch, whose uint64 device_id
// reaches the signed intent exactly, and the executor's answer is the final reply.
//
// Its configuration (JSON, all optional) also makes it the conformance agent of the
// adapters' conformance kit: model_id (the model id requests name), script (a model script
// file replacing the recorded one), max_tokens (the activation's token budget) and
// approve_over_milli_c (a dispatch for a reading at or above it waits for an approval).
package lcdevices

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/tools"

	lc "github.com/beamagents/beamagents/adapters/langchaingo"
	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/examples/devices"
	"github.com/beamagents/beamagents/interaction"
)

// Name is the agent's registered name.
const Name = "devices-langchaingo"

// Denied is what the executor observes of a dispatch whose approval was denied.
const Denied = "REJECTED: the dispatch was not approved"

func init() { agent.Register(Name, New) }

// Config is the factory's configuration.
type Config struct {
	Script            string `json:"script,omitempty"`
	ModelID           string `json:"model_id,omitempty"`
	MaxTokens         int64  `json:"max_tokens,omitempty"`
	ApproveOverMilliC int64  `json:"approve_over_milli_c,omitempty"`
}

// New is the agent's factory: config is empty or a JSON Config.
func New(config []byte) (*agent.Agent, error) {
	var cfg Config
	if len(config) > 0 {
		if err := json.Unmarshal(config, &cfg); err != nil {
			return nil, fmt.Errorf("%s agent config: %w", Name, err)
		}
	}
	script := devices.ModelScript
	if cfg.Script != "" {
		b, err := os.ReadFile(cfg.Script)
		if err != nil {
			return nil, err
		}
		script = b
	}
	def, err := devices.DefinitionOf(Name, script, func(la, da *interaction.Schema) agent.Handler { return Handler(cfg, la, da) })
	if err != nil {
		return nil, err
	}
	def.Limits.MaxTokens = cfg.MaxTokens
	if cfg.ModelID != "" {
		def.ModelID = cfg.ModelID
	}
	return agent.New(def)
}

// Handler is the agent: the devices handler's decisions in code, and langchaingo's executor
// for the model's turns.
func Handler(cfg Config, lookupArgs, dispatchArgs *interaction.Schema) agent.Handler {
	return func(hc *agent.Context, tr agent.Trigger) error {
		r, recent, err := devices.Observe(hc, tr)
		if err != nil || r.Quiet() {
			return err
		}
		gated := cfg.ApproveOverMilliC > 0 && r.MilliC >= cfg.ApproveOverMilliC
		decls := devices.ToolDecls(lookupArgs, dispatchArgs)
		llm, bound := lc.Bind(hc, lc.ToolSpec{ToolDecl: decls[0]}, lc.ToolSpec{ToolDecl: decls[1], Approval: gated, Denied: Denied})
		ts := make([]tools.Tool, len(bound))
		for i, t := range bound {
			ts[i] = t
		}
		ex := agents.NewExecutor(
			agents.NewOpenAIFunctionsAgent(llm, ts, agents.NewOpenAIOption().WithSystemMessage(devices.SystemPrompt)),
			agents.WithMaxIterations(devices.MaxTurns))
		out, err := ex.Call(hc.Context(), map[string]any{"input": devices.Anomaly(r, recent)})
		if errors.Is(err, agents.ErrNotFinished) {
			return hc.Fail(agent.ReasonBudgetExceeded, "no answer after %d model turns", devices.MaxTurns)
		}
		if err != nil {
			return err
		}
		text, _ := out["output"].(string)
		return hc.Reply(text)
	}
}
