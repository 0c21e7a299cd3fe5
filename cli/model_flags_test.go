package cli

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/model/limit"
	"github.com/beamagents/beamagents/pipeline"
)

const e2eKey = "sk-e2e-7c1d9b3f5a2e4c6b8d0f1a3c5e7b9d2f"

// scriptServer answers like examples/support's recorded model, over the OpenAI API: each
// entity's requests (told apart by the triggering event's text) get that entity's recorded
// answers in order.
func scriptServer(t *testing.T) *llmtest.Server {
	t.Helper()
	triggers := map[string]string{} // event text -> entity
	sc := bufio.NewScanner(bytes.NewReader(support.Envelopes))
	for sc.Scan() {
		var env struct {
			EntityKey     []byte `json:"entityKey"`
			ExternalEvent []byte `json:"externalEvent"`
		}
		if json.Unmarshal(sc.Bytes(), &env) == nil && env.ExternalEvent != nil {
			triggers[string(env.ExternalEvent)] = string(env.EntityKey)
		}
	}
	answers := map[string][]llmtest.Reply{}
	sc = bufio.NewScanner(bytes.NewReader(support.ModelScript))
	for sc.Scan() {
		var r struct {
			Entity       string          `json:"entity"`
			Response     json.RawMessage `json:"response"`
			InputTokens  int64           `json:"input_tokens"`
			OutputTokens int64           `json:"output_tokens"`
		}
		if line := bytes.TrimSpace(sc.Bytes()); len(line) == 0 || line[0] == '#' || json.Unmarshal(line, &r) != nil {
			continue
		}
		answers[r.Entity] = append(answers[r.Entity], llmtest.Reply{Text: string(r.Response), InputTokens: r.InputTokens, OutputTokens: r.OutputTokens})
	}
	var mu sync.Mutex
	served := map[string]int{}
	srv := llmtest.New(llmtest.OpenAI, func(_ int, body []byte) llmtest.Reply {
		var req struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		json.Unmarshal(body, &req)
		for _, m := range req.Messages {
			entity, ok := triggers[m.Content]
			if m.Role != "user" || !ok {
				continue
			}
			mu.Lock()
			defer mu.Unlock()
			if n := served[entity]; n < len(answers[entity]) {
				served[entity]++
				return answers[entity][n]
			}
		}
		return llmtest.Reply{Status: 400}
	})
	t.Cleanup(srv.Close)
	return srv
}

// TestRunWithOpenAI: the support agent run on Prism against an OpenAI-compatible server that
// answers as its recorded model does produces the same intents and final replies as the
// scripted run; and the API key, given by reference, appears in no output, log line, error
// or the pipeline's portable proto.
func TestRunWithOpenAI(t *testing.T) {
	dir := t.TempDir()
	base, _, err := prepareDemo(dir)
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, extra ...string) (string, string) {
		out := filepath.Join(dir, name)
		args := append([]string{"run", "--agent", support.Name, "--input", base.Input, "--output_dir", out, "--keyring", base.Keyring}, extra...)
		code, stdout, stderr := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", name, code, stdout, stderr)
		}
		return out, stdout + stderr
	}
	scripted, _ := run("scripted", "--model", "scripted")

	srv := scriptServer(t)
	t.Setenv("BEAMAGENTS_E2E_KEY", e2eKey)
	openai, logs := run("openai", "--model", "openai", "--model_name", "gpt-test", "--base_url", srv.BaseURL(),
		"--api_key", "env:BEAMAGENTS_E2E_KEY", "--model_timeout", "30s", "--model_max_attempts", "2", "--model_call_timeout", "2m", "--model_stream=true")
	setFlags(t, "model", "scripted", "api_key", "", "base_url", "", "model_name", "") // flags are process-wide

	if n := len(srv.Requests()); n != 8 {
		t.Errorf("%d model requests, want the script's 8", n)
	}
	for _, name := range []string{pipeline.IntentsName, pipeline.FinalsName} {
		a, _ := os.ReadFile(filepath.Join(scripted, name+".jsonl"))
		b, _ := os.ReadFile(filepath.Join(openai, name+".jsonl"))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differ between the scripted and the OpenAI run:\n%s\n---\n%s", name, a, b)
		}
	}
	traces, _ := os.ReadFile(filepath.Join(openai, pipeline.TracesName+".jsonl"))
	for _, want := range []string{`"gen_ai.response.model":"test-model"`, `"gen_ai.usage.input_tokens":"182"`, `"gen_ai.response.finish_reasons":"stop"`} {
		if !bytes.Contains(traces, []byte(want)) {
			t.Errorf("traces lack %s", want)
		}
	}

	// The key reached the server, and nothing else.
	if h := srv.Headers()[0].Get("Authorization"); h != "Bearer "+e2eKey {
		t.Fatalf("authorization %q", h)
	}
	if strings.Contains(logs, e2eKey) {
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
	p, s := beam.NewPipelineWithRoot()
	opts := base
	opts.Model = hosted.Options{Provider: hosted.OpenAI, BaseURL: srv.BaseURL(), APIKey: "env:BEAMAGENTS_E2E_KEY"}
	if err := pipeline.Build(s, opts); err != nil {
		t.Fatal(err)
	}
	edges, _, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	pp, err := graphx.Marshal(edges, &graphx.Options{Environment: &pipepb.Environment{Urn: "beam:env:loopback:v1"}})
	if err != nil {
		t.Fatal(err)
	}
	wire, _ := proto.Marshal(pp)
	if containsDeep(wire, e2eKey, 4) || !containsDeep(wire, "env:BEAMAGENTS_E2E_KEY", 4) {
		t.Error("the pipeline proto carries the key, or not its reference")
	}
}

var base64Run = regexp.MustCompile(`[A-Za-z0-9+/]{16,}={0,2}`)

// containsDeep searches b for s, and the base64 runs inside b (Beam encodes DoFns as base64
// protos holding JSON, nested), down to depth layers.
func containsDeep(b []byte, s string, depth int) bool {
	if bytes.Contains(b, []byte(s)) {
		return true
	}
	if depth == 0 {
		return false
	}
	for _, run := range base64Run.FindAll(b, -1) {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
			if dec, err := enc.DecodeString(string(run)); err == nil && containsDeep(dec, s, depth-1) {
				return true
			}
		}
	}
	return false
}

func TestModelFlagsRefuseAKeyByValue(t *testing.T) {
	defineRunFlags()
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "", "run", "--agent", support.Name, "--input", filepath.Join(dir, "*.jsonl"), "--output_dir", dir, "--model", "openai", "--api_key", e2eKey)
	setFlags(t, "model", "scripted", "api_key", "")
	if code != 2 || !strings.Contains(errOut, "did you paste the key itself") || strings.Contains(out+errOut, e2eKey) {
		t.Fatalf("exit %d %q %q", code, out, errOut)
	}
	code, _, errOut = runCLI(t, "", "run", "--agent", support.Name, "--input", filepath.Join(dir, "*.jsonl"), "--output_dir", dir, "--model", "gemini")
	setFlags(t, "model", "scripted")
	if code != 2 || !strings.Contains(errOut, `--model: "gemini" is not one of scripted, openai, anthropic`) {
		t.Fatalf("unknown provider: exit %d %q", code, errOut)
	}
}

// setFlags sets run's flags, name then value: flags are process-wide.
func setFlags(t testing.TB, nameValues ...string) {
	t.Helper()
	defineRunFlags()
	for i := 0; i < len(nameValues); i += 2 {
		if err := flag.Set(nameValues[i], nameValues[i+1]); err != nil {
			t.Fatal(err)
		}
	}
}

// resetModelFlags puts every model flag back to its default: flags are process-wide.
func resetModelFlags(t *testing.T) {
	t.Helper()
	defineRunFlags()
	for _, name := range []string{"model", "model_name", "base_url", "api_key", "model_timeout", "model_call_timeout", "model_max_attempts", "model_stream",
		"model_concurrency", "model_rpm", "model_tpm", "model_breaker_failures", "model_breaker_cooldown", "model_breaker_hold", "model_fallback", "model_fallback_file"} {
		f := flag.Lookup(name)
		if err := f.Value.Set(f.DefValue); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunWithModelLimitsAndFallback runs the support agent on Prism with the limit flags
// against a server that holds each request a while: the server never sees more requests at
// once than --model_concurrency, and the worker's endpoint counted every call. Then the
// primary endpoint refuses connections: the fallback (from --model_fallback, then from
// --model_fallback_file) answers every call, the outputs are the scripted run's, and the
// traces name the fallback and the passed-over model, refused by its breaker once open.
func TestRunWithModelLimitsAndFallback(t *testing.T) {
	dir := t.TempDir()
	base, _, err := prepareDemo(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("BEAMAGENTS_E2E_KEY", e2eKey)
	run := func(name string, extra ...string) string {
		t.Helper()
		out := filepath.Join(dir, name)
		args := append([]string{"run", "--agent", support.Name, "--input", base.Input, "--output_dir", out, "--keyring", base.Keyring,
			"--model", "openai", "--model_name", "gpt-test", "--api_key", "env:BEAMAGENTS_E2E_KEY"}, extra...)
		code, stdout, stderr := runCLI(t, "", args...)
		resetModelFlags(t)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", name, code, stdout, stderr)
		}
		return out
	}
	same := func(a, b string) {
		t.Helper()
		for _, name := range []string{pipeline.IntentsName, pipeline.FinalsName} {
			x, _ := os.ReadFile(filepath.Join(a, name+".jsonl"))
			y, _ := os.ReadFile(filepath.Join(b, name+".jsonl"))
			if len(x) == 0 || !bytes.Equal(x, y) {
				t.Errorf("%s differ between %s and %s", name, a, b)
			}
		}
	}
	scripted := filepath.Join(dir, "scripted")
	if code, o, e := runCLI(t, "", "run", "--agent", support.Name, "--input", base.Input, "--output_dir", scripted, "--keyring", base.Keyring); code != 0 {
		t.Fatalf("scripted: %d %s %s", code, o, e)
	}

	srv := scriptServer(t)
	srv.Delay = 20 * time.Millisecond
	limited := run("limited", "--base_url", srv.BaseURL(), "--model_concurrency", "2", "--model_rpm", "60000", "--model_tpm", "100000000",
		"--model_breaker_failures", "3", "--model_breaker_cooldown", "10s")
	same(scripted, limited)
	e, ok := limit.Lookup(limit.Key{Kind: "openai", BaseURL: srv.BaseURL(), Model: "gpt-test"})
	if !ok {
		t.Fatal("the run made no endpoint for the server")
	}
	if st := e.Stats(); srv.Peak() > 2 || st.Started != 8 || st.State != limit.Closed || st.Tokens == 0 {
		t.Fatalf("peak in flight %d (cap 2), endpoint %+v", srv.Peak(), st)
	}

	down := llmtest.Refused(llmtest.OpenAI)
	for _, tc := range []struct {
		name string
		args func(url string) []string
	}{
		{"flag", func(url string) []string { return []string{"--model_fallback", "gpt-fallback@" + url} }},
		{"file", func(url string) []string {
			f := filepath.Join(dir, "fallbacks.json")
			os.WriteFile(f, []byte(`[{"provider":"openai","name":"gpt-fallback","base_url":"`+url+`","api_key":"env:BEAMAGENTS_E2E_KEY"}]`), 0o600)
			return []string{"--model_fallback_file", f}
		}},
	} {
		fb := scriptServer(t)
		args := append([]string{"--base_url", down, "--model_max_attempts", "1", "--model_breaker_failures", "1", "--model_breaker_cooldown", "1h"}, tc.args(fb.BaseURL())...)
		out := run("fallback-"+tc.name, args...)
		same(scripted, out)
		if n := len(fb.Requests()); n != 8 {
			t.Errorf("%s: the fallback answered %d requests, want 8", tc.name, n)
		}
		traces, _ := os.ReadFile(filepath.Join(out, pipeline.TracesName+".jsonl"))
		if n := bytes.Count(traces, []byte(`"beam_agents.answered_by":"gpt-fallback"`)); n != 8 {
			t.Errorf("%s: %d LLM_CALL events name the fallback, want 8", tc.name, n)
		}
		if !bytes.Contains(traces, []byte(`"beam_agents.models_passed":"gpt-test=model_circuit_open"`)) {
			t.Errorf("%s: no trace says the breaker refused the primary", tc.name)
		}
	}
}

func TestModelLimitFlagsRefuseBadValues(t *testing.T) {
	defineRunFlags()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no concurrency", []string{"--model_concurrency", "0"}, "--model_concurrency"},
		{"negative rpm", []string{"--model_rpm", "-1"}, "--model_rpm: -1 is below its minimum 0"},
		{"a fallback without a model id", []string{"--model_fallback", "@http://127.0.0.1:1/v1"}, "names no model id"},
		{"a fallback file that is not there", []string{"--model_fallback_file", filepath.Join(dir, "none.json")}, "--model_fallback_file"},
		{"a fallback of the scripted model", []string{"--model", "scripted", "--model_fallback", "small"}, "needs a hosted model"},
	} {
		args := append([]string{"run", "--agent", support.Name, "--input", filepath.Join(dir, "*.jsonl"), "--output_dir", dir, "--model", "openai"}, tc.args...)
		code, _, errOut := runCLI(t, "", args...)
		resetModelFlags(t)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d %q", tc.name, code, errOut)
		}
	}
}

func FuzzModelFallbackFlag(f *testing.F) {
	f.Add("gpt-small,gpt-small@http://127.0.0.1:8080/v1")
	f.Add(" a@ , ,@b,c@d@e")
	f.Fuzz(func(t *testing.T, list string) {
		fbs, err := fallbacks(list, "")
		if err != nil {
			return
		}
		for _, fb := range fbs {
			if fb.Name == "" || strings.ContainsAny(fb.Name, ",@") || strings.Contains(fb.BaseURL, ",") || fb.Provider != "" || fb.APIKey != "" {
				t.Fatalf("%q: %+v", list, fb)
			}
		}
	})
}
