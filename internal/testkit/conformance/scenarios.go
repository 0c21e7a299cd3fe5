package conformance

import (
	"bytes"
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/examples/devices"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/records"
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// scenarios are the checks, in the matrix's order.
var scenarios = []struct {
	name  string
	check func(t *testing.T, r *run)
}{
	{QuietNoModelCall, checkQuiet},
	{FinalReply, checkFinal},
	{ToolSuspendResume, checkToolResume},
	{ApprovalApproved, checkApproved},
	{ApprovalDenied, checkDenied},
	{ApprovalTimedOut, checkTimedOut},
	{ReplayZeroModelCalls, checkReplay},
	{ExportRestoreSuspended, checkExportRestore},
	{ShuffledInputIdentical, checkShuffled},
	{TokenBudgetExceeded, checkBudget},
	{ExactInteger, checkExactInteger},
	{HostileOutputRefused, checkHostile},
}

// reqs is the requests phase i (0-based) made for the anomaly milliC.
func (r *run) reqs(i int, milliC int64) [][]byte { return requestsFor(r.phases[i].reqs, milliC) }

// wantRequests checks the number of requests each phase made for an anomaly.
func (r *run) wantRequests(t *testing.T, milliC int64, perPhase ...int) {
	t.Helper()
	for i, want := range perPhase {
		if got := len(r.reqs(i, milliC)); got != want {
			t.Errorf("phase %d: %d model requests for the reading %d, want %d", i+1, got, milliC, want)
		}
	}
}

// wantFinal checks k's final replies in phase i: exactly one, of text (none when text is "").
func (r *run) wantFinal(t *testing.T, i int, k []byte, text string) {
	t.Helper()
	finals := of(r.phases[i].out.finals, k)
	switch {
	case text == "" && len(finals) != 0:
		t.Errorf("phase %d: key %s replied %q, want no reply", i+1, k, finals[0].GetMessage())
	case text != "" && (len(finals) != 1 || finals[0].GetMessage() != text):
		t.Errorf("phase %d: key %s finals %v, want one reply %q", i+1, k, finals, text)
	}
}

// wantNoDeadLetter checks k has no dead letter in phase i.
func (r *run) wantNoDeadLetter(t *testing.T, i int, k []byte) {
	t.Helper()
	for _, d := range of(r.phases[i].out.dead, k) {
		t.Errorf("phase %d: key %s dead letter %s: %s", i+1, k, d.GetReason(), d.GetDetail())
	}
}

// wantDeadLetter checks k's dead letters in phase i are exactly one, of reason.
func (r *run) wantDeadLetter(t *testing.T, i int, k []byte, reason records.Reason) {
	t.Helper()
	dead := of(r.phases[i].out.dead, k)
	if len(dead) != 1 || dead[0].GetReason() != string(reason) {
		var got []string
		for _, d := range dead {
			got = append(got, d.GetReason()+": "+d.GetDetail())
		}
		t.Errorf("phase %d: key %s dead letters %q, want one %s", i+1, k, got, reason)
	}
}

// intentsOf lists k's intents of kind in phase i, attempt 0 only.
func (r *run) intentsOf(i int, k []byte, kind pb.ToolIntent_Kind) []*pb.ToolIntent {
	var out []*pb.ToolIntent
	for _, ti := range of(r.phases[i].out.intents, k) {
		if ti.GetKind() == kind && ti.GetAttempt() == 0 {
			out = append(out, ti)
		}
	}
	return out
}

// wantDispatch checks that k emitted exactly one signed attempt-0 intent of kind in phase i
// calling devices.dispatch with the exact device id, and returns it.
func (r *run) wantDispatch(t *testing.T, i int, k []byte, kind pb.ToolIntent_Kind) *pb.ToolIntent {
	t.Helper()
	tis := r.intentsOf(i, k, kind)
	if len(tis) != 1 {
		t.Fatalf("phase %d: key %s has %d %v intents, want 1", i+1, k, len(tis), kind)
	}
	ti := tis[0]
	if ti.GetToolName() != devices.ToolDispatch || !strings.Contains(ti.GetArgsJson(), `"device_id":"`+DeviceText+`"`) {
		t.Errorf("phase %d: key %s intent %s(%s)", i+1, k, ti.GetToolName(), ti.GetArgsJson())
	}
	if o := intent.Verify(ti, r.kr); o != intent.OK {
		t.Errorf("phase %d: key %s intent verifies as %v", i+1, k, o)
	}
	return ti
}

// A quiet reading makes no model call and no output beyond its trace; it is in the ring.
func checkQuiet(t *testing.T, r *run) {
	k := key(QuietNoModelCall)
	p := r.phases[0]
	for _, req := range p.reqs {
		if v, _, _ := route(req); v == quietMilliC || v == quietMilliC+500 {
			t.Errorf("a quiet reading made a model request:\n%s", req)
		}
	}
	if n := len(of(p.out.intents, k)) + len(of(p.out.finals, k)) + len(of(p.out.dead, k)); n != 0 {
		t.Errorf("the quiet key has %d intents, finals or dead letters", n)
	}
	var starts, llm int
	for _, ev := range of(p.out.traces, k) {
		switch ev.GetEventType() {
		case pb.TraceEvent_ACTIVATION_START:
			starts++
		case pb.TraceEvent_LLM_CALL:
			llm++
		}
	}
	if starts != 2 || llm != 0 {
		t.Errorf("quiet key traces: %d activations, %d model calls; want 2 and 0", starts, llm)
	}
	snap, err := p.snapshotOf(k)
	if err != nil {
		t.Fatal(err)
	}
	if !ringHolds(snap, "21000", "21500") {
		t.Errorf("the ring %q does not hold both readings", devices.RingKey)
	}
}

// ringHolds reports whether snap's ring entry holds values, oldest first.
func ringHolds(snap *pb.StateSnapshot, values ...string) bool {
	for _, e := range snap.GetMemory().GetEntries() {
		if e.GetKey() != devices.RingKey && !strings.HasSuffix(e.GetKey(), devices.RingKey) {
			continue
		}
		var want []byte
		for _, v := range values {
			want = append(want, byte(len(v)))
			want = append(want, v...)
		}
		return bytes.Equal(e.GetValue(), want)
	}
	return false
}

// An anomaly answered in text is the final reply; the one request declares both tools with
// their closed schemas and names the configured model.
func checkFinal(t *testing.T, r *run) {
	k := key(FinalReply)
	r.wantRequests(t, finalMilliC, 1)
	r.wantFinal(t, 0, k, finalText)
	r.wantNoDeadLetter(t, 0, k)
	if n := len(of(r.phases[0].out.intents, k)); n != 0 {
		t.Errorf("%d intents", n)
	}
	reqs := r.reqs(0, finalMilliC)
	if len(reqs) == 0 {
		return
	}
	for _, want := range append([]string{`"model":"` + modelID + `"`, `"tools":[`, `"device_id"`, `"additionalProperties":false`, devices.SystemPrompt[:40]},
		wire[r.api].declares...) {
		if !bytes.Contains(reqs[0], []byte(want)) {
			t.Errorf("the request lacks %s:\n%s", want, reqs[0])
		}
	}
}

// A lookup runs inline, a dispatch is a signed intent that suspends the key, and its result
// resumes the activation to the model's answer with no model call repeated.
func checkToolResume(t *testing.T, r *run) {
	k := key(ToolSuspendResume)
	r.wantRequests(t, toolMilliC, 2, 1)
	r.wantDispatch(t, 0, k, pb.ToolIntent_TOOL)
	r.wantFinal(t, 0, k, "")
	r.wantFinal(t, 1, k, resumedText)
	r.wantNoDeadLetter(t, 1, k)
	if reqs := r.reqs(0, toolMilliC); len(reqs) == 2 && !bytes.Contains(reqs[1], []byte(lookupSite)) {
		t.Errorf("the second request does not carry the lookup's row:\n%s", reqs[1])
	}
	if reqs := r.reqs(1, toolMilliC); len(reqs) == 1 {
		for _, want := range append(answers(r.api, "call_dispatch"), `T-4411`) {
			if !bytes.Contains(reqs[0], []byte(want)) {
				t.Errorf("the resumed request lacks %s:\n%s", want, reqs[0])
			}
		}
	}
}

// A gated dispatch is an APPROVAL intent; the approval releases the signed TOOL intent, whose
// result resumes to the answer.
func checkApproved(t *testing.T, r *run) {
	k := key(ApprovalApproved)
	r.wantRequests(t, approvedMilliC, 1, 0, 1)
	ap := r.wantDispatch(t, 0, k, pb.ToolIntent_APPROVAL)
	if n := len(r.intentsOf(0, k, pb.ToolIntent_TOOL)); n != 0 {
		t.Errorf("a TOOL intent before the approval")
	}
	ti := r.wantDispatch(t, 1, k, pb.ToolIntent_TOOL)
	if ti.GetArgsJson() != ap.GetArgsJson() {
		t.Errorf("the gated call's arguments %s differ from the approved %s", ti.GetArgsJson(), ap.GetArgsJson())
	}
	r.wantFinal(t, 1, k, "")
	// The second run's bounded input ends with the watermark past the released intent's
	// deadline, after the export: its escalations end in activation_timeout.
	r.wantDeadLetter(t, 1, k, records.ReasonActivationTimeout)
	r.wantFinal(t, 2, k, resumedText)
	r.wantNoDeadLetter(t, 2, k)
}

// A denied approval releases nothing; the model is told and answers.
func checkDenied(t *testing.T, r *run) {
	k := key(ApprovalDenied)
	r.wantRequests(t, deniedMilliC, 1, 1)
	r.wantDispatch(t, 0, k, pb.ToolIntent_APPROVAL)
	if n := len(of(r.phases[1].out.intents, k)); n != 0 {
		t.Errorf("%d intents after the denial", n)
	}
	if reqs := r.reqs(1, deniedMilliC); len(reqs) == 1 && !bytes.Contains(reqs[0], []byte(Denied)) {
		t.Errorf("the request after the denial does not say %q:\n%s", Denied, reqs[0])
	}
	r.wantFinal(t, 1, k, deniedText)
	r.wantNoDeadLetter(t, 1, k)
}

// An approval never given escalates (the same intent, attempts 1 and 2) and fails closed:
// an approval_timeout dead letter, no TOOL intent, no reply.
func checkTimedOut(t *testing.T, r *run) {
	k := key(ApprovalTimedOut)
	r.wantRequests(t, timedOutMilliC, 1)
	ap := r.wantDispatch(t, 0, k, pb.ToolIntent_APPROVAL)
	var attempts []uint32
	for _, ti := range of(r.phases[0].out.intents, k) {
		if ti.GetKind() != pb.ToolIntent_APPROVAL || ti.GetIntentId() != ap.GetIntentId() {
			t.Errorf("intent %v %s %s", ti.GetKind(), ti.GetIntentId(), ti.GetToolName())
		}
		attempts = append(attempts, ti.GetAttempt())
	}
	slices.Sort(attempts)
	if !slices.Equal(attempts, []uint32{0, 1, 2}) {
		t.Errorf("attempts %v, want 0 1 2", attempts)
	}
	r.wantDeadLetter(t, 0, k, records.ReasonApprovalTimeout)
	r.wantFinal(t, 0, k, "")
}

// Replaying every phase from the exported snapshots makes no model call and re-emits the
// recorded outputs.
func checkReplay(t *testing.T, r *run) {
	if r.replayReqs != 0 || r.misses != 0 {
		t.Errorf("the replays made %d model requests and %d cache misses", r.replayReqs, r.misses)
	}
	keys := 0
	for i, ks := range r.replays {
		for _, k := range ks {
			keys++
			if k.Divergence != "" {
				t.Errorf("phase %d key %s: %s", i+1, k.Entity, k.Divergence)
			}
		}
	}
	if keys < len(replayed) {
		t.Errorf("%d keys replayed", keys)
	}
}

// An export while suspended carries the continuation and the pending intent; a run restored
// from it resumes on the result without asking the model again for the first turn.
func checkExportRestore(t *testing.T, r *run) {
	k := key(ExportRestoreSuspended)
	ti := r.wantDispatch(t, 0, k, pb.ToolIntent_TOOL)
	snap, err := r.phases[0].snapshotOf(k)
	if err != nil {
		t.Fatal(err)
	}
	if snap.GetRequestId() != "phase-1" || len(snap.GetContinuation().GetSnapshot()) == 0 || len(snap.GetPending()) != 1 {
		t.Fatalf("snapshot %q: continuation %v, %d pending", snap.GetRequestId(), snap.GetContinuation(), len(snap.GetPending()))
	}
	if !proto.Equal(snap.GetPending()[0], ti) {
		t.Errorf("the pending intent differs from the emitted one")
	}
	r.wantRequests(t, exportMilliC, 1, 1)
	r.wantFinal(t, 1, k, resumedText)
	r.wantNoDeadLetter(t, 1, k)
	if snap2, err := r.phases[1].snapshotOf(k); err != nil || snap2.GetContinuation() != nil || len(snap2.GetPending()) != 0 {
		t.Errorf("after the resume: %v, the key is still suspended", err)
	}
}

// The first run's input in another order gives the same bytes in every output file.
func checkShuffled(t *testing.T, r *run) {
	for name, want := range r.phases[0].out.files {
		if got := r.shuffled.files[name]; !bytes.Equal(got, want) {
			t.Errorf("%s differs (%d bytes, want %d)", name, len(got), len(want))
		}
	}
}

// An answer that takes the activation over its token budget dead-letters it as
// budget_exceeded: no reply, no intent.
func checkBudget(t *testing.T, r *run) {
	k := key(TokenBudgetExceeded)
	r.wantRequests(t, budgetMilliC, 1)
	r.wantDeadLetter(t, 0, k, records.ReasonBudgetExceeded)
	r.wantFinal(t, 0, k, "")
	if n := len(of(r.phases[0].out.intents, k)); n != 0 {
		t.Errorf("%d intents", n)
	}
}

// 9007199254740993, sent by the model as a JSON number, reaches the inline lookup and the
// signed intents exactly.
func checkExactInteger(t *testing.T, r *run) {
	r.wantDispatch(t, 0, key(ToolSuspendResume), pb.ToolIntent_TOOL)
	if _, lacks := r.s.Lacks[ApprovalApproved]; !lacks {
		r.wantDispatch(t, 1, key(ApprovalApproved), pb.ToolIntent_TOOL)
	}
	if reqs := r.reqs(0, toolMilliC); len(reqs) != 2 || !bytes.Contains(reqs[1], []byte(lookupSite)) {
		t.Errorf("the lookup did not find device %s", DeviceText)
	}
}

// A call of an undeclared tool, an undeclared argument member and an out-of-range integer
// are each refused: a proposal_refused dead letter, no intent, no reply.
func checkHostile(t *testing.T, r *run) {
	for _, h := range []struct {
		scenario string
		milliC   int64
	}{{"hostile-tool", hostileToolMilliC}, {"hostile-args", hostileArgsMilliC}, {"hostile-int", hostileIntMilliC}} {
		k := key(h.scenario)
		r.wantRequests(t, h.milliC, 1)
		r.wantDeadLetter(t, 0, k, records.ReasonProposalRefused)
		r.wantFinal(t, 0, k, "")
		if n := len(of(r.phases[0].out.intents, k)); n != 0 {
			t.Errorf("%s: %d intents", h.scenario, n)
		}
	}
}
