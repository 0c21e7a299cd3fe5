package budget

import (
	"fmt"
	"time"
)

// Budget is an agent's token budget per tenant (agent.Definition.Budget): at most Tokens
// tokens per tenant in each event-time window of length Per, and what an external event
// that comes after a window's budget is spent gets instead (Degrade).
type Budget struct {
	// Tokens is the window's budget of a tenant: the input and output tokens of its
	// activations' model answers (replay-cache hits included), as agent.Limits.MaxTokens
	// counts them. It must be at least the agent's MaxTokens. Exactly one of Tokens and
	// CostMicros is set.
	Tokens int64
	// CostMicros is the window's budget of a tenant in micro-units of the currency of the
	// price table the pipeline is launched with (transforms.Options.Prices, run --prices):
	// a cost budget. Each grant reserves what an activation of MaxTokens tokens can cost at
	// that table (Reservation), so a cost budget is refused at pipeline construction without
	// a table that prices it (ErrCostBudget).
	CostMicros int64
	// Per is the window's length: a whole number of minutes (time.Hour, 24*time.Hour).
	Per time.Duration
	// Degrade is the rule for an over-budget event; nil is DegradeFail.
	Degrade Degrade
}

// Degrade is the rule for an external event that comes after its tenant's window is spent:
// DegradeModel, DegradeReply, DegradePark or DegradeFail.
type Degrade interface {
	// Rule names the rule on the trace (AttrBudgetDegrade): "model", "reply", "park", "fail".
	Rule() string
}

// DegradeModel runs the activation on another model id of the agent's model (a cheaper
// one): ModelID replaces Definition.ModelID in every request of the activation, and so in
// its replay-cache keys. The activation keeps its per-activation token budget.
type DegradeModel struct{ ModelID string }

// DegradeReply answers with Text as the activation's final reply, with no model call.
type DegradeReply struct{ Text string }

// DegradePark holds the event until the start of the next window (an event-time wait),
// where it is admitted again, before that window's own events; its envelope's event time
// becomes that start, and BudgetGrant.parked_from_ms keeps the time it came with.
type DegradePark struct{}

// DegradeFail refuses the event: a tenant_budget_spent dead letter carrying it.
type DegradeFail struct{}

// Rule is "model".
func (DegradeModel) Rule() string { return "model" }

// Rule is "reply".
func (DegradeReply) Rule() string { return "reply" }

// Rule is "park".
func (DegradePark) Rule() string { return "park" }

// Rule is "fail".
func (DegradeFail) Rule() string { return "fail" }

// Rule returns b's degrade rule, DegradeFail when none is set.
func (b Budget) Rule() Degrade {
	if b.Degrade == nil {
		return DegradeFail{}
	}
	return b.Degrade
}

// IsCost reports whether b is a cost budget (CostMicros).
func (b Budget) IsCost() bool { return b.CostMicros > 0 }

// PerMs is the window's length in milliseconds.
func (b Budget) PerMs() int64 { return b.Per.Milliseconds() }

// WindowOf returns the start of the window of event time ms: floor(ms/Per)·Per, for
// negative times too.
func (b Budget) WindowOf(ms int64) int64 {
	per := b.PerMs()
	w := ms / per * per
	if w > ms {
		w -= per
	}
	return w
}

// Check validates b for an agent whose per-activation token budget is maxTokens: exactly
// one of Tokens and CostMicros set, maxTokens set and maxTokens ≤ Tokens (else no event
// could ever be granted), Per a positive whole number of minutes, and a degrade rule that is
// one of this package's. A cost budget's reservation needs the launch's price table: it is
// checked by NewAdmission.
func (b Budget) Check(maxTokens int64) error {
	switch {
	case maxTokens <= 0:
		return fmt.Errorf("a tenant budget needs Limits.MaxTokens, the tokens each activation is granted")
	case b.Tokens < 0 || b.CostMicros < 0:
		return fmt.Errorf("the tenant budget's Tokens (%d) and CostMicros (%d) cannot be negative", b.Tokens, b.CostMicros)
	case (b.Tokens > 0) == (b.CostMicros > 0):
		return fmt.Errorf("a tenant budget sets exactly one of Tokens and CostMicros (Tokens %d, CostMicros %d)", b.Tokens, b.CostMicros)
	case b.CostMicros == 0 && b.Tokens < maxTokens:
		return fmt.Errorf("the tenant budget's Tokens (%d) is below Limits.MaxTokens (%d): no activation could be granted", b.Tokens, maxTokens)
	case b.Per <= 0 || b.Per%time.Minute != 0:
		return fmt.Errorf("the tenant budget's window Per (%s) is not a positive whole number of minutes", b.Per)
	}
	switch d := b.Rule().(type) {
	case DegradeModel:
		if d.ModelID == "" {
			return fmt.Errorf("DegradeModel has no ModelID")
		}
	case DegradeReply, DegradePark, DegradeFail:
	default:
		return fmt.Errorf("unknown degrade rule %T", d)
	}
	return nil
}
