package agent

import (
	"fmt"

	"github.com/beamagents/beamagents/agent/internal/hostapi"
	"github.com/beamagents/beamagents/budget"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/tracing"
)

// budgetProblems checks a tenant budget's declaration (budget.Budget.Check): it needs a
// tenant of each key and a per-activation token budget to grant.
func budgetProblems(def Definition) []string {
	if def.Budget == nil {
		return nil
	}
	var problems []string
	if def.Tenant == nil {
		problems = append(problems, "a tenant budget needs Tenant, the tenant of each key")
	}
	if err := def.Budget.Check(def.Limits.MaxTokens); err != nil {
		problems = append(problems, err.Error())
	}
	return problems
}

// degrade returns the agent's degrade rule for an activation triggered by env when env was
// admitted over its tenant's budget; nil when it was granted, or the agent has no budget.
func (a *Agent) degrade(env *pb.AgentEnvelope) budget.Degrade {
	if a.def.Budget == nil || !env.GetBudgetGrant().GetOverBudget() {
		return nil
	}
	return a.def.Budget.Rule()
}

// overBudget applies the degrade rule d to the activation act is starting: a fixed reply
// or a refusal end it here (done); DegradeModel lets it run, on its model id (modelID).
func (act *activation) overBudget(d budget.Degrade) (done bool, err error) {
	switch d := d.(type) {
	case budget.DegradeReply:
		action := renderFinal(d.Text)
		if max := act.c.a.limits.MaxFinalBytes; len(action) > max {
			return true, fail(records.ReasonFinalTooLarge, nil, "the degraded reply is %d bytes after escaping, bound %d", len(action), max)
		}
		c := act.c
		act.out.Finals = append(act.out.Finals, &pb.FinalReply{EntityKey: c.entity, Seq: act.seq, Message: d.Text,
			ActionJson: string(action), TraceId: act.tr.id, CreatedAtMs: c.now})
		return true, act.end(tracing.StatusOK)
	case budget.DegradeModel:
		return false, nil
	}
	g := act.journal.GetTrigger().GetBudgetGrant()
	spent := fmt.Sprintf("%d tokens", act.c.a.def.Budget.Tokens)
	if b := act.c.a.def.Budget; b.IsCost() {
		spent = fmt.Sprintf("%d micro-units of cost", b.CostMicros)
	}
	return true, fail(records.ReasonTenantBudgetSpent, nil, "tenant %q spent its %s of the window from %d ms",
		g.GetTenant(), spent, g.GetWindowStartMs())
}

// modelID is the model id of the activation's requests: the degrade rule's for an
// over-budget activation under DegradeModel, else the agent's.
func (act *activation) modelID() string {
	a := act.c.a
	if d, ok := a.degrade(act.journal.GetTrigger()).(budget.DegradeModel); ok {
		return d.ModelID
	}
	return a.def.ModelID
}

// budgetAttrs records the trigger's grant under budget b on the attempt's ACTIVATION_START
// event, the last trace event out holds. A cost budget's CostMicros is recorded too; a token
// budget's attributes are as they were before cost budgets.
func budgetAttrs(out *hostapi.Outputs, b *budget.Budget, g *pb.BudgetGrant, d budget.Degrade) {
	if g == nil || len(out.Traces) == 0 {
		return
	}
	attrs := out.Traces[len(out.Traces)-1].Attributes
	attrs[tracing.AttrBudgetWindow] = itoa(g.GetWindowStartMs())
	attrs[tracing.AttrBudgetGranted] = itoa(g.GetTokens())
	if b.IsCost() {
		attrs[tracing.AttrBudgetCost] = itoa(b.CostMicros)
	}
	if d != nil {
		attrs[tracing.AttrBudgetDegrade] = d.Rule()
	}
	if g.GetParkedFromMs() != 0 {
		attrs[tracing.AttrBudgetParkedFrom] = itoa(g.GetParkedFromMs())
	}
}
