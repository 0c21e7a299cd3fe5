package conformance

import (
	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/examples/devices"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
)

// NativeAgent is the registered name of the kit's implementation of the conformance agent on
// the handler API.
const NativeAgent = "devices-native"

func init() { agent.Register(NativeAgent, NewNative) }

// NewNative is NativeAgent's factory: config is a JSON Config.
func NewNative(config []byte) (*agent.Agent, error) {
	cfg, err := ParseConfig(config)
	if err != nil {
		return nil, err
	}
	def, err := devices.DefinitionOf(NativeAgent, devices.ModelScript, func(la, da *interaction.Schema) agent.Handler { return nativeHandler(cfg, la, da) })
	if err != nil {
		return nil, err
	}
	def.Limits.MaxTokens = cfg.MaxTokens
	if cfg.ModelID != "" {
		def.ModelID = cfg.ModelID
	}
	return agent.New(def)
}

// nativeHandler is devices.Handler with the approval gate: the dispatch's declaration
// gates it (devices.VariantConfig.ToolDecls), and RunTools asks for the approval.
func nativeHandler(cfg Config, la, da *interaction.Schema) agent.Handler {
	decls := devices.VariantConfig{ApproveOverMilliC: cfg.ApproveOverMilliC}.ToolDecls(la, da)
	return func(hc *agent.Context, tr agent.Trigger) error {
		r, recent, err := devices.Observe(hc, tr)
		if err != nil || r.Quiet() {
			return err
		}
		msgs := []model.Message{{Role: model.RoleSystem, Content: devices.SystemPrompt}, {Role: model.RoleUser, Content: devices.Anomaly(r, recent)}}
		for range devices.MaxTurns {
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
		return hc.Fail(records.ReasonBudgetExceeded, "no answer after %d model turns", devices.MaxTurns)
	}
}
