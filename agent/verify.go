package agent

import (
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// checkResult admits r as the answer to the pending intent ti under host.Deps.VerifyResults. A
// refused result is a result_refused dead letter: the activation does not resume.
func (c *call) checkResult(r *pb.ToolResult, ti *pb.ToolIntent) error {
	m := c.deps.VerifyResults
	if m == nil {
		return nil
	}
	if err := m.CheckResult(r, ti, c.deps.Keyring); err != nil {
		return fail(records.ReasonResultRefused, err, "%s result", r.GetStatus())
	}
	return nil
}

// checkApproval admits ap as the decision on the pending APPROVAL intent ti under
// host.Deps.VerifyResults. A refused decision is an approval_refused dead letter: the gated tool is
// not released and the key keeps waiting for its deadline.
func (c *call) checkApproval(ap *pb.AgentEnvelope_Approval, ti *pb.ToolIntent) error {
	m := c.deps.VerifyResults
	if m == nil {
		return nil
	}
	if err := m.CheckApproval(ap, ti, c.deps.Keyring); err != nil {
		return fail(records.ReasonApprovalRefused, err, "decision by %q", ap.GetApprover())
	}
	return nil
}
