package devices

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/interaction"
)

// VariantConfig configures a devices agent written another way (with an agent framework,
// for example): Config's members, a token budget and an approval gate on dispatches.
type VariantConfig struct {
	Config
	// MaxTokens is the activation's token budget (agent.Limits.MaxTokens); 0 means none.
	MaxTokens int64 `json:"max_tokens,omitempty"`
	// ApproveOverMilliC > 0 gates devices.dispatch behind an approval when the reading is at
	// or above it.
	ApproveOverMilliC int64 `json:"approve_over_milli_c,omitempty"`
}

// Gated reports whether a dispatch for a reading of milliC needs an approval.
func (c VariantConfig) Gated(milliC int64) bool {
	return c.ApproveOverMilliC > 0 && milliC >= c.ApproveOverMilliC
}

// DeniedDispatch is the tool message of a dispatch whose approval was denied.
const DeniedDispatch = "REJECTED: the dispatch was not approved"

// ToolDecls are the tools' declarations (ToolDecls) with the configured gate: a dispatch
// needs an approval when the activation's reading is Gated (RunTools asks for it, and a
// denied one is answered with DeniedDispatch).
func (c VariantConfig) ToolDecls(lookupArgs, dispatchArgs *interaction.Schema) []agent.ToolDecl {
	decls := ToolDecls(lookupArgs, dispatchArgs)
	if c.ApproveOverMilliC > 0 {
		decls[1].NeedsApproval = func(hc *agent.Context, _ agent.ToolCall) bool {
			r, err := ParseReading(hc.Trigger().Event)
			return err == nil && c.Gated(r.MilliC)
		}
		decls[1].Denied = DeniedDispatch
	}
	return decls
}

// System is the configured system prompt: Prompt, or SystemPrompt when it is empty.
func (c Config) System() string {
	if c.Prompt != "" {
		return c.Prompt
	}
	return SystemPrompt
}

// modelScript is the configured model script: the file Script names, or ModelScript.
func (c Config) modelScript() ([]byte, error) {
	if c.Script == "" {
		return ModelScript, nil
	}
	return os.ReadFile(c.Script)
}

// VariantDefinition is the definition of a devices agent named name and configured by config
// (empty, or a JSON VariantConfig; unknown members are refused), whose handler build makes
// from the configuration and the tools' argument schemas (DefinitionOf).
func VariantDefinition(name string, config []byte, build func(cfg VariantConfig, lookupArgs, dispatchArgs *interaction.Schema) (agent.Handler, error)) (agent.Definition, error) {
	var cfg VariantConfig
	if len(bytes.TrimSpace(config)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(config))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return agent.Definition{}, fmt.Errorf("%s agent config: %w", name, err)
		}
		if dec.More() {
			return agent.Definition{}, fmt.Errorf("%s agent config: data after the object", name)
		}
	}
	script, err := cfg.modelScript()
	if err != nil {
		return agent.Definition{}, err
	}
	var herr error
	def, err := DefinitionOf(name, script, func(la, da *interaction.Schema) agent.Handler {
		h, err := build(cfg, la, da)
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
