package pubsub_test

import (
	"flag"
	"fmt"
	"regexp"
	"testing"
	"time"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/model/limit"
)

// The provider-trouble harness on the Pub/Sub path: keys with one model call each published
// as a backlog, run with the default endpoint limits against a loopback OpenAI-compatible
// server in trouble first (a burst of 503s, its first connections reset, down and up by
// turns, nothing listening), until every key has its final reply or its dead letter on the
// errors topic.
//
//	go test ./pubsub -run TestProviderTroubleFigures -trouble.bench [-trouble.keys 512 -trouble.delay 500ms]
var (
	troubleBench = flag.Bool("trouble.bench", false, "run the provider-trouble harness (TestProviderTroubleFigures)")
	troubleKeys  = flag.Int("trouble.keys", 512, "keys per provider-trouble run")
	troubleDelay = flag.Duration("trouble.delay", 500*time.Millisecond, "the loopback model's answer delay")
)

var troubleKey = regexp.MustCompile(`trouble-[0-9]+`)

func troubleAnswer(delay time.Duration) func(int, []byte) llmtest.Reply {
	return func(_ int, body []byte) llmtest.Reply {
		text := fmt.Sprintf(`{"case":"support.reply","fields":{"support.reply.text":"hello %s"}}`, troubleKey.Find(body))
		return llmtest.Reply{Text: text, Hang: delay, InputTokens: 10, OutputTokens: 5}
	}
}

// runTrouble publishes keys events and runs the pipeline until each has a final reply or a
// dead letter; it returns their counts and the wall time from the start of the run.
func runTrouble(t *testing.T, keys int, baseURL string, lc limit.Config) (finals, dead int, elapsed time.Duration) {
	t.Helper()
	t.Setenv("BEAMAGENTS_TROUBLE_KEY", "sk-test")
	e := newEnv(t)
	now := time.Now().UnixMilli()
	for i := range keys {
		e.publish(marshal(t, &pb.AgentEnvelope{EntityKey: fmt.Appendf(nil, "trouble-%04d", i), EventTimeMs: now + int64(i),
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("where is my order?")}}), nil)
	}
	o := e.options(t, writeKeyring(t))
	o.Model = hosted.Options{Provider: hosted.OpenAI, Name: "gpt-test", BaseURL: baseURL, APIKey: "env:BEAMAGENTS_TROUBLE_KEY", Limits: lc}
	start := time.Now()
	stream(t, o, 20*time.Minute, func() bool {
		finals, dead = len(messages(e.finals)), len(messages(e.errorsTopic))
		if finals+dead < keys {
			return false
		}
		elapsed = time.Since(start)
		return true
	})
	return finals, dead, elapsed
}

// A burst of 503s costs no key its reply on the Pub/Sub path (the default limits, but for a
// cool-down that lets the first probe go after 200 ms).
func TestProviderTroubleLosesNothing(t *testing.T) {
	url, closer := llmtest.Troubles()[0].Serve(llmtest.OpenAI, troubleAnswer(50*time.Millisecond))
	defer closer()
	const keys = 96
	if finals, dead, _ := runTrouble(t, keys, url, limit.Config{BreakerCooldownMs: 3200}); finals != keys || dead != 0 {
		t.Fatalf("%d finals, %d dead letters; want %d and none", finals, dead, keys)
	}
}

func TestProviderTroubleFigures(t *testing.T) {
	if !*troubleBench {
		t.Skip("figures harness: run with -trouble.bench")
	}
	for _, sc := range llmtest.Troubles() {
		url, closer := sc.Serve(llmtest.OpenAI, troubleAnswer(*troubleDelay))
		finals, dead, elapsed := runTrouble(t, *troubleKeys, url, limit.Config{})
		closer()
		ideal := time.Duration(float64(*troubleKeys) / limit.DefaultConcurrency * float64(*troubleDelay))
		t.Logf("provider trouble %s/pubsub: %d finals, %d dead letters, run %.1f s, ideal %.1f s, x_ideal %.3f",
			sc.Name, finals, dead, elapsed.Seconds(), ideal.Seconds(), ideal.Seconds()/elapsed.Seconds())
	}
}
