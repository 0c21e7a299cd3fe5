package envelopes

import (
	"context"
	"os"

	pubsub "cloud.google.com/go/pubsub/v2"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/effector"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/pubsub/wire"
)

// Decision is the signed approval envelope deciding ti at event time at (0: just after ti
// was emitted).
func Decision(ti *pb.ToolIntent, kr *intent.Keyring, d effector.Decision, at int64) (*pb.AgentEnvelope, error) {
	if at == 0 {
		at = ti.GetCreatedAtMs() + 1
	}
	ap := &pb.AgentEnvelope_Approval{IntentId: ti.GetIntentId(), Approved: d.Approved, Approver: d.Approver, DecidedAtMs: at, Note: d.Note, ArgsJson: d.ArgsJSON}
	if err := intent.SignApproval(ap, ti, kr); err != nil {
		return nil, err
	}
	return &pb.AgentEnvelope{EntityKey: ti.GetEntityKey(), EventTimeMs: at, Payload: &pb.AgentEnvelope_Approval_{Approval: ap}}, nil
}

// Signal is the envelope of sig sent at event time at, signed with kr when kr is not nil.
func Signal(sig *pb.AgentEnvelope_Signal, kr *intent.Keyring, at int64) (*pb.AgentEnvelope, error) {
	sig.SentAtMs = at
	if kr != nil {
		if err := intent.SignSignal(sig, kr); err != nil {
			return nil, err
		}
	}
	return &pb.AgentEnvelope{EntityKey: sig.GetEntityKey(), EventTimeMs: at, Payload: &pb.AgentEnvelope_Signal_{Signal: sig}}, nil
}

// Line is env as one JSON line, newline included.
func Line(env *pb.AgentEnvelope) ([]byte, error) {
	line, err := protojson.Marshal(env)
	if err != nil {
		return nil, err
	}
	return append(line, '\n'), nil
}

// AppendLine appends env as one JSON line to the file path (created when missing).
func AppendLine(path string, env *pb.AgentEnvelope) error {
	line, err := Line(env)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err == nil {
		_, err = f.Write(line)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Publisher publishes envelopes to an input topic through c: binary, ordered by entity key.
func Publisher(c *pubsub.Client, topic string) func(context.Context, []*pb.AgentEnvelope) error {
	return func(ctx context.Context, envs []*pb.AgentEnvelope) error {
		pub := c.Publisher(topic)
		pub.EnableMessageOrdering = true
		defer pub.Stop()
		var results []*pubsub.PublishResult
		for _, env := range envs {
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(env)
			if err != nil {
				return err
			}
			results = append(results, pub.Publish(ctx, &pubsub.Message{Data: b, OrderingKey: wire.OrderingKey(env.GetEntityKey())}))
		}
		for _, r := range results {
			if _, err := r.Get(ctx); err != nil {
				return err
			}
		}
		return nil
	}
}
