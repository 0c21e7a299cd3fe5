package transforms_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/transforms"
)

// latencyModel is an OpenAI-compatible server on loopback that answers the support agent
// like a real model: after a random delay, each entity (named in its event text) first with
// a lookup or a reply, then with a reply. It counts the requests in flight, overall and per
// entity. When gate is set, the first request waits (up to a bound) until a second one is
// in flight, so that a run that can have two calls in flight at once must.
type latencyModel struct {
	front *httptest.Server
	api   *llmtest.Server

	mu       sync.Mutex
	rng      *rand.Rand
	inflight int
	peak     int
	perKey   map[string]int
	keyPeak  int
	served   map[string]int
	gate     chan struct{} // closed once two requests were in flight
	gated    bool
	fixed    time.Duration // when set, every answer's delay
	first    time.Time     // the first request's arrival
	last     time.Time     // the last answer's end
}

var entityRe = regexp.MustCompile(`k-[0-9]+`)

// newLatencyModel starts the server: delays drawn up to maxDelay, or every one fixed when
// fixed is set.
func newLatencyModel(t testing.TB, seed uint64, maxDelay, fixed time.Duration, gate bool) *latencyModel {
	m := &latencyModel{rng: rand.New(rand.NewPCG(seed, 1)), perKey: map[string]int{}, served: map[string]int{}, fixed: fixed}
	if gate {
		m.gate = make(chan struct{})
	}
	m.api = llmtest.New(llmtest.OpenAI, func(_ int, body []byte) llmtest.Reply {
		key := string(entityRe.Find(body))
		m.mu.Lock()
		defer m.mu.Unlock()
		n := m.served[key]
		m.served[key]++
		delay := time.Duration(m.rng.Int64N(int64(maxDelay) + 1))
		if m.fixed > 0 {
			delay = m.fixed
		}
		text := reply("hello " + key)
		if n == 0 && looksUp(key) {
			text = lookup("A-" + key)
		}
		return llmtest.Reply{Text: text, Hang: delay, InputTokens: 10, OutputTokens: 5}
	})
	inner := m.api.Config.Handler
	m.front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := m.enter(r)
		lw := &leavingWriter{ResponseWriter: w, leave: func() { m.leave(key) }}
		defer lw.done()
		inner.ServeHTTP(lw, r)
	}))
	t.Cleanup(m.close)
	return m
}

func (m *latencyModel) close() { m.front.Close(); m.api.Close() }

func (m *latencyModel) peakInFlight() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peak
}

func (m *latencyModel) baseURL() string {
	return m.front.URL + strings.TrimPrefix(m.api.BaseURL(), m.api.URL)
}

// enter counts a request in; the first request of a gated server waits for a second.
func (m *latencyModel) enter(r *http.Request) string {
	var body bytes.Buffer
	body.ReadFrom(r.Body)
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body.Bytes()))
	key := string(entityRe.Find(body.Bytes()))
	m.mu.Lock()
	if m.first.IsZero() {
		m.first = time.Now()
	}
	m.inflight++
	m.peak = max(m.peak, m.inflight)
	m.perKey[key]++
	m.keyPeak = max(m.keyPeak, m.perKey[key])
	first := m.gate != nil && !m.gated
	m.gated = true
	if m.gate != nil && m.inflight >= 2 {
		select {
		case <-m.gate:
		default:
			close(m.gate)
		}
	}
	m.mu.Unlock()
	if first {
		select {
		case <-m.gate:
		case <-time.After(20 * time.Second): // the peak then says there was no concurrency
		}
	}
	return key
}

func (m *latencyModel) leave(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inflight--
	m.perKey[key]--
	m.last = time.Now()
}

// span is the time from the first request's arrival to the last answer's end: the part of a
// run the server was busy in, without the runner's start-up and shutdown.
func (m *latencyModel) span() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last.Sub(m.first)
}

// overlap is the share of m's span during which o was busy too (0 when either was idle).
func (m *latencyModel) overlap(o *latencyModel) float64 {
	m.mu.Lock()
	first, last := m.first, m.last
	m.mu.Unlock()
	o.mu.Lock()
	from, to := o.first, o.last
	o.mu.Unlock()
	if first.After(from) {
		from = first
	}
	if last.Before(to) {
		to = last
	}
	if last.Sub(first) <= 0 || !to.After(from) {
		return 0
	}
	return float64(to.Sub(from)) / float64(last.Sub(first))
}

// leavingWriter counts a request out when its last event is written: the client may send
// its key's next request as soon as it has read it, before the handler returns.
type leavingWriter struct {
	http.ResponseWriter
	leave func()
	left  bool
}

func (w *leavingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	if bytes.Contains(b, []byte("[DONE]")) {
		w.done()
	}
	return n, err
}

func (w *leavingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *leavingWriter) done() {
	if !w.left {
		w.left = true
		w.leave()
	}
}

// concurrencyInput is keys × one external event; keys ending in 1, 3 or 5 look an order up
// first, and their tool result (a later envelope) resumes them to a reply.
func concurrencyInput(keys int) [][]byte {
	var envs []*pb.AgentEnvelope
	for i := range keys {
		k := fmt.Sprintf("k-%03d", i)
		envs = append(envs, ext(k, t0+int64(i), k+": where is my order?"))
		if looksUp(k) {
			envs = append(envs, result(k, t0+60_000+int64(i), 0, 0, `{"status":"shipped"}`))
		}
	}
	return envelopes(envs...)
}

func looksUp(key string) bool {
	return strings.HasSuffix(key, "1") || strings.HasSuffix(key, "3") || strings.HasSuffix(key, "5")
}

// TestModelConcurrency: against a loopback model answering after random delays, RunAgent and
// RunAgentBatch with 16 calls allowed in flight (and RunAgent with 4, whose bundles pass over
// unfinished jobs sooner) write the same bytes as RunAgent with one,
// never have more than 16 calls (nor two of one key) in flight, and do have several.
func TestModelConcurrency(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Prism pipelines against a loopback model")
	}
	t.Setenv("BEAMAGENTS_TEST_MODEL_KEY", "sk-test")
	records := concurrencyInput(24)
	runOnce := func(name string, n int, batch bool, seed uint64) map[string][]byte {
		m := newLatencyModel(t, seed, 40*time.Millisecond, 0, n > 1)
		opts := transforms.Options{Agent: support.Name, Config: agentConfig(t, nil), AllowUnsignedIntents: true,
			Model:            hosted.Options{Provider: hosted.OpenAI, Name: "gpt-test", BaseURL: m.baseURL(), APIKey: "env:BEAMAGENTS_TEST_MODEL_KEY", MaxAttempts: 1},
			ModelConcurrency: n}
		dir := t.TempDir()
		p, s := beam.NewPipelineWithRoot()
		keyed, dead := transforms.DecodeEnvelopes(s, transforms.Binary, beam.CreateList(s, records))
		run := transforms.RunAgent
		if batch {
			run = transforms.RunAgentBatch
		}
		writeOutputs(s, dir, run(s, opts, keyed), dead)
		pr, err := ptest.RunWithMetrics(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		counters := map[string]int64{}
		for _, c := range pr.Metrics().AllMetrics().Counters() {
			if c.Key.Namespace == "beamagents" {
				counters[c.Key.Name] += c.Result()
			}
		}
		if counters["stale_steps"] != 0 {
			t.Errorf("%s: %d steps ran again (stale_steps)", name, counters["stale_steps"])
		}
		m.mu.Lock()
		peak, keyPeak := m.peak, m.keyPeak
		m.mu.Unlock()
		m.close()
		t.Logf("%s: %d requests, peak %d in flight, model_calls %d, timer_firings %d, passed_over %d", name, len(m.api.Requests()), peak, counters["model_calls"], counters["timer_firings"], counters["passed_over"])
		if peak > n || keyPeak != 1 {
			t.Errorf("%s: peak %d calls in flight (allowed %d), %d of one key", name, peak, n, keyPeak)
		}
		if n > 1 && peak < 2 {
			t.Errorf("%s: never two calls in flight", name)
		}
		files := map[string][]byte{}
		for _, o := range pipeline.Outputs() {
			b, err := os.ReadFile(filepath.Join(dir, o.Name+".binpb"))
			if err != nil {
				t.Fatal(err)
			}
			files[o.Name] = b
		}
		return files
	}
	want := runOnce("RunAgent/1", 1, false, 1)
	if len(want[pipeline.FinalsName]) == 0 || len(want[pipeline.IntentsName]) == 0 {
		t.Fatal("the reference run wrote no finals or no intents")
	}
	for _, v := range []struct {
		name  string
		n     int
		batch bool
	}{{"RunAgent/16", 16, false}, {"RunAgent/4", 4, false}, {"RunAgentBatch/16", 16, true}, {"RunAgentBatch/1", 1, true}} {
		got := runOnce(v.name, v.n, v.batch, uint64(v.n)+7)
		for _, o := range pipeline.Outputs() {
			if !bytes.Equal(got[o.Name], want[o.Name]) {
				t.Errorf("%s: %s differ from RunAgent with one call in flight (%d against %d bytes)", v.name, o.Name, len(got[o.Name]), len(want[o.Name]))
			}
		}
	}
}
