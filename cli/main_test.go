package cli

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	goldenv1 "github.com/beamagents/beamagents/golden/v1"
	"github.com/beamagents/beamagents/records"
)

// runCLI runs the command in-process and returns exit code, stdout and stderr.
func runCLI(t testing.TB, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(&env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func golden(name string) string { return filepath.Join("..", "golden", "v1", name) }

func TestUsage(t *testing.T) {
	if code, _, _ := runCLI(t, ""); code != 2 {
		t.Fatalf("no args: exit %d", code)
	}
	if code, out, _ := runCLI(t, "", "help"); code != 0 || !strings.Contains(out, "inspect") {
		t.Fatalf("help: exit %d, %q", code, out)
	}
	if code, _, _ := runCLI(t, "", "frobnicate"); code != 2 {
		t.Fatalf("unknown command: exit %d", code)
	}
}

func TestInspect(t *testing.T) {
	for _, tc := range []struct {
		name, typ, file string
		code            int
		want            string
	}{
		{"bare name", "ToolIntent", golden("tool_intent_signed.binpb"), 0, "HMAC_SHA256"},
		{"full name", "beam_agents.v1.Continuation", golden("continuation_escalations.binpb"), 0, `"escalations": 2`},
		{"nested type", "AgentEnvelope.Approval", golden("tool_result.binpb"), 0, ""},
		{"wrong type", "ToolIntent", golden("state_snapshot.binpb"), 1, ""},
		{"unknown type", "NoSuchMessage", golden("tool_intent.binpb"), 2, ""},
		{"missing file", "ToolIntent", "/nonexistent", 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", "inspect", "--type", tc.typ, tc.file)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tc.code, errOut)
			}
			if code == 1 && errOut == "" {
				t.Fatal("failure without an error message")
			}
			if !strings.Contains(strings.ReplaceAll(out, "  ", " "), strings.ReplaceAll(tc.want, "  ", " ")) {
				t.Fatalf("stdout %q lacks %q", out, tc.want)
			}
		})
	}
}

func TestIntentSignVerify(t *testing.T) {
	dir := t.TempDir()
	ring := `{"active":"k2","keys":[{"id":"k1","secret":"` + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32)) +
		`"},{"id":"k2","secret":"` + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32)) + `"}]}`
	ringPath := filepath.Join(dir, "ring.json")
	os.WriteFile(ringPath, []byte(ring), 0o600)
	signed := filepath.Join(dir, "signed.bin")

	if code, _, e := runCLI(t, "", "intent", "sign", "--keyring", "file:"+ringPath, "--key-id", "k1", "--out", signed, golden("tool_intent_trace_id.binpb")); code != 0 {
		t.Fatalf("sign: exit %d: %s", code, e)
	}
	code, out, _ := runCLI(t, "", "intent", "verify", "--keyring", "file:"+ringPath, signed)
	if code != 0 || out != "ok\n" {
		t.Fatalf("verify signed: exit %d %q", code, out)
	}
	b, _ := os.ReadFile(signed)
	ti, ok := readIntent(&env{stderr: os.Stderr}, signed)
	if !ok || ti.SigningKeyId != "k1" {
		t.Fatalf("signed with %q", ti.SigningKeyId)
	}
	if strings.Contains(string(b), base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))) {
		t.Fatal("key material in output")
	}

	t.Setenv("BEAMAGENTS_CLI_RING", ring)
	for _, tc := range []struct {
		file, want string
		code       int
	}{
		{golden("tool_intent.binpb"), "unsigned", 1},
		{golden("tool_intent_signed.binpb"), "unknown_key", 1},
	} {
		code, out, _ := runCLI(t, "", "intent", "verify", "--keyring", "env:BEAMAGENTS_CLI_RING", tc.file)
		if code != tc.code || out != tc.want+"\n" {
			t.Errorf("verify %s: exit %d %q, want %d %q", tc.file, code, out, tc.code, tc.want)
		}
	}
	// Tampered: flip the tool name of the signed intent.
	ti.ToolName = "delete_everything"
	tampered := filepath.Join(dir, "tampered.bin")
	b, _ = proto.Marshal(ti)
	os.WriteFile(tampered, b, 0o644)
	if code, out, _ := runCLI(t, "", "intent", "verify", "--keyring", "file:"+ringPath, tampered); code != 1 || out != "bad_signature\n" {
		t.Fatalf("tampered: exit %d %q", code, out)
	}
	// The golden keyring verifies the golden signed intent.
	gring := `{"active":"` + goldenv1.SigningKeyID + `","keys":[{"id":"` + goldenv1.SigningKeyID + `","secret":"` + base64.StdEncoding.EncodeToString(goldenv1.SigningKey) + `"}]}`
	t.Setenv("BEAMAGENTS_GOLDEN_RING", gring)
	if code, out, _ := runCLI(t, "", "intent", "verify", "--keyring", "env:BEAMAGENTS_GOLDEN_RING", golden("tool_intent_future_field.binpb")); code != 0 || out != "ok\n" {
		t.Fatalf("golden future-field intent: exit %d %q", code, out)
	}
	if code, _, _ := runCLI(t, "", "intent", "verify", "--keyring", "env:BEAMAGENTS_UNSET", signed); code != 2 {
		t.Fatalf("missing keyring: exit %d", code)
	}
}

// readOutput reads NAME.binpb of dir (a typed record file) into messages of m's type.
func readOutput[M proto.Message](dir, name string, newM func() M) ([]M, error) {
	return records.ReadMessages([]string{filepath.Join(dir, name+".binpb")}, newM)
}
