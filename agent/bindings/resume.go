package bindings

import (
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// journalOfResume reads the AgentResume of a bindings suspension as its journal: step record
// i is position i, a PROPOSE entry (its proposal as result) or, for the gated call of an
// approved step (a record without a proposal), a TOOL entry; the entry's subject is the
// record's case, and its intent, result and approval are the record's. Nothing is lost:
// resumeOfJournal gives the same record back.
func journalOfResume(snapshot []byte) (*pb.HandlerJournal, error) {
	r := &pb.AgentResume{}
	if err := proto.Unmarshal(snapshot, r); err != nil {
		return nil, failure(records.ReasonStateCorrupt, err, "continuation snapshot")
	}
	j := &pb.HandlerJournal{Trigger: r.GetTrigger(), Burst: r.GetBurst(), TraceId: r.GetTraceId(), ModelCalls: r.GetModelCalls(), Tokens: r.GetTokens()}
	j.Entries = make([]*pb.JournalEntry, len(r.GetSteps()))
	for i, rec := range r.GetSteps() {
		if rec.GetStepIndex() != uint32(i) {
			return nil, failure(records.ReasonStateCorrupt, nil, "continuation snapshot: record %d is of step %d", i, rec.GetStepIndex())
		}
		e := &pb.JournalEntry{Op: pb.JournalEntry_PROPOSE, Name: rec.GetCaseId(), Result: []byte(rec.GetProposal()),
			IntentId: rec.GetIntentId(), ToolResult: rec.GetResult(), Approval: rec.GetApproval()}
		if rec.GetProposal() == "" {
			e.Op, e.Result = pb.JournalEntry_TOOL, nil
		}
		j.Entries[i] = e
	}
	return j, nil
}

// resumeOfJournal encodes a bindings journal as its AgentResume.
func resumeOfJournal(j *pb.HandlerJournal) ([]byte, error) {
	r := &pb.AgentResume{Trigger: j.GetTrigger(), Burst: j.GetBurst(), TraceId: j.GetTraceId(), ModelCalls: j.GetModelCalls(), Tokens: j.GetTokens()}
	r.Steps = make([]*pb.StepRecord, len(j.GetEntries()))
	for i, e := range j.GetEntries() {
		r.Steps[i] = &pb.StepRecord{StepIndex: uint32(i), CaseId: e.GetName(), Proposal: string(e.GetResult()),
			IntentId: e.GetIntentId(), Result: e.GetToolResult(), Approval: e.GetApproval()}
	}
	snap, err := proto.MarshalOptions{Deterministic: true}.Marshal(r)
	if err != nil {
		return nil, failure(records.ReasonStateCorrupt, err, "encoding resume state")
	}
	return snap, nil
}
