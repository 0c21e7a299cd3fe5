package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/records"
)

// approvalFixture writes one signed APPROVAL intent as a run's intents file, with the keyring
// reference that signed it.
func approvalFixture(t *testing.T) (intents string, ti *pb.ToolIntent, ring string, kr *intent.Keyring) {
	t.Helper()
	secret := []byte("sixteen-bytes-secret-for-a-test!")
	kr, err := intent.NewKeyring("k1", map[string][]byte{"k1": secret})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("NOTE_RING", `{"active":"k1","keys":[{"id":"k1","secret":"c2l4dGVlbi1ieXRlcy1zZWNyZXQtZm9yLWEtdGVzdCE="}]}`)
	ti = &pb.ToolIntent{IntentId: intent.ID([]byte("customer-3"), 0, 0), EntityKey: []byte("customer-3"), ToolName: "payments.refund",
		ArgsJson: `{"amount_cents":"2500"}`, Kind: pb.ToolIntent_APPROVAL, CreatedAtMs: 1767225600000, ExpiresAtMs: 1767229200000}
	if err := intent.Sign(ti, kr); err != nil {
		t.Fatal(err)
	}
	line, err := protojson.Marshal(ti)
	if err != nil {
		t.Fatal(err)
	}
	intents = filepath.Join(t.TempDir(), "intents.jsonl")
	write(t, intents, string(line))
	return intents, ti, "env:NOTE_RING", kr
}

// approve --note signs the note with the decision; --topic publishes the same envelope to an
// input topic (the client library's pstest server); the bounds are refused at launch.
func TestApproveNoteAndTopic(t *testing.T) {
	intents, ti, ring, kr := approvalFixture(t)
	base := []string{"approve", "--intents", intents, "--intent", ti.GetIntentId(), "--approver", "ops@example.com", "--keyring", ring,
		"--reject", "--event_time_ms", "1767225700000"}
	const note = "Over the limit for a first order; offer a voucher."
	code, out, errOut := runCLI(t, "", append(base, "--note", note)...)
	env := &pb.AgentEnvelope{}
	if code != 0 || protojson.Unmarshal([]byte(out), env) != nil {
		t.Fatalf("approve --note: exit %d\n%s\n%s", code, out, errOut)
	}
	ap := env.GetApproval()
	if ap.GetNote() != note || ap.GetApproved() || intent.VerifyApproval(ap, ti, kr) != intent.OK {
		t.Fatalf("decision %v verifies as %v", ap, intent.VerifyApproval(ap, ti, kr))
	}
	// The note is covered by the signature: changed, the decision no longer verifies.
	forged := proto.CloneOf(ap)
	forged.Note = "approved after all"
	if intent.VerifyApproval(forged, ti, kr) == intent.OK {
		t.Fatal("a changed note still verifies")
	}

	srv := pstest.NewServer()
	defer srv.Close()
	t.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr)
	ctx := context.Background()
	if _, err := srv.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/p/topics/events"}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "", append(base, "--note", note, "--topic", "projects/p/topics/events")...)
	if code != 0 || !strings.Contains(out, "published the decision on "+ti.GetIntentId()) {
		t.Fatalf("approve --topic: exit %d\n%s\n%s", code, out, errOut)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d messages on the topic", len(msgs))
	}
	got := &pb.AgentEnvelope{}
	if err := proto.Unmarshal(msgs[0].Data, got); err != nil || !proto.Equal(got, env) || msgs[0].OrderingKey == "" {
		t.Fatalf("published %v (ordering key %q), want %v", got, msgs[0].OrderingKey, env)
	}

	for _, tc := range []struct {
		name string
		args []string
		flag string
	}{
		{"note too long", []string{"--note", strings.Repeat("n", records.MaxApprovalNoteBytes+1)}, "--note"},
		{"output and topic", []string{"--output", filepath.Join(t.TempDir(), "d.jsonl"), "--topic", "projects/p/topics/events"}, "--output"},
		{"topic name", []string{"--topic", "events"}, "--topic"},
		{"topic on dev", []string{"--state_dir", t.TempDir(), "--topic", "projects/p/topics/events"}, "--topic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"approve", "--intent", ti.GetIntentId()}, tc.args...)
			if tc.name != "topic on dev" {
				args = append(base, tc.args...)
			}
			if code, _, errOut := runCLI(t, "", args...); code != 2 || !strings.Contains(errOut, tc.flag) {
				t.Fatalf("exit %d\n%s", code, errOut)
			}
		})
	}
}
