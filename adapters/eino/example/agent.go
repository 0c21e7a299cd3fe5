package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"

	"github.com/beamagents/beamagents/adapters/eino"
	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/examples/devices"
	"github.com/beamagents/beamagents/interaction"
)

// Name is the agent's registered name.
const Name = "devices-eino"

func init() { agent.Register(Name, New) }

// Denied is the tool message of a dispatch whose approval was denied.
const Denied = "REJECTED: the dispatch was not approved"

// Config is the factory's configuration: the native devices agent's (script, model_id,
// prompt), a token budget, and an approval gate on dispatches for readings at or above a
// threshold.
type Config struct {
	devices.Config
	// MaxTokens is the activation's token budget (agent.Limits.MaxTokens); 0 means none.
	MaxTokens int64 `json:"max_tokens,omitempty"`
	// ApproveOverMilliC > 0 gates devices.dispatch behind an approval when the reading is at
	// or above it.
	ApproveOverMilliC int64 `json:"approve_over_milli_c,omitempty"`
}

// Handler is the devices agent with its model loop written as an Eino ReAct agent, compiled
// once: a quiet reading updates the ring and ends (no model call, no Eino run); an anomaly
// runs the ReAct agent, whose tool calls reach devices.lookup (inline) and devices.dispatch
// (a signed intent, behind an approval when cfg gates the reading) through Eino's tools node.
func Handler(cfg Config, lookupArgs, dispatchArgs *interaction.Schema) (agent.Handler, error) {
	prompt := devices.SystemPrompt
	if cfg.Prompt != "" {
		prompt = cfg.Prompt
	}
	decls := devices.ToolDecls(lookupArgs, dispatchArgs)
	lookup, err := eino.NewTool(decls[0])
	if err != nil {
		return nil, err
	}
	dispatchDecl := decls[1]
	dispatch, err := eino.NewTool(dispatchDecl)
	if cfg.ApproveOverMilliC > 0 {
		dispatch, err = eino.NewGatedTool(dispatchDecl, eino.Gate{Needed: func(hc *agent.Context, _ string) bool {
			r, err := devices.ParseReading(hc.Trigger().Event)
			return err == nil && r.MilliC >= cfg.ApproveOverMilliC
		}, Denied: Denied})
	}
	if err != nil {
		return nil, err
	}
	tools := []*eino.Tool{lookup, dispatch}
	// Each model turn is one step of the ReAct graph and each tools round another: the step
	// limit allows devices.MaxTurns turns with their tools, as the native agent does.
	ra, err := react.NewAgent(context.Background(), &react.AgentConfig{
		ToolCallingModel: eino.NewModel(eino.Decls(tools...)...),
		ToolsConfig:      eino.ToolsConfig(tools...),
		MaxStep:          2 * devices.MaxTurns,
	})
	if err != nil {
		return nil, err
	}
	return eino.Handler(func(ctx context.Context, hc *agent.Context, tr agent.Trigger) error {
		r, recent, err := devices.Observe(hc, tr)
		if err != nil || r.Quiet() {
			return err
		}
		answer, err := ra.Generate(ctx, []*schema.Message{schema.SystemMessage(prompt), schema.UserMessage(devices.Anomaly(r, recent))})
		if err != nil {
			return err
		}
		return hc.Reply(answer.Content)
	}), nil
}

// New is the agent's factory; config is empty or a JSON Config.
func New(config []byte) (*agent.Agent, error) {
	def, err := Definition(config)
	if err != nil {
		return nil, err
	}
	return agent.New(def)
}

// Definition is the native devices agent's definition (model, tools, limits) with the Eino
// handler.
func Definition(config []byte) (agent.Definition, error) {
	var cfg Config
	if len(bytes.TrimSpace(config)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(config))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return agent.Definition{}, fmt.Errorf("%s agent config: %w", Name, err)
		}
	}
	script := devices.ModelScript
	if cfg.Script != "" {
		b, err := os.ReadFile(cfg.Script)
		if err != nil {
			return agent.Definition{}, err
		}
		script = b
	}
	var herr error
	def, err := devices.DefinitionOf(Name, script, func(la, da *interaction.Schema) agent.Handler {
		h, err := Handler(cfg, la, da)
		herr = err
		return h
	})
	if err == nil {
		err = herr
	}
	if err != nil {
		return agent.Definition{}, err
	}
	def.Limits.MaxTokens = cfg.MaxTokens
	if cfg.ModelID != "" {
		def.ModelID = cfg.ModelID
	}
	return def, nil
}
