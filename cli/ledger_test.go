package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/ledger"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/tracing"
)

// checkLedger reads a run's traces and ledger under out and checks the ledger against the
// traces: one record per LLM_CALL event, with its span, entity and tokens (the prompt-cache
// reads among them), each priced exactly at prices (recomputed here from the integer
// micro-unit prices: uncached input at the input price, cache reads at the cached-input
// price), a cache hit at 0; it returns the ledger's totals, which equal the traces'.
func checkLedger(t *testing.T, out string, prices ledger.Table) ledger.Totals {
	t.Helper()
	traces := readTyped(t, out, pipeline.TracesName, func() *pb.TraceEvent { return &pb.TraceEvent{} })
	entries := readTyped(t, out, pipeline.LedgerName, func() *pb.LedgerEntry { return &pb.LedgerEntry{} })
	bySpan := map[string]*pb.LedgerEntry{}
	var got ledger.Totals
	for _, e := range entries {
		if _, dup := bySpan[string(e.GetSpanId())]; dup {
			t.Errorf("two records of span %x", e.GetSpanId())
		}
		bySpan[string(e.GetSpanId())] = e
		got.Add(e)
	}
	var want ledger.Totals
	for _, ev := range traces {
		if ev.GetEventType() != pb.TraceEvent_LLM_CALL {
			continue
		}
		a := ev.GetAttributes()
		i, _ := strconv.ParseInt(a[tracing.AttrInputTokens], 10, 64)
		c, _ := strconv.ParseInt(a[tracing.AttrCacheReadInputTokens], 10, 64)
		o, _ := strconv.ParseInt(a[tracing.AttrOutputTokens], 10, 64)
		want.Calls, want.InputTokens, want.CachedInputTokens, want.OutputTokens = want.Calls+1, want.InputTokens+i, want.CachedInputTokens+c, want.OutputTokens+o
		e := bySpan[string(ev.GetSpanId())]
		switch {
		case e == nil:
			t.Errorf("no record of the call of %s seq %d step %d", ev.GetEntityKey(), ev.GetSeq(), ev.GetStepIndex())
			continue
		case !bytes.Equal(e.GetEntityKey(), ev.GetEntityKey()) || e.GetSeq() != ev.GetSeq() || e.GetStepIndex() != ev.GetStepIndex() ||
			e.GetInputTokens() != i || e.GetCachedInputTokens() != c || e.GetOutputTokens() != o || e.GetEventTimeMs() != ev.GetStartMs():
			t.Errorf("record %v of event %v", e, ev)
		}
		p, priced := prices.Models[e.GetResponseModel()]
		cost := int64(0)
		if priced && a[tracing.AttrCacheHit] != "true" {
			cost = ((i-c)*p.Input + c*p.CachedInput + o*p.Output + 500_000) / 1_000_000
		}
		want.Cost += cost
		if e.GetCostMicros() != cost || e.GetPriced() != priced {
			t.Errorf("%s step %d: cost %d priced %v, want %d %v", ev.GetEntityKey(), ev.GetStepIndex(), e.GetCostMicros(), e.GetPriced(), cost, priced)
		}
	}
	if got.Calls != want.Calls || got.InputTokens != want.InputTokens || got.CachedInputTokens != want.CachedInputTokens ||
		got.OutputTokens != want.OutputTokens || got.Cost != want.Cost {
		t.Errorf("ledger: %d calls, %d input (%d cached) and %d output tokens, cost %d; traces: %d, %d (%d), %d, %d",
			got.Calls, got.InputTokens, got.CachedInputTokens, got.OutputTokens, got.Cost,
			want.Calls, want.InputTokens, want.CachedInputTokens, want.OutputTokens, want.Cost)
	}
	if int64(len(entries)) != want.Calls {
		t.Errorf("%d records for %d model calls", len(entries), want.Calls)
	}
	return got
}

// printedCounter is a counter's value in a run's printed counters.
func printedCounter(t *testing.T, stdout, name string) int64 {
	t.Helper()
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == name {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	t.Fatalf("no counter %s in:\n%s", name, stdout)
	return 0
}

// greetingNumber finds the key's number in a request for a greeting.
var greetingNumber = regexp.MustCompile(`GREETING: hello (\d+)`)

func writePrices(t *testing.T, dir, doc string) (string, ledger.Table) {
	t.Helper()
	p := filepath.Join(dir, "prices.json")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err := ledger.DecodePrices([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return p, tab
}

// The costs page's commands, run verbatim in an empty folder with the built binary on the
// PATH: three calls priced as the page says (765, 695 and 903 micro-units), totals equal to
// the traces', the printed counters equal to the ledger, and a refused price file stops the
// run at launch.
func TestCostsDoc(t *testing.T) {
	blocks := shBlocks(t, filepath.Join("..", "docs", "costs.md"))
	if len(blocks) != 3 {
		t.Fatalf("docs/costs.md has %d sh blocks, this test reads 3", len(blocks))
	}
	dir := t.TempDir()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.Join(blocks, "\n"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the page's commands: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	prices, err := os.ReadFile(filepath.Join(dir, "prices.json"))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := ledger.DecodePrices(prices)
	if err != nil {
		t.Fatal(err)
	}
	got := checkLedger(t, filepath.Join(dir, "out"), tab)
	if got.Calls != 3 || got.InputTokens != 182+190+201 || got.OutputTokens != 31+22+40 || got.Cost != 765+695+903 || got.Unpriced != 0 {
		t.Errorf("totals %+v", got)
	}
	run, _ := os.ReadFile(filepath.Join(dir, "run.txt"))
	if printedCounter(t, string(run), "ledger.cost_micros") != 2363 || printedCounter(t, string(run), "ledger.calls") != 3 {
		t.Errorf("printed counters:\n%s", run)
	}
	if _, err := os.Stat(filepath.Join(dir, "out2")); !os.IsNotExist(err) {
		t.Errorf("the refused run made its output folder: %v", err)
	}
}

// The demo's traffic, run with --prices twice: the ledger equals the traces, the printed
// cost equals the ledger's, and the second run's ledger is byte-identical to the first's.
func TestLedgerOfTheDemo(t *testing.T) {
	dir := t.TempDir()
	if code, stdout, stderr := execCLI(t, nil, "demo", "--output_dir", dir); code != 0 {
		t.Fatalf("demo: exit %d\n%s\n%s", code, stdout, stderr)
	}
	pricesPath, tab := writePrices(t, dir, `{"currency":"EUR","models":{"support-scripted-1":{"input":3.1,"output":12.4}}}`)
	var first []byte
	for i := range 2 {
		out := filepath.Join(dir, fmt.Sprintf("costed-%d", i))
		code, stdout, stderr := execCLI(t, nil, "run", "--agent", support.Name, "--keyring", "file:"+filepath.Join(dir, "keyring.json"),
			"--verify_results", "require", "--input", filepath.Join(dir, "input", "envelopes.jsonl"), "--output_dir", out, "--prices", pricesPath)
		if code != 0 {
			t.Fatalf("run %d: exit %d\n%s\n%s", i, code, stdout, stderr)
		}
		got := checkLedger(t, out, tab)
		if got.Calls != 8 || got.Cost == 0 || printedCounter(t, stdout, "ledger.cost_micros") != got.Cost ||
			printedCounter(t, stdout, "ledger.input_tokens") != got.InputTokens {
			t.Errorf("run %d: totals %+v\n%s", i, got, stdout)
		}
		b, err := os.ReadFile(filepath.Join(out, pipeline.LedgerName+".binpb"))
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
		} else if !bytes.Equal(first, b) {
			t.Error("the second run's ledger differs from the first's")
		}
	}
}

// The devices agent's example traffic (a handler with an inline tool and native tool calls)
// with a price table that does not price its model: every record is unpriced, costs 0, and
// is counted in ledger.unpriced; the tokens still equal the traces'.
func TestLedgerOfTheDevicesTraffic(t *testing.T) {
	dir := t.TempDir()
	ring := filepath.Join(dir, "keyring.json")
	os.WriteFile(ring, []byte(`{"active":"d1","keys":[{"id":"d1","secret":"QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkI="}]}`), 0o600)
	pricesPath, tab := writePrices(t, dir, `{"models":{"another-model":{"input":1,"output":1}}}`)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := execCLI(t, nil, "run", "--agent", "devices", "--keyring", "file:"+ring, "--verify_results", "permissive",
		"--input", filepath.Join("..", "examples", "devices", "envelopes.jsonl"), "--output_dir", out, "--prices", pricesPath)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	got := checkLedger(t, out, tab)
	if got.Calls == 0 || got.InputTokens == 0 || got.Unpriced != got.Calls || got.Cost != 0 || printedCounter(t, stdout, "ledger.unpriced") != got.Calls {
		t.Errorf("totals %+v\n%s", got, stdout)
	}
}

// A thousand keys against a loopback model that answers after a provider's latency (half a
// second; 64 calls in flight, the default --model_concurrency) and reports its tokens, a quarter of the keys with prompt-cache reads: the ledger's totals equal
// the traces' and what the server reported, to the token and the micro-unit (cache reads at
// the cached-input price); the batch mode writes the same ledger.
func TestLedgerOfManyKeysAgainstALoopbackModel(t *testing.T) {
	const keys = 1000
	pricesDoc := `{"models":{"gpt-test":{"input":0.15,"output":0.6,"cached_input":0.075}}}`
	price := ledger.Price{Input: 150_000, Output: 600_000, CachedInput: 75_000}
	var mu sync.Mutex
	var served ledger.Totals
	srv := llmtest.New(llmtest.OpenAI, func(_ int, body []byte) llmtest.Reply {
		// The tokens are the key's (its number is in the message), so every run reports the
		// same. A provider caches a long prompt's prefix in 128-token blocks from 1,024 tokens.
		var k int64
		if m := greetingNumber.FindSubmatch(body); m != nil {
			k, _ = strconv.ParseInt(string(m[1]), 10, 64)
		}
		in, cached, out := 1500+k%17, int64(0), 10+k%7
		if k%4 == 0 {
			cached = 1024 + 128*(k%3)
		}
		mu.Lock()
		served.Calls, served.InputTokens, served.CachedInputTokens, served.OutputTokens =
			served.Calls+1, served.InputTokens+in, served.CachedInputTokens+cached, served.OutputTokens+out
		served.Cost += ((in-cached)*price.Input + cached*price.CachedInput + out*price.Output + 500_000) / 1_000_000
		mu.Unlock()
		return llmtest.Reply{Text: `{"case":"support.reply","fields":{"support.reply.text":"hello"}}`, InputTokens: in, CachedInputTokens: cached, OutputTokens: out}
	})
	srv.Delay = 500 * time.Millisecond
	defer srv.Close()
	dir := t.TempDir()
	var lines bytes.Buffer
	for i := range keys {
		line, _ := protojson.Marshal(&pb.AgentEnvelope{EntityKey: fmt.Appendf(nil, "key-%03d", i), EventTimeMs: 1767225600000 + int64(i)*1000,
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: fmt.Appendf(nil, "GREETING: hello %d", i)}})
		json.Compact(&lines, line)
		lines.WriteByte('\n')
	}
	input := filepath.Join(dir, "in.jsonl")
	os.WriteFile(input, lines.Bytes(), 0o644)
	pricesPath, tab := writePrices(t, dir, pricesDoc)
	if tab.Models["gpt-test"] != price {
		t.Fatalf("prices %+v", tab.Models)
	}
	out := filepath.Join(dir, "out")
	start := time.Now()
	code, stdout, stderr := execCLI(t, []string{"BEAMAGENTS_LEDGER_KEY=sk-ledger"}, "run", "--agent", support.Name, "--allow_unsigned_intents",
		"--input", input, "--output_dir", out, "--model", "openai", "--model_name", "gpt-test", "--base_url", srv.BaseURL(),
		"--api_key", "env:BEAMAGENTS_LEDGER_KEY", "--prices", pricesPath)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	t.Logf("%d keys in %s", keys, time.Since(start).Round(time.Millisecond))
	got := checkLedger(t, out, tab)
	t.Logf("ledger totals %+v", got)
	if served.InputTokens == keys*1500 || served.CachedInputTokens == 0 {
		t.Fatal("the server did not find the keys' numbers in the requests")
	}
	if got != served {
		t.Errorf("ledger %+v; the server answered %+v", got, served)
	}
	if printedCounter(t, stdout, "ledger.cost_micros") != got.Cost || printedCounter(t, stdout, "ledger.calls") != keys ||
		printedCounter(t, stdout, "ledger.cached_input_tokens") != got.CachedInputTokens {
		t.Errorf("printed counters disagree with the ledger %+v:\n%s", got, stdout)
	}

	// The bounded fast path writes the same ledger, byte for byte.
	batch := filepath.Join(dir, "batch")
	if code, stdout, stderr := execCLI(t, []string{"BEAMAGENTS_LEDGER_KEY=sk-ledger"}, "run", "--agent", support.Name, "--allow_unsigned_intents", "--mode", "batch",
		"--input", input, "--output_dir", batch, "--model", "openai", "--model_name", "gpt-test", "--base_url", srv.BaseURL(),
		"--api_key", "env:BEAMAGENTS_LEDGER_KEY", "--prices", pricesPath); code != 0 {
		t.Fatalf("run --mode batch: exit %d\n%s\n%s", code, stdout, stderr)
	}
	a, _ := os.ReadFile(filepath.Join(out, pipeline.LedgerName+".binpb"))
	b, _ := os.ReadFile(filepath.Join(batch, pipeline.LedgerName+".binpb"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("the batch run's ledger (%d bytes) differs from the streaming run's (%d bytes)", len(b), len(a))
	}
}
