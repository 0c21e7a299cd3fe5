package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

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

// Handler is the devices agent with its model loop written as an Eino ReAct agent, compiled
// once: a quiet reading updates the ring and ends (no model call, no Eino run); an anomaly
// runs the ReAct agent, whose tool calls reach devices.lookup (inline) and devices.dispatch
// (a signed intent) through Eino's tools node.
func Handler(prompt string, lookupArgs, dispatchArgs *interaction.Schema) (agent.Handler, error) {
	decls := devices.Decls(lookupArgs, dispatchArgs)
	tools := make([]*eino.Tool, len(decls))
	for i, d := range decls {
		t, err := eino.NewTool(d)
		if err != nil {
			return nil, err
		}
		tools[i] = t
	}
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
		r, err := devices.ParseReading(tr.Event)
		if err != nil {
			return hc.Fail(agent.ReasonEnvelopeInvalid, "%v", err)
		}
		if err := hc.Append(devices.RingKey, []byte(strconv.FormatInt(r.MilliC, 10)), devices.RingSize); err != nil {
			return err
		}
		if r.Quiet() {
			return nil
		}
		recent, err := hc.Ring(devices.RingKey)
		if err != nil {
			return err
		}
		answer, err := ra.Generate(ctx, []*schema.Message{schema.SystemMessage(prompt), schema.UserMessage(devices.Anomaly(r, recent))})
		if err != nil {
			return err
		}
		return hc.Reply(answer.Content)
	}), nil
}

// New is the agent's factory; config is empty or a JSON devices.Config (script, model_id,
// prompt), as for the native agent.
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
	var cfg devices.Config
	if len(config) > 0 {
		if err := json.Unmarshal(config, &cfg); err != nil {
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
	prompt := devices.SystemPrompt
	if cfg.Prompt != "" {
		prompt = cfg.Prompt
	}
	def, err := devices.DefinitionWith(script, prompt)
	if err != nil {
		return agent.Definition{}, err
	}
	la, err := devices.LookupArgs()
	if err != nil {
		return agent.Definition{}, err
	}
	da, err := devices.DispatchArgs()
	if err != nil {
		return agent.Definition{}, err
	}
	if def.Handler, err = Handler(prompt, la, da); err != nil {
		return agent.Definition{}, err
	}
	def.Name = Name
	if cfg.ModelID != "" {
		def.ModelID = cfg.ModelID
	}
	return def, nil
}
