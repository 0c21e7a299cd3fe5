package support

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/examples/support/supportpb"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/negotiate"
)

// Name is the agent's registered name.
const Name = "support"

// Tools the agent's intents call.
const (
	ToolLookupOrder = "orders.lookup"
	ToolRefund      = "payments.refund"
)

// ModelScript is the recorded model: answers keyed by (entity, seq, step).
//
//go:embed model_script.jsonl
var ModelScript []byte

// Envelopes is the demo input: JSON Lines of AgentEnvelopes (one line deliberately broken).
//
//go:embed envelopes.jsonl
var Envelopes []byte

func init() { agent.Register(Name, New) }

// Schema compiles the proposal schema from the generated supportpb.Proposal.
func Schema() (*interaction.Schema, error) {
	return interaction.Compile((&supportpb.Proposal{}).ProtoReflect().Descriptor())
}

// RefundArgs compiles the payment service's declared refund arguments.
func RefundArgs() (*interaction.Schema, error) {
	return interaction.Compile((&supportpb.RefundArgs{}).ProtoReflect().Descriptor())
}

// RefundAgreement is how refund proposals reach the payment service: every field moves to
// the service's id; the tighter order-id bound applies to each actual value, never by cutting.
var RefundAgreement = negotiate.Agreement{
	Protocol: negotiate.TransformAll,
	Moves: map[string]string{
		"support.refund.order_id":     "payments.refund.order_id",
		"support.refund.amount_cents": "payments.refund.amount_cents",
		"support.refund.reason":       "payments.refund.reason",
	},
}

// Bindings turn each proposal case into an action, by stable id.
func Bindings() map[string]bindings.Action {
	return map[string]bindings.Action{
		"support.reply":        bindings.Final(),
		"support.lookup_order": bindings.Tool(ToolLookupOrder),
		"support.refund":       bindings.Approval(ToolRefund),
		"support.remember":     bindings.Remember("support.remember.key", "support.remember.value"),
	}
}

// Limits of the example: tool results are due within 5 minutes, approvals within 10, with
// two escalations before the runtime fails closed.
var Limits = agent.Limits{
	ToolTimeoutMs:     5 * 60 * 1000,
	ApprovalTimeoutMs: 10 * 60 * 1000,
	MaxEscalations:    2,
}

// SystemPrompt instructs the model.
const SystemPrompt = `You are the customer-support agent of an online shop. Each turn, answer with exactly one JSON value that satisfies the response schema: reply to the customer, look an order up, propose a refund (a human approves it), or remember a fact about the customer. Integers are decimal strings.`

// Config is the factory's configuration: an optional model script file replacing the
// recorded one.
type Config struct {
	Script string `json:"script,omitempty"`
}

// New is the agent's factory: config is empty or a JSON Config.
func New(config []byte) (*agent.Agent, error) { return NewNamed(Name)(config) }

// NewNamed is the factory of the agent under another registered name: a variant whose runs
// the traces tell apart (a canary's candidate), otherwise the same agent.
func NewNamed(name string) agent.Factory {
	return func(config []byte) (*agent.Agent, error) { return newNamed(name, config) }
}

func newNamed(name string, config []byte) (*agent.Agent, error) {
	var cfg Config
	if len(config) > 0 {
		if err := json.Unmarshal(config, &cfg); err != nil {
			return nil, fmt.Errorf("support agent config: %w", err)
		}
	}
	script := ModelScript
	if cfg.Script != "" {
		b, err := os.ReadFile(cfg.Script)
		if err != nil {
			return nil, err
		}
		script = b
	}
	def, err := Definition(script)
	if err != nil {
		return nil, err
	}
	def.Name = name
	return bindings.New(def)
}

// Definition is the agent's definition with a scripted model answering from script (a
// model.Scripted script): the starting point of a variant of the agent.
func Definition(script []byte) (bindings.Definition, error) {
	m, err := model.ParseScript(script)
	if err != nil {
		return bindings.Definition{}, err
	}
	schema, err := Schema()
	if err != nil {
		return bindings.Definition{}, err
	}
	refundArgs, err := RefundArgs()
	if err != nil {
		return bindings.Definition{}, err
	}
	return bindings.Definition{
		Definition: agent.Definition{
			Name:    Name,
			Schema:  schema,
			Model:   m,
			ModelID: "support-scripted-1",
			Tools:   map[string]agent.ToolDecl{ToolRefund: {Args: refundArgs, Agreement: RefundAgreement}},
			Limits:  Limits,
		},
		Prompt:   bindings.DefaultPrompt(SystemPrompt),
		Bindings: Bindings(),
	}, nil
}
