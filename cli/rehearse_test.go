package cli_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/rehearse"
)

// The rehearsal page's commands, run verbatim in an empty folder with the built binary on the
// PATH, block by block: the baseline run, the unchanged agent within the gate, a changed
// prompt over it (exit 3, the key stopped at its unanswered model request), and the same
// candidate with a live budget (its own model asked, calls and tokens counted). Then the real
// command over the same period: a hosted model on loopback answers the one live call allowed,
// a restored state the candidate cannot read exits 4, and a bad flag exits 2.
func TestChangesDoc(t *testing.T) {
	blocks := shBlocks(t, filepath.Join("..", "docs", "changes.md"))
	want := []int{0, 0, 0, 3, 0, 0} // 3: over the gate; the last block shadows the agent
	if len(blocks) != len(want) {
		t.Fatalf("docs/changes.md has %d sh blocks, this test reads %d", len(blocks), len(want))
	}
	// The live model answers the changed prompt with the baseline's calls: the lookup, the
	// dispatch (the recorded arguments), then a reply. It calls the tools by the names they
	// were declared to it under (OpenAI's names have no dots).
	model := llmtest.New(llmtest.OpenAI, func(n int, _ []byte) llmtest.Reply {
		r := llmtest.Reply{Text: "Dispatched a technician.", InputTokens: 100, OutputTokens: 10}
		switch n {
		case 0:
			r.Text, r.ToolCalls = "", []llmtest.ToolCall{{ID: "c1", Name: "devices_lookup", Arguments: `{"device_id":9007199254740993}`}}
		case 1:
			r.Text, r.ToolCalls = "", []llmtest.ToolCall{{ID: "c2", Name: "devices_dispatch",
				Arguments: `{"device_id":9007199254740993,"reason":"boiler sensor reads 91.0 °C, 31 °C over the band"}`}}
		}
		return r
	})
	defer model.Close()
	dir := t.TempDir()
	for i, block := range blocks {
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", block)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
			"MODEL_NAME=devices-scripted-1", "MODEL_BASE_URL="+model.BaseURL(), "MODEL_API_KEY=sk-local")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := cmd.ProcessState.ExitCode()
		if code != want[i] {
			t.Fatalf("block %d exits %d (%v), want %d:\n%s\n%s\n%s", i+1, code, err, want[i], block, stdout.String(), stderr.String())
		}
		if strings.Contains(block, "rehearse") {
			t.Logf("block %d:\n%s", i+1, stderr.String())
		}
	}
	read := func(name string) *rehearse.Report {
		t.Helper()
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := rehearse.ReadReport(f)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	const device = "dev-9007199254740993"
	divergedAt := func(r *rehearse.Report, kind rehearse.Kind, stop rehearse.Stop) {
		t.Helper()
		for _, k := range r.Keys {
			if d := k.Divergence; string(k.Entity) == device && (d == nil || d.Kind != kind || d.Seq != 1 || d.Step != 2 || k.Stop != stop) {
				t.Errorf("key %s: %+v, stop %q; want %s at seq 1 step 2, stop %q", k.Entity, d, k.Stop, kind, stop)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "shadowed", "shadow_divergences.jsonl")); err != nil || !bytes.Contains(b, []byte("dev-")) && !bytes.Contains(b, []byte("ZGV2")) {
		t.Errorf("the shadow's comparisons: %v\n%s", err, b)
	}
	if s := read("unchanged.jsonl").Summary; s.Keys != 2 || s.Divergent != 0 || s.LiveCalls != 0 || s.Answered != 3 || s.Inlined != 1 {
		t.Errorf("unchanged: %+v", s)
	}
	changed := read("changed.jsonl")
	if s := changed.Summary; s.Divergent != 1 || s.Stopped[rehearse.StopUnanswered] != 1 || s.LiveCalls != 0 {
		t.Errorf("changed prompt: %+v", s)
	}
	divergedAt(changed, rehearse.KindModelRequest, rehearse.StopUnanswered)
	consoleShowsRehearsal(t, dir)
	live := read("live.jsonl")
	if s := live.Summary; s.Divergent != 1 || len(s.Stopped) != 0 || s.LiveCalls != 3 || s.LiveTokens != 330 || s.Inlined != 1 ||
		len(s.DroppedTools)+len(s.NewTools) != 0 || len(model.Requests()) != 3 {
		t.Errorf("live budget: %+v; the model saw %d requests", s, len(model.Requests()))
	}
	divergedAt(live, rehearse.KindModelRequest, "")
	for _, k := range live.Keys {
		if string(k.Entity) == device && (k.Produced[records.FinalsName] != 1 || k.Produced[records.DeadLettersName] != 0) {
			t.Errorf("live budget: key %s produced %v, want its reply", k.Entity, k.Produced)
		}
	}

	args := func(extra ...string) []string {
		return append([]string{"rehearse", "--agent", "devices", "--agent_config", filepath.Join(dir, "candidate.json"),
			"--input", filepath.Join(dir, "period", "*.jsonl"), "--baseline", filepath.Join(dir, "baseline")}, extra...)
	}
	t.Run("hosted model on loopback", func(t *testing.T) {
		srv := llmtest.New(llmtest.OpenAI, func(int, []byte) llmtest.Reply {
			return llmtest.Reply{Text: "No dispatch: the probe is being replaced.", InputTokens: 300, OutputTokens: 12}
		})
		defer srv.Close()
		report := filepath.Join(t.TempDir(), "report.jsonl")
		code, _, stderr := execCLI(t, []string{"MODEL_KEY=sk-local"}, args("--report", report, "--live_calls", "1",
			"--model", "openai", "--model_name", "gpt-candidate", "--model_base_url", srv.BaseURL(), "--model_api_key", "env:MODEL_KEY",
			"--max_divergent_keys", "1")...)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		f, _ := os.Open(report)
		defer f.Close()
		r, err := rehearse.ReadReport(f)
		if err != nil {
			t.Fatal(err)
		}
		if s := r.Summary; s.LiveCalls != 1 || s.LiveTokens != 312 || s.Divergent != 1 || len(srv.Requests()) != 1 || len(s.Stopped) != 0 {
			t.Fatalf("%+v; the server saw %d requests\n%s", s, len(srv.Requests()), stderr)
		}
		if s := r.Summary; strings.Join(s.DroppedTools, ",") != "devices.dispatch,devices.lookup" {
			t.Errorf("tools no longer called: %v", s.DroppedTools)
		}
	})
	t.Run("unreadable state", func(t *testing.T) {
		restore := filepath.Join(t.TempDir(), "start.jsonl")
		os.WriteFile(restore, []byte(`{"entityKey":"ZGV2LTE3","seq":"1","memory":{"stateSchemaVersion":99}}`+"\n"), 0o644)
		code, _, stderr := execCLI(t, nil, args("--restore", restore)...)
		if code != 4 || !strings.Contains(stderr, "rehearse: state_unreadable") || !strings.Contains(stderr, `"dev-17"`) {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
	})
	t.Run("bad flags", func(t *testing.T) {
		badPrices := filepath.Join(t.TempDir(), "prices.json")
		os.WriteFile(badPrices, []byte(`{"models":{"m":{"input":-1}}}`), 0o644)
		for flag, extra := range map[string][]string{
			"prices":     {"--prices", badPrices},
			"live_calls": {"--live_calls", "-1"},
			"model":      {"--live_calls", "1"}, // and no hosted model
			"baseline":   {"--baseline", dir},
		} {
			code, _, stderr := execCLI(t, nil, args(extra...)...)
			if code != 2 || !strings.Contains(stderr, "--"+flag+":") {
				t.Errorf("%v: exit %d\n%s", extra, code, stderr)
			}
		}
	})
}
