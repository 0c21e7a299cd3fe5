package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/pipeline"
)

const (
	// proposerAgent is a handler agent that asks a model through its proposal schema (the
	// support agent's) and replies with the answer, and has no model of its own.
	proposerAgent = "proposer-without-model"
	// replierAgent is a handler agent without a model that never asks one: it replies in code.
	replierAgent = "replier-without-model"
)

func init() {
	agent.Register(proposerAgent, func([]byte) (*agent.Agent, error) {
		schema, err := support.Schema()
		if err != nil {
			return nil, err
		}
		return agent.New(agent.Definition{Name: proposerAgent, Schema: schema, ModelID: "proposer-1",
			Handler: func(hc *agent.Context, tr agent.Trigger) error {
				v, err := hc.Propose(agent.Ask{Messages: []model.Message{{Role: "user", Content: string(tr.Event)}}})
				if err != nil {
					return err
				}
				return hc.ReplyValue(v, schema)
			}})
	})
	agent.Register(replierAgent, func([]byte) (*agent.Agent, error) {
		return agent.New(agent.Definition{Name: replierAgent, Handler: func(hc *agent.Context, tr agent.Trigger) error {
			return hc.Reply("received: " + string(tr.Event))
		}})
	})
}

// events writes one external event for each key, and extra lines as they are, to a new
// JSON Lines file under dir.
func events(t *testing.T, dir string, keys []string, extra ...string) string {
	t.Helper()
	var in bytes.Buffer
	for i, k := range keys {
		line, err := protojson.Marshal(&pb.AgentEnvelope{EntityKey: []byte(k), EventTimeMs: 1767225600000 + int64(i),
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("question of " + k)}})
		if err != nil {
			t.Fatal(err)
		}
		json.Compact(&in, line)
		in.WriteByte('\n')
	}
	for _, l := range extra {
		in.WriteString(l + "\n")
	}
	p := filepath.Join(dir, "in", "events.jsonl")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// hostedModel is the flags of a run whose model is the OpenAI-compatible server srv.
func hostedModel(t *testing.T, srv *llmtest.Server) []string {
	t.Helper()
	t.Setenv("BEAMAGENTS_OUTCOME_KEY", "sk-outcome")
	t.Cleanup(func() { setFlags(t, "model", "scripted", "api_key", "", "base_url", "", "model_name", "") })
	return []string{"--model", "openai", "--model_name", "gpt-test", "--base_url", srv.BaseURL(), "--api_key", "env:BEAMAGENTS_OUTCOME_KEY"}
}

const supportReply = `{"case":"support.reply","fields":{"support.reply.text":"it ships today"}}`

// A run that cannot succeed is refused at launch: an agent that asks a model through its
// proposal schema and has none, under --model scripted (the default, which keeps the agent's
// own). A handler that never asks a model runs without one, and the same agent runs once the
// launch gives it a model.
func TestRunRefusesAnAgentThatAsksAModelItHasNot(t *testing.T) {
	dir := t.TempDir()
	keys := []string{"k0", "k1", "k2"}
	input := events(t, dir, keys)
	out := filepath.Join(dir, "refused")
	code, stdout, stderr := runCLI(t, "", "run", "--agent", proposerAgent, "--allow_unsigned_intents", "--input", input, "--output_dir", out, "--model", "scripted")
	if code != 2 || !strings.Contains(stderr, `agent "proposer-without-model" asks a model (it declares a proposal schema) and has no model of its own`) ||
		!strings.Contains(stderr, "--model scripted keeps") || !strings.Contains(stderr, "model_error") {
		t.Fatalf("exit %d, want 2 with the refusal\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the refused run made its output folder: %v", err)
	}

	out = filepath.Join(dir, "replied")
	if code, stdout, stderr := runCLI(t, "", "run", "--agent", replierAgent, "--allow_unsigned_intents", "--input", input, "--output_dir", out); code != 0 {
		t.Fatalf("a handler that asks no model: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if n := countRecords(t, filepath.Join(out, pipeline.FinalsName+".jsonl")); n != len(keys) {
		t.Fatalf("the handler without a model replied %d times, want %d", n, len(keys))
	}

	srv := llmtest.New(llmtest.OpenAI, func(int, []byte) llmtest.Reply { return llmtest.Reply{Text: supportReply} })
	t.Cleanup(srv.Close)
	out = filepath.Join(dir, "hosted")
	args := append([]string{"run", "--agent", proposerAgent, "--allow_unsigned_intents", "--input", input, "--output_dir", out}, hostedModel(t, srv)...)
	if code, stdout, stderr := runCLI(t, "", args...); code != 0 {
		t.Fatalf("with --model openai: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if n := countRecords(t, filepath.Join(out, pipeline.FinalsName+".jsonl")); n != len(keys) {
		t.Fatalf("with a model: %d final replies, want %d", n, len(keys))
	}
}

// A bounded run in which nothing succeeded (dead letters, and not one final reply, intent or
// snapshot) exits 1, its last line naming the commonest reason with an example, its outputs
// kept; a run in which one key succeeded exits 0.
func TestRunExitsOneWhenNothingSucceeded(t *testing.T) {
	dir := t.TempDir()
	keys := []string{"k0", "k1", "k2", "k3", "k4"}
	input := events(t, dir, keys, `{"entityKey": "a2V5", "externalEvent": "not base64!"}`, `not json`)
	// Two servers: one refuses every request, the other answers k0's question only.
	refusing := llmtest.New(llmtest.OpenAI, func(int, []byte) llmtest.Reply { return llmtest.Reply{Status: 400} })
	t.Cleanup(refusing.Close)
	answering := llmtest.New(llmtest.OpenAI, func(_ int, body []byte) llmtest.Reply {
		if bytes.Contains(body, []byte("question of k0")) {
			return llmtest.Reply{Text: supportReply}
		}
		return llmtest.Reply{Status: 400}
	})
	t.Cleanup(answering.Close)

	out := filepath.Join(dir, "failed")
	code, stdout, stderr := runCLI(t, "", append([]string{"run", "--agent", proposerAgent, "--allow_unsigned_intents", "--input", input, "--output_dir", out}, hostedModel(t, refusing)...)...)
	want := "beamagents: nothing succeeded: 7 dead letters and no final reply, intent or snapshot; the commonest reason is model_error (5 of 7), for example \"model_error: step 0"
	if code != 1 || !strings.Contains(stderr, want) || !strings.HasSuffix(stderr, "("+filepath.Join(out, pipeline.DeadLettersName+".jsonl")+")\n") {
		t.Fatalf("exit %d, want 1 and a last line %q… naming the dead letters file\n%s\n%s", code, want, stdout, stderr)
	}
	printed := printedCounters(stdout)
	if printed["dead_letters"] != "7" || printed["dead_letters.model_error"] != "5" || printed["dead_letters.envelope_invalid"] != "2" || printed["final_replies"] != "0" {
		t.Fatalf("counters %v", printed)
	}
	if n := countRecords(t, filepath.Join(out, pipeline.DeadLettersName+".jsonl")); n != 7 {
		t.Fatalf("%d dead letters kept, want 7", n)
	}

	out = filepath.Join(dir, "one-answered")
	code, stdout, stderr = runCLI(t, "", append([]string{"run", "--agent", proposerAgent, "--allow_unsigned_intents", "--input", input, "--output_dir", out}, hostedModel(t, answering)...)...)
	if code != 0 || strings.Contains(stderr, "nothing succeeded") {
		t.Fatalf("one key answered: exit %d, want 0\n%s\n%s", code, stdout, stderr)
	}
	if printed := printedCounters(stdout); printed["final_replies"] != "1" || printed["dead_letters"] != "6" {
		t.Fatalf("counters %v", printed)
	}
}
