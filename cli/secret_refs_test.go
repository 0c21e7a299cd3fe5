package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/internal/secretref"
	"github.com/beamagents/beamagents/internal/testkit/secrettest"
	"github.com/beamagents/beamagents/pipeline"
)

// The signing keyring and the model API key given as Secret Manager references
// (gcpsm:projects/P/secrets/S/versions/V), served by a loopback Secret Manager: the run reads
// each once in the process, signs with the keyring, sends the key to the model server and
// writes it nowhere. A version that does not exist or that the credentials may not read
// stops the run at start-up with one message naming it, not a dead letter per key.
func TestRunWithSecretManagerReferences(t *testing.T) {
	sm := secrettest.Start(t)
	t.Setenv(secretref.EndpointEnv, sm.Addr)
	dir := t.TempDir()
	base, _, err := prepareDemo(dir)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := os.ReadFile(strings.TrimPrefix(base.Keyring, "file:"))
	if err != nil {
		t.Fatal(err)
	}
	sm.Put("projects/p/secrets/ring/versions/1", ring)
	sm.Put("projects/p/secrets/api/versions/2", []byte(e2eKey+"\n"))
	sm.Deny("projects/p/secrets/api/versions/3")
	srv := scriptServer(t)
	t.Cleanup(func() {
		setFlags(t, "model", "scripted", "api_key", "", "base_url", "", "model_name", "")
	})
	run := func(name, keyring, apiKey string) (int, string, string) {
		return runCLI(t, "", "run", "--agent", support.Name, "--input", base.Input, "--output_dir", filepath.Join(dir, name),
			"--keyring", keyring, "--model", "openai", "--model_name", "gpt-test", "--base_url", srv.BaseURL(), "--api_key", apiKey)
	}

	code, out, errOut := run("ok", "gcpsm:projects/p/secrets/ring/versions/1", "gcpsm:projects/p/secrets/api/versions/2")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if h := srv.Headers()[0].Get("Authorization"); h != "Bearer "+e2eKey {
		t.Fatalf("authorization %q", h)
	}
	if n := sm.Accesses.Load(); n != 2 {
		t.Errorf("%d Secret Manager reads, want 2 (each reference once for the process)", n)
	}
	finals, _ := os.ReadFile(filepath.Join(dir, "ok", pipeline.FinalsName+".jsonl"))
	if bytes.Count(finals, []byte("\n")) != 4 {
		t.Errorf("finals:\n%s", finals)
	}
	if strings.Contains(out+errOut, e2eKey) {
		t.Error("the key appears in the command's output")
	}
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(e2eKey)) {
				t.Errorf("the key appears in %s", path)
			}
		}
		return nil
	})

	for _, tc := range []struct {
		name, keyring, apiKey, want string
	}{
		{"keyring not found", "gcpsm:projects/p/secrets/ring/versions/9", "gcpsm:projects/p/secrets/api/versions/2", "not_found: secret version projects/p/secrets/ring/versions/9 does not exist"},
		{"api key denied", "gcpsm:projects/p/secrets/ring/versions/1", "gcpsm:projects/p/secrets/api/versions/3", "permission_denied: secret version projects/p/secrets/api/versions/3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(tc.name, tc.keyring, tc.apiKey)
			if code != 1 || !strings.HasPrefix(errOut, "beamagents: ") || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
				t.Fatalf("exit %d, want 1 and %q on stderr\n%s\n%s", code, tc.want, out, errOut)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, tc.name, pipeline.DeadLettersName+".jsonl")); len(b) > 0 {
				t.Errorf("dead letters written:\n%s", b)
			}
		})
	}
}

// The effector's keyring as a Secret Manager reference: it verifies and signs with it; a
// denied version stops it at start-up with the reference named.
func TestEffectorWithSecretManagerKeyring(t *testing.T) {
	sm := secrettest.Start(t)
	t.Setenv(secretref.EndpointEnv, sm.Addr)
	dir := t.TempDir()
	ring, _ := writeIntents(t, dir)
	doc, err := os.ReadFile(ring)
	if err != nil {
		t.Fatal(err)
	}
	sm.Put("projects/p/secrets/effector-ring/versions/latest", doc)
	sm.Deny("projects/p/secrets/effector-ring/versions/2")
	run := func(ref string) (int, string, string) {
		out := filepath.Join(dir, "out-"+strings.NewReplacer("/", "_", ":", "_").Replace(ref))
		return runCLI(t, "", "effector", "--input", filepath.Join(dir, "in", "intents.*"), "--output_dir", out,
			"--keyring", ref, "--verify", "require", "--dedup", "bbolt:"+filepath.Join(dir, "dedup.db"))
	}
	code, out, errOut := run("gcpsm:projects/p/secrets/effector-ring/versions/latest")
	if code != 1 || !strings.Contains(out, "executed                     2") { // 1: its approval is nobody's to decide
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = run("gcpsm:projects/p/secrets/effector-ring/versions/2")
	if code == 0 || !strings.Contains(errOut, "permission_denied: secret version projects/p/secrets/effector-ring/versions/2") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}
