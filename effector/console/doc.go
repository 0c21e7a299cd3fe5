// Package console serves an effector's approval console over HTTP: the pending APPROVAL
// intents with their arguments in the tool's own shape, and a form that records a human
// decision as an Approval envelope (effector.Approvals.Decide). The rules are in
// docs/effector.md.
//
// Invariants:
//   - Every request needs the approver's identity, from exactly one source: a header set by
//     an authenticating proxy, or HTTP basic auth against configured users.
//   - A decision is refused (403) unless the request is same-origin (Sec-Fetch-Site and
//     Origin, when the browser sends them) and carries the page's CSRF token, which is bound
//     to the approver.
//   - An unknown approval is refused with 404, an expired or already decided one with 409;
//     nothing else changes when a decision is refused.
//   - Pages forbid framing, scripts and foreign form targets (Content-Security-Policy).
package console
