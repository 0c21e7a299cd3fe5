package main

import (
	"context"

	"github.com/firebase/genkit/go/ai"

	"github.com/beamagents/beamagents/adapters/genkit"
	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/examples/devices"
	"github.com/beamagents/beamagents/interaction"
)

// Name is the agent's registered name.
const Name = "devices-genkit"

func init() { agent.Register(Name, New) }

// Config is the factory's configuration: the native devices agent's (script, model_id,
// prompt), a token budget, and an approval gate on dispatches for readings at or above a
// threshold.
type Config = devices.VariantConfig

// Handler is the devices agent with its model loop written as a Genkit generate call (Genkit
// runs the tool loop), built once: a quiet reading updates the ring and ends (no model call,
// no Genkit call); an anomaly runs Genkit's loop, whose tool calls reach devices.lookup
// (inline) and devices.dispatch (a signed intent, behind an approval when cfg gates the
// reading) through Genkit's tools.
func Handler(cfg Config, lookupArgs, dispatchArgs *interaction.Schema) (agent.Handler, error) {
	prompt := cfg.System()
	ga, err := genkit.New(context.Background(), cfg.ToolDecls(lookupArgs, dispatchArgs)...)
	if err != nil {
		return nil, err
	}
	return ga.Handler(func(ctx context.Context, hc *agent.Context, tr agent.Trigger) error {
		r, recent, err := devices.Observe(hc, tr)
		if err != nil || r.Quiet() {
			return err
		}
		// Genkit counts tool rounds: devices.MaxTurns model turns allow one round fewer.
		resp, err := ga.Generate(ctx,
			ai.WithMessages(ai.NewSystemTextMessage(prompt), ai.NewUserTextMessage(devices.Anomaly(r, recent))),
			ai.WithMaxTurns(devices.MaxTurns-1))
		if err != nil {
			return err
		}
		return hc.Reply(resp.Text())
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

// Definition is the native devices agent's definition (model, tools, limits) with the Genkit
// handler.
func Definition(config []byte) (agent.Definition, error) {
	return devices.VariantDefinition(Name, config, Handler)
}
