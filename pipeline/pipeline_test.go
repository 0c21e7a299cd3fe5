package pipeline_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/pipeline"
)

func TestMain(m *testing.M) { ptest.Main(m) }

func writeKeyring(t *testing.T, dir string) string {
	t.Helper()
	ring := `{"active":"demo","keys":[{"id":"demo","secret":"` + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)) + `"}]}`
	p := filepath.Join(dir, "keyring.json")
	if err := os.WriteFile(p, []byte(ring), 0o600); err != nil {
		t.Fatal(err)
	}
	return "file:" + p
}

func TestSupportExampleOnPrism(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "envelopes.jsonl")
	os.WriteFile(in, support.Envelopes, 0o644)
	res, err := pipeline.Run(context.Background(), "", pipeline.Options{
		Agent: support.Name, Keyring: writeKeyring(t, dir), Input: in, OutputDir: filepath.Join(dir, "out"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("counters %v", res.Counters)
	for _, o := range pipeline.Outputs() {
		b, _ := os.ReadFile(filepath.Join(dir, "out", o.Name+".jsonl"))
		t.Logf("%s:\n%s", o.Name, b)
	}
}
