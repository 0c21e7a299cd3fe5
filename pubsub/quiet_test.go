package pubsub_test

import (
	"testing"
	"time"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// On a quiet subscription the watermark still advances (from the newest event time, at the
// wall clock's pace), so an approval that never comes escalates twice and fails closed while
// the pipeline runs, before any drain: the deadline timers fire on time in event time.
func TestQuietSubscriptionFailsClosedOnTime(t *testing.T) {
	e := newEnv(t)
	o := e.options(t, writeKeyring(t))
	o.Agent = quickAgent
	start := time.Now().UnixMilli()
	e.publish(marshal(t, &pb.AgentEnvelope{EntityKey: []byte("quiet-1"), EventTimeMs: start,
		Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("REFUND please")}}), nil)

	var dead *pb.ActivationErrorRecord
	stream(t, o, 60*time.Second, func() bool {
		for _, m := range messages(e.errorsTopic) {
			d := &pb.ActivationErrorRecord{}
			if mustUnmarshal(t, m.Data, d); d.GetReason() == string(records.ReasonApprovalTimeout) {
				dead = d
				return true
			}
		}
		return false
	})
	var attempts []uint32
	for _, m := range messages(e.intents) {
		ti := &pb.ToolIntent{}
		mustUnmarshal(t, m.Data, ti)
		if ti.GetKind() != pb.ToolIntent_APPROVAL {
			t.Errorf("unexpected %v intent", ti.GetKind())
		}
		attempts = append(attempts, ti.GetAttempt())
	}
	if len(attempts) != 3 || attempts[0] != 0 || attempts[1] != 1 || attempts[2] != 2 {
		t.Errorf("approval intents by attempt = %v, want [0 1 2] (the request and two escalations)", attempts)
	}
	// Suspended at the event time; each deadline one second after the previous: the dead
	// letter's time is the third deadline, whatever the wall clock did.
	if dead.GetEventTimeMs() != start+3000 {
		t.Errorf("failed closed at %d, want %d (event time + 3 deadlines)", dead.GetEventTimeMs(), start+3000)
	}
}
