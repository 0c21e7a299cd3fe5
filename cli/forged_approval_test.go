package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/pipeline"
)

// The demo's input plus forged approvals of customer-4's refund (one unsigned, one signed with
// a key the keyring does not hold, one signed with the keyring but for another intent with
// the same id) under --verify_results require: the refund is never released, each forgery is
// an approval_refused dead letter carrying its envelope, customer-4 still fails closed on its
// deadline, and the demo's own signed results and approvals still resume their activations.
func TestRunRefusesForgedApprovals(t *testing.T) {
	dir := t.TempDir()
	opts, kr, err := prepareDemo(dir)
	if err != nil {
		t.Fatal(err)
	}
	customer4 := []byte("customer-4")
	id := intent.ID(customer4, 0, 0)
	forged := func(at int64, sign func(ap *pb.AgentEnvelope_Approval)) []byte {
		ap := &pb.AgentEnvelope_Approval{IntentId: id, Approved: true, Approver: "mallory@example.com", DecidedAtMs: at - 1000}
		sign(ap)
		b, err := protojson.Marshal(&pb.AgentEnvelope{EntityKey: customer4, EventTimeMs: at, Payload: &pb.AgentEnvelope_Approval_{Approval: ap}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	stranger, err := intent.NewKeyring("mallory", map[string][]byte{"mallory": bytes.Repeat([]byte{0x6d}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	// An APPROVAL intent with customer-4's id whose content differs: a decision on it must not
	// decide customer-4's.
	other := &pb.ToolIntent{IntentId: id, EntityKey: customer4, ToolName: "refund", ArgsJson: `{"order_id":"A-3003","amount_cents":100}`, Kind: pb.ToolIntent_APPROVAL}
	lines := [][]byte{
		forged(1767225700000, func(*pb.AgentEnvelope_Approval) {}),
		forged(1767225701000, func(ap *pb.AgentEnvelope_Approval) {
			if err := intent.SignApproval(ap, other, stranger); err != nil {
				t.Fatal(err)
			}
		}),
		forged(1767225702000, func(ap *pb.AgentEnvelope_Approval) {
			if err := intent.SignApproval(ap, other, kr); err != nil {
				t.Fatal(err)
			}
		}),
	}
	in, err := os.OpenFile(opts.Input, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		in.Write(append([]byte("\n"), l...))
	}
	in.Close()

	out := filepath.Join(dir, "forged")
	// --at_end fail: customer-4's deadline is after the input's end, and this test holds it to
	// fail closed there (a parked key is TestParkAtEndOrFail's).
	code, stdout, errOut := runCLI(t, "", runArgs(opts.Input, out, "--keyring", opts.Keyring, "--verify_results", "require", "--at_end", "fail")...)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, errOut)
	}
	intents, err := readOutput(out, pipeline.IntentsName, func() *pb.ToolIntent { return &pb.ToolIntent{} })
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]int{}
	for _, ti := range intents {
		if ti.GetKind() == pb.ToolIntent_TOOL {
			tools[string(ti.GetEntityKey())]++
		}
	}
	if tools["customer-4"] != 0 {
		t.Errorf("a forged approval released customer-4's refund: %d TOOL intents", tools["customer-4"])
	}
	if tools["customer-3"] != 1 || tools["customer-2"] != 1 {
		t.Errorf("TOOL intents by key %v: the demo's own signed approval and results must still resume", tools)
	}
	dead, err := readOutput(out, pipeline.DeadLettersName, func() *pb.ActivationErrorRecord { return &pb.ActivationErrorRecord{} })
	if err != nil {
		t.Fatal(err)
	}
	var refused []string
	timedOut := false
	for _, d := range dead {
		if string(d.GetEntityKey()) != "customer-4" {
			if d.GetReason() != "envelope_invalid" {
				t.Errorf("dead letter %s for %s", d.GetReason(), d.GetEntityKey())
			}
			continue
		}
		switch d.GetReason() {
		case "approval_refused":
			env := &pb.AgentEnvelope{}
			if err := proto.Unmarshal(d.GetEnvelope(), env); err != nil || env.GetApproval().GetApprover() != "mallory@example.com" {
				t.Errorf("approval_refused does not carry the forged envelope: %v %v", env, err)
			}
			refused = append(refused, d.GetDetail())
		case "approval_timeout":
			timedOut = true
		default:
			t.Errorf("customer-4: dead letter %s: %s", d.GetReason(), d.GetDetail())
		}
	}
	if len(refused) != 3 {
		t.Fatalf("%d approval_refused dead letters, want 3: %q", len(refused), refused)
	}
	for _, want := range []string{"intent: unsigned", "intent: unknown_key", "intent: binding_mismatch"} {
		if !strings.Contains(strings.Join(refused, "\n"), want) {
			t.Errorf("no refusal names %q: %q", want, refused)
		}
	}
	if !timedOut {
		t.Error("customer-4 did not fail closed on its deadline (no approval_timeout)")
	}
	finals, err := readOutput(out, pipeline.FinalsName, func() *pb.FinalReply { return &pb.FinalReply{} })
	if err != nil {
		t.Fatal(err)
	}
	replied := map[string]bool{}
	for _, f := range finals {
		replied[string(f.GetEntityKey())] = true
	}
	for _, k := range []string{"customer-1", "customer-2", "customer-3", "customer-5"} {
		if !replied[k] {
			t.Errorf("%s has no final reply", k)
		}
	}
	if replied["customer-4"] {
		t.Error("customer-4 got a final reply")
	}
}

// --verify_results: require or permissive needs a keyring, an unknown mode is a usage error;
// over results and approvals nobody signed, the default with a keyring (require) refuses them
// and permissive admits them.
func TestRunVerifyResultsModes(t *testing.T) {
	dir := t.TempDir()
	opts, _, err := prepareDemo(dir)
	if err != nil {
		t.Fatal(err)
	}
	unsigned := writeEnvelopes(t)
	for _, tc := range []struct {
		name, mode string
		keyring    bool
		code       int
		refused    int // result_refused + approval_refused dead letters
		finals     int
	}{
		{"require without keyring", "require", false, 2, 0, 0},
		{"unknown mode", "lenient", true, 2, 0, 0},
		{"default with keyring", "", true, 0, 2, 2},
		{"permissive", "permissive", true, 0, 0, 4},
		{"off", "off", true, 0, 0, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			ring := "--keyring="
			if tc.keyring {
				ring = "--keyring=" + opts.Keyring
			}
			code, stdout, errOut := runCLI(t, "", runArgs(unsigned, out, ring, "--verify_results="+tc.mode)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, stdout, errOut)
			}
			if code != 0 {
				if !strings.Contains(errOut, "--verify_results") {
					t.Fatalf("stderr does not name the flag: %s", errOut)
				}
				return
			}
			dead, err := readOutput(out, pipeline.DeadLettersName, func() *pb.ActivationErrorRecord { return &pb.ActivationErrorRecord{} })
			if err != nil {
				t.Fatal(err)
			}
			refused := 0
			for _, d := range dead {
				if d.GetReason() == "result_refused" || d.GetReason() == "approval_refused" {
					refused++
				}
			}
			finals, err := readOutput(out, pipeline.FinalsName, func() *pb.FinalReply { return &pb.FinalReply{} })
			if err != nil {
				t.Fatal(err)
			}
			if refused != tc.refused || len(finals) != tc.finals {
				t.Fatalf("%d refused, %d final replies; want %d, %d", refused, len(finals), tc.refused, tc.finals)
			}
		})
	}
}
