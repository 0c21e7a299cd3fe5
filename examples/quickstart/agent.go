package main

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/examples/quickstart/quickstartpb"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/model"
)

// Name is the agent's registered name.
const Name = "triage"

// ToolOpenTicket is the tool an open_ticket proposal calls.
const ToolOpenTicket = "tickets.open"

// SystemPrompt instructs the model.
const SystemPrompt = `You triage messages from the users of a small web service. Answer a question you can answer; for a bug report or an outage, open a ticket with a short title and a priority from 1 (urgent) to 4. Answer with exactly one JSON value that satisfies the response schema.`

// ModelScript is the recorded model the agent uses unless --model chooses another.
//
//go:embed model_script.jsonl
var ModelScript []byte

// Envelopes is sample input for `run`.
//
//go:embed envelopes.jsonl
var Envelopes []byte

func init() { agent.Register(Name, New) }

// Schema compiles the proposal schema from the generated quickstartpb.Proposal.
func Schema() (*interaction.Schema, error) {
	return interaction.Compile((&quickstartpb.Proposal{}).ProtoReflect().Descriptor())
}

// New is the agent's factory. config is empty or {"model_id": "..."}; the model itself is
// chosen at launch (--model), the recorded script standing in when none is.
func New(config []byte) (*agent.Agent, error) {
	var cfg struct {
		ModelID string `json:"model_id"`
	}
	if len(config) > 0 {
		if err := json.Unmarshal(config, &cfg); err != nil {
			return nil, fmt.Errorf("triage agent config: %w", err)
		}
	}
	if cfg.ModelID == "" {
		cfg.ModelID = "triage-scripted-1"
	}
	schema, err := Schema()
	if err != nil {
		return nil, err
	}
	m, err := model.ParseScript(ModelScript)
	if err != nil {
		return nil, err
	}
	return bindings.New(bindings.Definition{
		Definition: agent.Definition{Name: Name, Schema: schema, Model: m, ModelID: cfg.ModelID},
		Prompt:     bindings.DefaultPrompt(SystemPrompt),
		Bindings: map[string]bindings.Action{
			"triage.answer":      bindings.Final(),
			"triage.open_ticket": bindings.Tool(ToolOpenTicket),
		},
	})
}
