package devices

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/examples/devices/devicespb"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
)

// Name is the agent's registered name.
const Name = "devices"

// Tools the agent declares to the model.
const (
	ToolLookup   = "devices.lookup"
	ToolDispatch = "devices.dispatch"
)

// The tools' descriptions, as the model is shown them.
const (
	LookupDescription   = "Looks a device up: its model and site."
	DispatchDescription = "Dispatches a technician to a device."
)

// The normal band of a reading, in milli-°C, and the memory ring of recent readings.
const (
	BandLowMilliC  = -20000
	BandHighMilliC = 60000
	RingKey        = "readings"
	RingSize       = 8
	// MaxTurns bounds the model turns of one anomaly.
	MaxTurns = 4
)

// ModelScript is the recorded model: answers keyed by (entity, seq, step).
//
//go:embed model_script.jsonl
var ModelScript []byte

// Envelopes is the demo input: JSON Lines of AgentEnvelopes.
//
//go:embed envelopes.jsonl
var Envelopes []byte

func init() { agent.Register(Name, New) }

// Device is one row of the lookup table.
type Device struct {
	DeviceID uint64 `json:"device_id,string"`
	Model    string `json:"model"`
	Site     string `json:"site"`
}

// Devices is the table devices.lookup reads.
var Devices = map[uint64]Device{
	17:               {DeviceID: 17, Model: "TX-200 freezer probe", Site: "warehouse 3, aisle 12"},
	9007199254740993: {DeviceID: 9007199254740993, Model: "KV-9 boiler sensor", Site: "plant 1, boiler room"},
}

// Reading is a decoded external event.
type Reading struct {
	DeviceID uint64
	MilliC   int64
}

// Quiet reports whether the reading is within the normal band.
func (r Reading) Quiet() bool { return r.MilliC >= BandLowMilliC && r.MilliC <= BandHighMilliC }

// ErrReading matches every error ParseReading returns.
var ErrReading = errors.New("devices: not a reading")

// ParseReading decodes a reading strictly: exactly the members device_id (a uint64 as a
// canonical decimal string) and milli_c (a JSON integer), nothing else.
func ParseReading(b []byte) (Reading, error) {
	var raw struct {
		DeviceID *string     `json:"device_id"`
		MilliC   json.Number `json:"milli_c"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return Reading{}, fmt.Errorf("%w: %v", ErrReading, err)
	}
	if dec.More() {
		return Reading{}, fmt.Errorf("%w: data after the reading", ErrReading)
	}
	if raw.DeviceID == nil || raw.MilliC == "" {
		return Reading{}, fmt.Errorf("%w: device_id and milli_c are required", ErrReading)
	}
	id, err := strconv.ParseUint(*raw.DeviceID, 10, 64)
	if err != nil || strconv.FormatUint(id, 10) != *raw.DeviceID {
		return Reading{}, fmt.Errorf("%w: device_id %q is not a canonical uint64", ErrReading, *raw.DeviceID)
	}
	mc, err := strconv.ParseInt(string(raw.MilliC), 10, 64)
	if err != nil {
		return Reading{}, fmt.Errorf("%w: milli_c %s is not an integer", ErrReading, raw.MilliC)
	}
	return Reading{DeviceID: id, MilliC: mc}, nil
}

// LookupArgs and DispatchArgs compile the tools' argument schemas.
func LookupArgs() (*interaction.Schema, error) {
	return interaction.Compile((&devicespb.LookupArgs{}).ProtoReflect().Descriptor())
}

// DispatchArgs compiles the argument schema of devices.dispatch.
func DispatchArgs() (*interaction.Schema, error) {
	return interaction.Compile((&devicespb.DispatchArgs{}).ProtoReflect().Descriptor())
}

// SystemPrompt instructs the model.
const SystemPrompt = `You watch temperature sensors. A reading outside the normal band arrived. Look the device up, then either dispatch a technician (devices.dispatch) or explain why not. End with a one-sentence summary for the operator.`

// Lookup is devices.lookup, an inline read-only tool: the device's row of Devices, or an
// error for an unknown device.
func Lookup(_ context.Context, args []byte) ([]byte, error) {
	var a struct {
		DeviceID uint64 `json:"device_id,string"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	d, ok := Devices[a.DeviceID]
	if !ok {
		return nil, fmt.Errorf("no device %d", a.DeviceID)
	}
	return json.Marshal(d)
}

// Handler is the agent, instructed by prompt (SystemPrompt, or a configured one).
func Handler(prompt string, lookupArgs, dispatchArgs *interaction.Schema) agent.Handler {
	decls := ToolDecls(lookupArgs, dispatchArgs)
	return func(hc *agent.Context, tr agent.Trigger) error {
		r, recent, err := Observe(hc, tr)
		if err != nil || r.Quiet() {
			return err
		}
		msgs := []model.Message{{Role: model.RoleSystem, Content: prompt}, {Role: model.RoleUser, Content: Anomaly(r, recent)}}
		for range MaxTurns {
			turn, err := hc.Chat(agent.Chat{Messages: msgs, Tools: decls})
			if err != nil {
				return err
			}
			if len(turn.Calls) == 0 {
				return hc.Reply(turn.Text)
			}
			more, err := hc.RunTools(turn, decls)
			if err != nil {
				return err
			}
			msgs = append(msgs, more...)
		}
		return hc.Fail(records.ReasonBudgetExceeded, "no answer after %d model turns", MaxTurns)
	}
}

// Observe decodes the trigger's reading (an undecodable one fails the activation as
// envelope_invalid) and appends it to the ring of recent readings; for an anomaly it also
// returns the ring's entries, oldest first. A quiet reading needs nothing more: the handler
// returns.
func Observe(hc *agent.Context, tr agent.Trigger) (Reading, [][]byte, error) {
	r, err := ParseReading(tr.Event)
	if err != nil {
		return Reading{}, nil, hc.Fail(records.ReasonEnvelopeInvalid, "%v", err)
	}
	if err := hc.Append(RingKey, []byte(strconv.FormatInt(r.MilliC, 10)), RingSize); err != nil {
		return r, nil, err
	}
	if r.Quiet() {
		return r, nil, nil
	}
	recent, err := hc.Ring(RingKey)
	return r, recent, err
}

// Anomaly is the user message of an anomaly: the reading and the recent ones (the ring's
// entries), oldest first.
func Anomaly(r Reading, recent [][]byte) string {
	parts := make([]string, len(recent))
	for i, e := range recent {
		parts[i] = string(e)
	}
	return fmt.Sprintf("Device %d reads %d milli-°C, outside the normal band [%d, %d]. Recent readings (milli-°C, oldest first): %s.",
		r.DeviceID, r.MilliC, BandLowMilliC, BandHighMilliC, strings.Join(parts, ", "))
}

// Config is the factory's configuration: an optional model script file replacing the
// recorded one, the model id requests name (part of every replay-cache key: replaying a run
// recorded against a provider names the provider's model), and a system prompt replacing
// SystemPrompt (a changed handler: a suspension recorded with another prompt resumes as
// nondeterministic_agent).
type Config struct {
	Script  string `json:"script,omitempty"`
	ModelID string `json:"model_id,omitempty"`
	Prompt  string `json:"prompt,omitempty"`
}

// New is the agent's factory: config is empty or a JSON Config.
func New(config []byte) (*agent.Agent, error) {
	var cfg Config
	if len(config) > 0 {
		if err := json.Unmarshal(config, &cfg); err != nil {
			return nil, fmt.Errorf("devices agent config: %w", err)
		}
	}
	script, err := cfg.modelScript()
	if err != nil {
		return nil, err
	}
	def, err := DefinitionWith(script, cfg.System())
	if err != nil {
		return nil, err
	}
	if cfg.ModelID != "" {
		def.ModelID = cfg.ModelID
	}
	return agent.New(def)
}

// Definition is the agent's definition with a scripted model answering from script.
func Definition(script []byte) (agent.Definition, error) { return DefinitionWith(script, SystemPrompt) }

// DefinitionWith is Definition with the system prompt prompt.
func DefinitionWith(script []byte, prompt string) (agent.Definition, error) {
	return DefinitionOf(Name, script, func(la, da *interaction.Schema) agent.Handler { return Handler(prompt, la, da) })
}

// ToolDecls declares the agent's two tools to the model: devices.lookup inline, devices.dispatch
// side-effecting.
func ToolDecls(lookupArgs, dispatchArgs *interaction.Schema) []agent.ToolDecl {
	return []agent.ToolDecl{
		{Name: ToolLookup, Description: LookupDescription, Args: lookupArgs, Inline: Lookup},
		{Name: ToolDispatch, Description: DispatchDescription, Args: dispatchArgs},
	}
}

// DefinitionOf is the definition of a devices agent named name, answered by a scripted model
// from script, whose handler handler builds from the tools' argument schemas: the model,
// tools and limits every implementation of the devices agent shares (written with another
// framework, for example).
func DefinitionOf(name string, script []byte, handler func(lookupArgs, dispatchArgs *interaction.Schema) agent.Handler) (agent.Definition, error) {
	m, err := model.ParseScript(script)
	if err != nil {
		return agent.Definition{}, err
	}
	la, err := LookupArgs()
	if err != nil {
		return agent.Definition{}, err
	}
	da, err := DispatchArgs()
	if err != nil {
		return agent.Definition{}, err
	}
	return agent.Definition{
		Name:    name,
		Handler: handler(la, da),
		Model:   m,
		ModelID: "devices-scripted-1",
		Tools:   map[string]agent.ToolDecl{ToolDispatch: {Args: da}},
		Limits:  agent.Limits{ToolTimeoutMs: 10 * 60 * 1000, MaxEscalations: 2},
	}, nil
}
