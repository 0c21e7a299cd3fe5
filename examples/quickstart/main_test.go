package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/transforms"
)

func TestMain(m *testing.M) { ptest.Main(m) }

// recorded answers, as an OpenAI-compatible server would send them, in request order.
func recorded(t *testing.T) []llmtest.Reply {
	t.Helper()
	var out []llmtest.Reply
	sc := bufio.NewScanner(bytes.NewReader(ModelScript))
	for sc.Scan() {
		var r struct {
			Response json.RawMessage `json:"response"`
		}
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 && line[0] != '#' {
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatal(err)
			}
			out = append(out, llmtest.Reply{Text: string(r.Response), InputTokens: 100, OutputTokens: 20})
		}
	}
	return out
}

// TestRunAgainstAnOpenAICompatibleServer runs the README's pipeline on Prism with the model
// chosen at launch: an OpenAI-compatible server on loopback answers; the agent answers user-1,
// opens a ticket for user-2 and, once the ticket tool's result is in, tells user-2.
func TestRunAgainstAnOpenAICompatibleServer(t *testing.T) {
	rs := recorded(t)
	// Each user's requests get that user's recorded answers in order.
	answers := map[string][]llmtest.Reply{
		"How do I reset my password?":                 {rs[0]},
		"Checkout fails with a 500 error every time!": {rs[1], rs[2]},
	}
	var mu sync.Mutex
	srv := llmtest.New(llmtest.OpenAI, func(_ int, body []byte) llmtest.Reply {
		var req struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		json.Unmarshal(body, &req)
		mu.Lock()
		defer mu.Unlock()
		for _, m := range req.Messages {
			if q := answers[m.Content]; m.Role == "user" && len(q) > 0 {
				answers[m.Content] = q[1:]
				return q[0]
			}
		}
		return llmtest.Reply{Status: 400}
	})
	defer srv.Close()

	dir := t.TempDir()
	in := filepath.Join(dir, "envelopes.jsonl")
	if err := os.WriteFile(in, Envelopes, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("QUICKSTART_KEY", "sk-local")
	t.Setenv("QUICKSTART_KEYRING", `{"active":"k1","keys":[{"id":"k1","secret":"c2l4dGVlbi1ieXRlcy1zZWNyZXQtZm9yLWEtdGVzdCE="}]}`)
	out := filepath.Join(dir, "out")
	_, err := pipeline.Run(context.Background(), "prism", pipeline.Options{
		Options: transforms.Options{
			Agent: Name, Keyring: "env:QUICKSTART_KEYRING",
			Model: hosted.Options{Provider: hosted.OpenAI, Name: "local-model", BaseURL: srv.BaseURL(), APIKey: "env:QUICKSTART_KEY"},
		},
		Input: in, OutputDir: out,
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d model requests, want 3", n)
	}
	finals, _ := os.ReadFile(filepath.Join(out, pipeline.FinalsName+".jsonl"))
	intents, _ := os.ReadFile(filepath.Join(out, pipeline.IntentsName+".jsonl"))
	dead, _ := os.ReadFile(filepath.Join(out, pipeline.DeadLettersName+".jsonl"))
	if !bytes.Contains(finals, []byte("Forgot password")) || !bytes.Contains(finals, []byte("ticket T-17")) || !bytes.Contains(intents, []byte(`"toolName":"tickets.open"`)) || len(dead) > 0 {
		t.Fatalf("finals %s\nintents %s\ndead letters %s", finals, intents, dead)
	}
	if !bytes.Contains(srv.Requests()[0], []byte(`"model":"local-model"`)) {
		t.Fatal("the model name did not reach the server")
	}
}

func TestAgentBuilds(t *testing.T) {
	a, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Name() != Name || a.Schema().RootTypeID() != "triage.proposal" {
		t.Fatalf("%s %s", a.Name(), a.Schema().RootTypeID())
	}
}
