// Package budget is the tenant budget of an agent: declared on its Definition (a Budget of
// Tokens, or of CostMicros at the launch's price table, per tenant per event-time window of
// length Per, and a Degrade rule), and
// enforced by an admission that runs before the agent's keyed step, keyed by tenant.
//
// The admission sees a tenant's external events in event-time order (ties broken by their
// bytes), puts each in its window [floor(t/Per)·Per, +Per), and grants it the agent's
// per-activation token budget (agent.Limits.MaxTokens) while the window's remaining tokens
// cover it; otherwise the event is over budget. The decision travels in the envelope
// (AgentEnvelope.budget_grant, a BudgetGrant), so the keyed step's activation is a function
// of its input alone: a retry or a replay decides the same. The core spends at most the
// granted tokens (MaxTokens) per activation and applies the Degrade rule to an over-budget
// event: DegradeModel (run it on a cheaper model), DegradeReply (a fixed final reply, no
// model), DegradeFail (a tenant_budget_spent dead letter). DegradePark is applied by the
// admission itself: the event moves to the start of the next window and is admitted there.
//
// There is no cycle in a pipeline, so spend never flows back to the admission: a grant is a
// reservation of MaxTokens whatever the activation really spends, and unused tokens are not
// returned. A tenant's spend in a window is therefore at most Tokens, and at least
// Tokens - MaxTokens + 1 once an event was refused in it (docs/budgets.md). A cost budget
// reserves, per grant, what MaxTokens tokens can cost at the table's dearest price per token
// (Reservation), so a tenant's exact cost in a window is at most CostMicros.
//
// The admission is plain Go: Admission.Admit decides one event against a Tally (the tenant's
// state, one cell), and AdmitAll runs a whole bounded input; the Beam stage (package
// transforms), the fast path and the in-memory driver all call it, so all three stamp the
// same bytes.
package budget
