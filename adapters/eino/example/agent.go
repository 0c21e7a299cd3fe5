package main

import (
	"context"

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

// Config is the factory's configuration: the native devices agent's (script, model_id,
// prompt), a token budget, and an approval gate on dispatches for readings at or above a
// threshold.
type Config = devices.VariantConfig

// Handler is the devices agent with its model loop written as an Eino ReAct agent, compiled
// once: a quiet reading updates the ring and ends (no model call, no Eino run); an anomaly
// runs the ReAct agent, whose tool calls reach devices.lookup (inline) and devices.dispatch
// (a signed intent, behind an approval when cfg gates the reading) through Eino's tools node.
func Handler(cfg Config, lookupArgs, dispatchArgs *interaction.Schema) (agent.Handler, error) {
	prompt := cfg.System()
	decls := cfg.ToolDecls(lookupArgs, dispatchArgs)
	lookup, err := eino.NewTool(decls[0])
	if err != nil {
		return nil, err
	}
	dispatch, err := eino.NewTool(decls[1])
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
	return devices.VariantDefinition(Name, config, Handler)
}
