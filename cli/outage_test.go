package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/limit"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/tracing"
)

func id16(b [16]byte) []byte { return b[:] }

// An outage, end to end through the command: a hosted model with nothing listening
// dead-letters every key once --model_breaker_hold has passed (most ending on an attempt
// the open breaker held and then refused unsent, which the trace says), each with its input;
// redrive of those dead letters against a live server then completes every key.
func TestOutageThenRedrive(t *testing.T) {
	const keys = 200
	o := outageRun(t, keys, 0)
	if o.dead != keys || o.refused < keys/2 {
		t.Fatalf("%d dead letters (%d refused by the breaker), want %d, most refused", o.dead, o.refused, keys)
	}
	if o.finals != keys || o.redrivenDead != 0 {
		t.Fatalf("after the redrive: %d finals, %d dead letters; want %d and 0", o.finals, o.redrivenDead, keys)
	}
}

// The outage figure: 1,000 keys against nothing listening (each call held for
// outageHold, then refused), then their redrive against a server answering after 500 ms.
//
//	go test ./cli -run '^$' -bench Outage -benchtime 1x
func BenchmarkOutage(b *testing.B) {
	for range b.N {
		o := outageRun(b, 1000, 500*time.Millisecond)
		if o.dead != 1000 || o.finals != 1000 {
			b.Fatalf("%d dead letters, %d finals after the redrive", o.dead, o.finals)
		}
		b.ReportMetric(o.outage.Seconds(), "outage_s")
		b.ReportMetric(float64(o.refused), "refused_by_breaker")
		b.ReportMetric(o.recovery.Seconds(), "redriven_run_s")
	}
}

// outageHold is the outage runs' --model_breaker_hold: the bound of the outage run.
const outageHold = time.Second

type outage struct {
	dead, refused        int // dead letters of the outage run, and those the breaker refused
	finals, redrivenDead int // finals and dead letters of the redriven run
	outage, recovery     time.Duration
}

// outageRun runs keys external events of the support agent against a port nothing listens
// on, redrives the dead letters, and runs them against a server answering after delay.
func outageRun(t testing.TB, keys int, delay time.Duration) outage {
	dir := t.TempDir()
	t.Setenv("BEAMAGENTS_OUTAGE_KEY", "sk-outage")
	var in bytes.Buffer
	for i := range keys {
		env := &pb.AgentEnvelope{EntityKey: fmt.Appendf(nil, "cust-%04d", i), EventTimeMs: 1767225600000 + int64(i),
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("where is my order?")}}
		line, err := protojson.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		json.Compact(&in, line)
		in.WriteByte('\n')
	}
	input := filepath.Join(dir, "in", "events.jsonl")
	os.MkdirAll(filepath.Dir(input), 0o755)
	if err := os.WriteFile(input, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(out, baseURL, input string, want int) (time.Duration, string) {
		t.Helper()
		defer setFlags(t, "model", "scripted", "api_key", "", "base_url", "", "model_name", "", "model_breaker_hold", "0s")
		start := time.Now()
		code, stdout, stderr := runCLI(t, "", "run", "--agent", support.Name, "--allow_unsigned_intents", "--input", input,
			"--output_dir", filepath.Join(dir, out), "--model", "openai", "--model_name", "gpt-test", "--base_url", baseURL,
			"--api_key", "env:BEAMAGENTS_OUTAGE_KEY", "--model_breaker_hold", outageHold.String())
		if code != want {
			t.Fatalf("run %s: exit %d, want %d\n%s\n%s", out, code, want, stdout, stderr)
		}
		return time.Since(start), stderr
	}
	var o outage
	down := "http://" + deadAddr(t) + "/v1"
	// Every key dead-letters: the run exits 1 and names the reason.
	var stderr string
	o.outage, stderr = run("outage", down, input, 1)
	if want := fmt.Sprintf("nothing succeeded: %d dead letters and no final reply, intent or snapshot; the commonest reason is model_error (%d of %d)", keys, keys, keys); !strings.Contains(stderr, want) {
		t.Fatalf("the outage run's last line is not %q…:\n%s", want, stderr)
	}
	if e, ok := limit.Lookup(limit.Key{Kind: "openai", BaseURL: down, Model: "gpt-test"}); !ok || e.Config().BreakerHoldMs != outageHold.Milliseconds() {
		t.Fatalf("the outage run's endpoint (%v) does not hold calls for --model_breaker_hold", ok)
	}
	dead, err := readDeadLetters(filepath.Join(dir, "outage", pipeline.DeadLettersName+".binpb"))
	if err != nil {
		t.Fatal(err)
	}
	deadKeys := map[string]bool{}
	for _, d := range dead {
		if d.GetReason() != string(records.ReasonModelError) || d.GetEnvelope() == nil {
			t.Fatalf("dead letter %v", d)
		}
		deadKeys[string(d.GetEntityKey())] = true
	}
	o.dead = len(dead)
	// The only trace events of a run whose every attempt failed: one ERROR for each model
	// call the open breaker refused, in the trace of the activation it ended.
	traces, err := records.ReadMessages([]string{filepath.Join(dir, "outage", pipeline.TracesName+".binpb")}, func() *pb.TraceEvent { return &pb.TraceEvent{} })
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range traces {
		a := ev.GetAttributes()
		if ev.GetEventType() != pb.TraceEvent_ERROR || a[tracing.AttrErrorType] != string(model.CodeCircuitOpen) || a[tracing.AttrRequestModel] != "gpt-test" ||
			!deadKeys[string(ev.GetEntityKey())] || !bytes.Equal(ev.GetTraceId(), id16(tracing.TraceID(ev.GetEntityKey(), 0))) {
			t.Fatalf("trace event of the outage run: %v", ev)
		}
		o.refused++
	}
	again := filepath.Join(dir, "again", "redriven.jsonl")
	os.MkdirAll(filepath.Dir(again), 0o755)
	if code, stdout, stderr := runCLI(t, "", "redrive", "--input", filepath.Join(dir, "outage", pipeline.DeadLettersName+".binpb"),
		"--reason", "model_error", "--output", again); code != 0 {
		t.Fatalf("redrive: exit %d\n%s\n%s", code, stdout, stderr)
	}
	srv := llmtest.New(llmtest.OpenAI, func(int, []byte) llmtest.Reply {
		return llmtest.Reply{Text: `{"case":"support.reply","fields":{"support.reply.text":"it ships today"}}`, Hang: delay}
	})
	t.Cleanup(srv.Close)
	o.recovery, _ = run("recovered", srv.BaseURL(), again, 0)
	o.finals = countRecords(t, filepath.Join(dir, "recovered", pipeline.FinalsName+".jsonl"))
	o.redrivenDead = countRecords(t, filepath.Join(dir, "recovered", pipeline.DeadLettersName+".jsonl"))
	return o
}

// deadAddr is a loopback address nothing listens on: a port just bound and released.
func deadAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func countRecords(t testing.TB, path string) int {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}
