package memory_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/agenttest"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/agent/memory"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/replay"
	"github.com/beamagents/beamagents/statecodec"
)

// yearRing is the support agent's conversation: the last 32 messages verbatim in at most 16
// KiB, everything earlier in a summary of at most 1 KiB.
var yearRing = memory.Ring{Name: "conversation", Keep: 32, MaxBytes: 16 << 10,
	Compact: memory.Summarize(memory.SummaryOptions{MaxBytes: 1024})}

// yearAgent appends every message to the conversation and replies with what it remembers.
func yearAgent(t *testing.T) *agent.Agent {
	t.Helper()
	a, err := agent.New(agent.Definition{Name: "support", ModelID: "support-model", Handler: func(hc *agent.Context, tr agent.Trigger) error {
		if err := yearRing.Append(hc, tr.Event); err != nil {
			return err
		}
		c, err := yearRing.Read(hc)
		if err != nil {
			return err
		}
		return hc.Reply(fmt.Sprintf("remembering %d messages verbatim and %d in a summary of %d bytes", len(c.Entries), c.Compacted, len(c.Summary)))
	}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

type yearEvent struct {
	atMs int64
	body []byte
}

var topics = []string{"refund", "delivery", "invoice", "password", "upgrade", "warranty", "address", "coupon"}

// yearOfEvents spreads n messages of one customer over 365 days, in event-time order.
func yearOfEvents(n int) []yearEvent {
	rng := rand.New(rand.NewPCG(2026, 365))
	year := (365 * 24 * time.Hour).Milliseconds()
	out := make([]yearEvent, n)
	for i := range out {
		at := agenttest.DefaultStartMs + int64(i)*year/int64(n) + rng.Int64N(year/int64(n))
		topic := topics[rng.IntN(len(topics))]
		filler := strings.Repeat("and some more detail ", 2+rng.IntN(14))
		out[i] = yearEvent{at, fmt.Appendf(nil, "message %d, day %d: about my %s, %s", i+1, (at-agenttest.DefaultStartMs)/86_400_000, topic, filler)}
	}
	return out
}

var (
	summarySoFar = regexp.MustCompile(`(?s)^Summary so far, of entries 1 to \d+:\n(.*)\n\nEntries to fold in`)
	foldedTopic  = regexp.MustCompile(`\[(\d+)\] message \d+, day (\d+): about my (\w+)`)
)

// yearSummary is a scripted model's summary: the summary so far with a sentence per fold
// (the entries' range, days and topics) appended, its oldest sentences dropped to stay
// within 1,000 bytes. It reports usage as bytes/4 (model/limit.Estimate's ratio).
func yearSummary(req *model.Request) *model.Response {
	return foldSummary(req, summarySoFar, foldedTopic)
}

// foldSummary is yearSummary over a prompt whose summary so far soFar finds and whose
// folded entries folded finds (number, day, topic).
func foldSummary(req *model.Request, soFar, folded *regexp.Regexp) *model.Response {
	prompt := agenttest.Last(req)
	prev := ""
	if m := soFar.FindStringSubmatch(prompt); m != nil && m[1] != "(none)" {
		prev = m[1]
	}
	folds := folded.FindAllStringSubmatch(prompt, -1)
	var seen []string
	for _, f := range folds {
		if !slices.Contains(seen, f[3]) {
			seen = append(seen, f[3])
		}
	}
	s := strings.TrimSpace(fmt.Sprintf("%s Messages %s-%s (days %s-%s): %s.", prev, folds[0][1], folds[len(folds)-1][1],
		folds[0][2], folds[len(folds)-1][2], strings.Join(seen, ", ")))
	for len(s) > 1000 {
		_, s, _ = strings.Cut(s, ". ")
	}
	resp := summaryAnswer(s)
	resp.Usage = model.Usage{InputTokens: int64(model.RequestBytes(req)) / 4, OutputTokens: int64(len(resp.Text)) / 4}
	return resp
}

// stepDigest is SHA-256 over an input's outputs and the key's cells after it.
func stepDigest(t *testing.T, res *host.Result, state host.MapStore) [32]byte {
	t.Helper()
	h := sha256.New()
	var msgs []proto.Message
	for _, m := range res.Intents {
		msgs = append(msgs, m)
	}
	for _, m := range res.Traces {
		msgs = append(msgs, m)
	}
	for _, m := range res.Finals {
		msgs = append(msgs, m)
	}
	for _, m := range res.DeadLetters {
		msgs = append(msgs, m)
	}
	for _, m := range msgs {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%d:", len(b))
		h.Write(b)
	}
	for _, c := range host.Cells() {
		fmt.Fprintf(h, "%s=%d:", c, len(state[c]))
		h.Write(state[c])
	}
	return [32]byte(h.Sum(nil))
}

// One customer writes 5,000 messages over a year: every message an activation that appends to
// the conversation, summarizing when it is full. The key's memory stays within its bounds at
// every step, every summary is admitted, and a replay of the same inputs over the recorded
// replay caches calls no model and reproduces every output and every cell byte for byte.
func TestYearOfTraffic(t *testing.T) {
	const key = "customer-1"
	const n = 5000
	events := yearOfEvents(n)
	a := yearAgent(t)

	var calls int
	var inTokens, maxInTokens, maxSummary int64
	provider := agenttest.ModelFunc(func(_ context.Context, req *model.Request) (*model.Response, error) {
		calls++
		resp := yearSummary(req)
		inTokens += resp.Usage.InputTokens
		maxInTokens = max(maxInTokens, resp.Usage.InputTokens)
		return resp, nil
	})
	rec := agenttest.New(t, a, agenttest.Options{Model: provider})
	digests := make([][32]byte, n)
	largest := map[statecodec.Cell]int{}
	var snaps []*pb.StateSnapshot
	for i, ev := range events {
		rec.Advance(time.Duration(ev.atMs-rec.Now()) * time.Millisecond)
		before := calls
		res := rec.Send(key, ev.body)
		if len(res.DeadLetters) != 0 {
			t.Fatalf("message %d: dead letter %v", i+1, res.DeadLetters[0])
		}
		state := rec.State(key)
		digests[i] = stepDigest(t, res, state)
		for _, c := range host.Cells() {
			largest[c] = max(largest[c], len(state[c]))
		}
		mem := rec.Memory(key)
		var values int64
		for _, v := range mem {
			values += int64(len(v))
		}
		c, err := memory.Decode(mem[yearRing.Name])
		switch {
		case err != nil:
			t.Fatalf("message %d: %v", i+1, err)
		case len(mem[yearRing.Name]) > yearRing.MaxBytes || len(c.Entries) > yearRing.Keep:
			t.Fatalf("message %d: the ring holds %d entries in %d bytes", i+1, len(c.Entries), len(mem[yearRing.Name]))
		case values > statecodec.DefaultMemoryMaxValueBytes:
			t.Fatalf("message %d: memory values of %d bytes", i+1, values)
		case c.Compacted+int64(len(c.Entries)) != int64(i+1):
			t.Fatalf("message %d: %d compacted and %d kept", i+1, c.Compacted, len(c.Entries))
		}
		maxSummary = max(maxSummary, int64(len(c.Summary)))
		if calls > before {
			cache, err := statecodec.DecodeCache(state[statecodec.CellLLMCache], a.Limits().Cache)
			if err != nil {
				t.Fatal(err)
			}
			snaps = append(snaps, &pb.StateSnapshot{EntityKey: []byte(key), LlmCache: cache.Proto()})
		}
	}
	if calls == 0 {
		t.Fatal("no summary was asked")
	}
	t.Logf("%d messages over 365 days: %d summaries (mean %d, max %d input tokens estimated as bytes/4), largest summary %d bytes",
		n, calls, inTokens/int64(calls), maxInTokens, maxSummary)
	var eventBytes int
	for _, ev := range events {
		eventBytes += len(ev.body)
	}
	final := rec.State(key)
	for _, c := range host.Cells() {
		t.Logf("%s: largest %d bytes, after the year %d bytes", c, largest[c], len(final[c]))
	}
	t.Logf("messages of %d bytes on average; %d bytes of traffic in all", eventBytes/n, eventBytes)

	// The replay: the same inputs, a model that answers only from the recorded caches.
	recorded := calls
	caches := replay.NewModel(snaps, rec.Outputs(key).Traces)
	rep := agenttest.New(t, a, agenttest.Options{Model: caches})
	for i, ev := range events {
		rep.Advance(time.Duration(ev.atMs-rep.Now()) * time.Millisecond)
		res := rep.Send(key, ev.body)
		if got := stepDigest(t, res, rep.State(key)); got != digests[i] {
			t.Fatalf("replay of message %d differs (dead letters %v)", i+1, res.DeadLetters)
		}
	}
	if misses := caches.Misses(); len(misses) != 0 || calls != recorded || caches.Answered() != recorded {
		t.Fatalf("replay: %d misses, %d provider calls, %d answers from the caches (recorded %d)", len(misses), calls-recorded, caches.Answered(), recorded)
	}
}
