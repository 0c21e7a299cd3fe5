package envelopes_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	pubsub "cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/effector"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/envelopes"
	"github.com/beamagents/beamagents/pubsub/wire"
)

func keyring(t *testing.T) *intent.Keyring {
	t.Helper()
	t.Setenv("ENVELOPES_KEYRING", `{"active":"k","keys":[{"id":"k","secret":"MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="}]}`)
	kr, err := intent.LoadKeyring("env:ENVELOPES_KEYRING")
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// A decision is bound to its intent and signed; its event time defaults to just after the
// intent's emission.
func TestDecision(t *testing.T) {
	kr := keyring(t)
	ti := &pb.ToolIntent{IntentId: "i1", EntityKey: []byte("k1"), Kind: pb.ToolIntent_APPROVAL, CreatedAtMs: 1000}
	for _, tc := range []struct {
		name string
		at   int64
		want int64
	}{{"default time", 0, 1001}, {"given time", 5000, 5000}} {
		t.Run(tc.name, func(t *testing.T) {
			env, err := envelopes.Decision(ti, kr, effector.Decision{Approved: true, Approver: "ann", Note: "ok"}, tc.at)
			if err != nil {
				t.Fatal(err)
			}
			ap := env.GetApproval()
			if env.GetEventTimeMs() != tc.want || ap.GetDecidedAtMs() != tc.want || string(env.GetEntityKey()) != "k1" || ap.GetIntentId() != "i1" || !ap.GetApproved() {
				t.Fatalf("envelope %v", env)
			}
			if len(ap.GetSignature()) == 0 {
				t.Fatal("unsigned decision")
			}
		})
	}
}

func TestSignal(t *testing.T) {
	kr := keyring(t)
	for _, tc := range []struct {
		name   string
		kr     *intent.Keyring
		signed bool
	}{{"signed", kr, true}, {"unsigned", nil, false}} {
		t.Run(tc.name, func(t *testing.T) {
			env, err := envelopes.Signal(&pb.AgentEnvelope_Signal{Name: "paid", SignalId: "s1", EntityKey: []byte("k1")}, tc.kr, 7000)
			if err != nil {
				t.Fatal(err)
			}
			sig := env.GetSignal()
			if env.GetEventTimeMs() != 7000 || sig.GetSentAtMs() != 7000 || (len(sig.GetSignature()) > 0) != tc.signed {
				t.Fatalf("envelope %v", env)
			}
		})
	}
}

// Lines appended to a file read back as the envelopes, one per line.
func TestAppendLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.jsonl")
	envs := []*pb.AgentEnvelope{
		{EntityKey: []byte("a"), EventTimeMs: 1, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("x")}},
		{EntityKey: []byte("b"), EventTimeMs: 2, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("y")}},
	}
	for _, env := range envs {
		if err := envelopes.AppendLine(path, env); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	if len(lines) != len(envs) {
		t.Fatalf("%d lines, want %d: %s", len(lines), len(envs), b)
	}
	for i, line := range lines {
		got := &pb.AgentEnvelope{}
		if err := protojson.Unmarshal(line, got); err != nil || !proto.Equal(got, envs[i]) {
			t.Fatalf("line %d: %s (%v)", i, line, err)
		}
	}
	if err := envelopes.AppendLine(filepath.Join(path, "under-a-file"), envs[0]); err == nil {
		t.Fatal("appended under a file")
	}
}

// Published envelopes arrive binary, keyed by their entity for ordering.
func TestPublisher(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := pstest.NewServer()
	defer srv.Close()
	const topic = "projects/p/topics/in"
	if _, err := srv.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c, err := pubsub.NewClient(ctx, "p", option.WithGRPCConn(conn))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	env := &pb.AgentEnvelope{EntityKey: []byte("k1"), EventTimeMs: 3, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("x")}}
	if err := envelopes.Publisher(c, topic)(ctx, []*pb.AgentEnvelope{env}); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 || msgs[0].OrderingKey != wire.OrderingKey([]byte("k1")) {
		t.Fatalf("messages %v", msgs)
	}
	got := &pb.AgentEnvelope{}
	if err := proto.Unmarshal(msgs[0].Data, got); err != nil || !proto.Equal(got, env) {
		t.Fatalf("published %v (%v)", got, err)
	}
}
