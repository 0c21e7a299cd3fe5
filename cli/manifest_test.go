package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/examples/support"
)

// `manifest` prints the pipeline's update manifest; --check accepts the same pipeline, refuses
// a changed one with the difference, and accepts a rename listed in --mapping.
func TestManifestCommand(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "", "manifest", "--agent", support.Name)
	if code != 0 || !strings.Contains(out, `"RunAgent/transforms.runAgentFn"`) || !strings.Contains(out, `"agent_state.v1"`) {
		t.Fatalf("manifest: exit %d\n%s\n%s", code, out, errOut)
	}
	pinned := filepath.Join(dir, "manifest.json")
	os.WriteFile(pinned, []byte(out), 0o644)
	for _, tc := range []struct {
		name    string
		args    []string
		mapping string
		code    int
		want    string
	}{
		{"same pipeline", nil, "", 0, "update-compatible"},
		{"sharded outputs", []string{"--shards", "4"}, "", 1, `+ transform "WriteShards_intents/pipeline.writeShardFn"`},
		{"windowed sharded outputs", []string{"--shards", "4", "--window", "5m"}, "", 1, "beam:window_fn:fixed_windows:v1"},
		{"binary input", []string{"--input", "in/*.binpb"}, "", 1, `- transform "ReadRecords/pipeline.lineRecordFn"`},
		{"a shadow agent", []string{"--shadow_agent", support.Name}, "", 1, `+ stateful "Shadow/RunAgent/transforms.runAgentFn" state "agent_state.v1"`},
		{"a mapping that does not cover the change", []string{"--shards", "4"}, `{"Write_intents":"WriteShards_intents"}`, 1, `+ boundary "WriteShards_intents/CoGBK.i0"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"manifest", "--agent", support.Name, "--check", pinned}, tc.args...)
			if tc.mapping != "" {
				m := filepath.Join(dir, "mapping.json")
				os.WriteFile(m, []byte(tc.mapping), 0o644)
				args = append(args, "--mapping", m)
			}
			code, out, errOut := runCLI(t, "", args...)
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Fatalf("exit %d (want %d), output lacks %q:\n%s\n%s", code, tc.code, tc.want, out, errOut)
			}
		})
	}
}
