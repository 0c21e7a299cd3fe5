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

// nativeHandler is devices.Handler with the approval gate: a turn that calls no gated tool
// is answered by RunTools exactly as the devices agent does.
func nativeHandler(cfg Config, la, da *interaction.Schema) agent.Handler {
	decls := devices.ToolDecls(la, da)
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
			var more []model.Message
			if cfg.Gated(r.MilliC) {
				more, err = gatedTools(hc, turn, decls)
			} else {
				more, err = hc.RunTools(turn, decls)
			}
			if err != nil {
				return err
			}
			msgs = append(msgs, more...)
		}
		return hc.Fail(records.ReasonBudgetExceeded, "no answer after %d model turns", devices.MaxTurns)
	}
}

// gatedTools answers a turn whose dispatches need an approval, call by call: the lookup
// inline, each dispatch through Approved.
func gatedTools(hc *agent.Context, turn *agent.Turn, decls []agent.ToolDecl) ([]model.Message, error) {
	assistant := model.Message{Role: model.RoleAssistant, Content: turn.Text}
	var answers []model.Message
	for _, call := range turn.Calls {
		assistant.ToolCalls = append(assistant.ToolCalls, model.ToolCall{ID: call.ID, Name: call.Tool, Arguments: call.ArgsJSON})
		var content string
		switch call.Tool {
		case devices.ToolLookup:
			out, err := hc.Inline(call.Tool, []byte(call.ArgsJSON), decls[0].Inline)
			if ie, ok := err.(*agent.InlineError); ok {
				content = "error: " + ie.Message
			} else if err != nil {
				return nil, err
			} else {
				content = string(out)
			}
		default:
			res, approved, err := hc.Approved(call.Tool, call.ArgsJSON)
			if err != nil {
				return nil, err
			}
			content = Denied
			if approved {
				content = ResultContent(res.GetStatus().String(), res.GetPayload(), res.GetErrorMessage())
			}
		}
		answers = append(answers, model.Message{Role: model.RoleTool, Content: content, ToolCallID: call.ID})
	}
	return append([]model.Message{assistant}, answers...), nil
}

// ResultContent is the tool message of a tool result, as RunTools renders it: the payload
// when the status is OK, else the status and the error message.
func ResultContent(status string, payload []byte, errorMessage string) string {
	if status == "OK" {
		return string(payload)
	}
	return status + ": " + errorMessage
}
