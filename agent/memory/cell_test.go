package memory_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/agenttest"
	"github.com/beamagents/beamagents/agent/memory"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/replay"
	"github.com/beamagents/beamagents/statecodec"
)

// cellAgent writes each event under key(event) through cell; errs receives what Put returned.
func cellAgent(t *testing.T, cell memory.Cell, limits agent.Limits, errs *[]error) *agent.Agent {
	t.Helper()
	a, err := agent.New(agent.Definition{Name: "celltest", ModelID: "celltest-model", Limits: limits,
		Handler: func(hc *agent.Context, tr agent.Trigger) error {
			key, value, _ := strings.Cut(string(tr.Event), "=")
			err := cell.Put(hc, key, []byte(value))
			if errs != nil {
				*errs = append(*errs, err)
			}
			return err
		}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// smallCell is a memory cell of 200 bytes and 8 entries whose summaries are at most 32 bytes.
var (
	smallLimits = agent.Limits{Memory: statecodec.MemoryOptions{MaxValueBytes: 200, MaxEntries: 8}}
	smallCell   = memory.Cell{Summary: "summary", Compact: memory.Summarize(memory.SummaryOptions{MaxBytes: 32})}
)

var foldedKey = regexp.MustCompile(`(?m)^\[([^\]]*)\] `)

// keysAnswer summarizes by listing the folded keys, the last 32 bytes of them.
func keysAnswer(req *model.Request) *model.Response {
	var keys []string
	for _, m := range foldedKey.FindAllStringSubmatch(agenttest.Last(req), -1) {
		keys = append(keys, m[1])
	}
	s := strings.Join(keys, ",")
	return summaryAnswer(s[max(len(s)-32, 0):])
}

// A cell with Summarize folds its least recently used entries into the summary when a write
// would overflow it, down to its fill, and evicts nothing.
func TestCellCompacts(t *testing.T) {
	s := &summarizer{answer: keysAnswer}
	h := agenttest.New(t, cellAgent(t, smallCell, smallLimits, nil), agenttest.Options{Model: s.model()})
	// Each value is 30 bytes; the summary reserves 53 (its bound and 21 bytes of header).
	for i := range 6 {
		h.Send("k", fmt.Appendf(nil, "k%d=%s", i, strings.Repeat(string(rune('a'+i)), 30)))
	}
	if len(h.Outputs("k").DeadLetters) != 0 {
		t.Fatalf("dead letters %v", h.Outputs("k").DeadLetters)
	}
	mem := h.Memory("k")
	sum, err := memory.Decode(mem["summary"])
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for k := range mem {
		if k != "summary" {
			live = append(live, k)
		}
	}
	slices.Sort(live)
	// k0..k3 fill 120 bytes (+53 reserved: 173 ≤ 200); k4 would make 203: fold to ≤ 150,
	// k0 and k1 (the written value and the reserve counted); k5 then fits (173).
	if s.calls != 1 || string(sum.Summary) != "k0,k1" || sum.Compacted != 2 || !slices.Equal(live, []string{"k2", "k3", "k4", "k5"}) {
		t.Fatalf("%d calls; summary %q of %d; live %q", s.calls, sum.Summary, sum.Compacted, live)
	}
	want := "Summary so far, of 0 entries:\n(none)\n\nEntries to fold in, least recently used first:\n[k0] " + strings.Repeat("a", 30) + "\n[k1] " + strings.Repeat("b", 30) + "\n"
	if s.prompts[0] != want {
		t.Fatalf("prompt %q, want %q", s.prompts[0], want)
	}
}

// DropOldest is Context.Put: the same inputs give the same bytes, the cell's LRU eviction.
func TestCellDropOldestIsPut(t *testing.T) {
	plain, err := agent.New(agent.Definition{Name: "celltest", ModelID: "celltest-model", Limits: smallLimits,
		Handler: func(hc *agent.Context, tr agent.Trigger) error {
			key, value, _ := strings.Cut(string(tr.Event), "=")
			return hc.Put(key, []byte(value))
		}})
	if err != nil {
		t.Fatal(err)
	}
	hp := agenttest.New(t, plain, agenttest.Options{})
	hc := agenttest.New(t, cellAgent(t, memory.Cell{Compact: memory.DropOldest()}, smallLimits, nil), agenttest.Options{})
	for i := range 40 {
		ev := fmt.Appendf(nil, "k%d=%s", i%11, strings.Repeat("v", 7*(i%9)))
		hp.Send("k", ev)
		hc.Send("k", ev)
		if !maps.EqualFunc(hp.State("k"), hc.State("k"), bytes.Equal) {
			t.Fatalf("input %d: the cell's state differs from Context.Put's", i)
		}
	}
}

// A compaction before a tool call is journaled: the resumed run asks no model and reads the
// evictions and the summary from the journal.
func TestCellCompactionIsJournaled(t *testing.T) {
	a, err := agent.New(agent.Definition{Name: "celltest", ModelID: "m", Limits: smallLimits, Handler: func(hc *agent.Context, tr agent.Trigger) error {
		key, value, _ := strings.Cut(string(tr.Event), "=")
		if err := smallCell.Put(hc, key, []byte(value)); err != nil {
			return err
		}
		if key != "k4" {
			return nil
		}
		if _, err := hc.Tool("notes.write", `{}`); err != nil {
			return err
		}
		sum, err := smallCell.Read(hc)
		if err != nil {
			return err
		}
		return hc.Reply(fmt.Sprintf("%s of %d", sum.Summary, sum.Compacted))
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := &summarizer{answer: keysAnswer}
	h := agenttest.New(t, a, agenttest.Options{Model: s.model()})
	for i := range 5 {
		h.Send("k", fmt.Appendf(nil, "k%d=%s", i, strings.Repeat("x", 30)))
	}
	suspended := h.State("k")
	res := h.Answer(h.Intent("k", "notes.write"), []byte("ok"))
	if got := h.Replies("k"); len(got) != 1 || got[0] != "k0,k1 of 2" || s.calls != 1 || res.ModelCalls != 0 {
		t.Fatalf("replies %q, model calls %d (resumed run: %d)", got, s.calls, res.ModelCalls)
	}
	// The compaction was committed with the suspension; the resumed run wrote no memory.
	if _, ok := res.Writes[statecodec.CellMemory]; ok {
		t.Fatal("the resumed run rewrote the memory cell")
	}
	if !bytes.Equal(suspended[statecodec.CellMemory], h.State("k")[statecodec.CellMemory]) {
		t.Fatal("the memory cell changed after the suspension")
	}
}

// A failed compaction fails the activation: one dead letter of its reason, nothing committed.
func TestCellCompactionFailureCommitsNothing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(req *model.Request) *model.Response
		reason records.Reason
	}{
		{"summary over its bound", func(*model.Request) *model.Response { return summaryAnswer(strings.Repeat("x", 33)) }, records.ReasonProposalRefused},
		{"not JSON", func(*model.Request) *model.Response { return agenttest.Text("k0 and k1") }, records.ReasonProposalRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &summarizer{answer: tc.answer}
			h := agenttest.New(t, cellAgent(t, smallCell, smallLimits, nil), agenttest.Options{Model: s.model()})
			for i := range 4 {
				h.Send("k", fmt.Appendf(nil, "k%d=%s", i, strings.Repeat("x", 30)))
			}
			before := h.State("k")
			h.Send("k", []byte("k4="+strings.Repeat("x", 30)))
			dl := h.Outputs("k").DeadLetters
			if len(dl) != 1 || dl[0].GetReason() != string(tc.reason) || s.calls != 1 {
				t.Fatalf("dead letters %v (%d calls), want one %s", dl, s.calls, tc.reason)
			}
			if !maps.EqualFunc(before, h.State("k"), bytes.Equal) {
				t.Fatal("the failed activation changed the key's state")
			}
		})
	}
}

func TestCellErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cell   memory.Cell
		event  string
		reason records.Reason
		is     error
	}{
		{"Summarize without a summary entry", memory.Cell{Compact: memory.Summarize(memory.SummaryOptions{})}, "k=v", records.ReasonInternalPanic, memory.ErrDeclaration},
		{"fill over 100", memory.Cell{Fill: 101}, "k=v", records.ReasonInternalPanic, memory.ErrDeclaration},
		{"a bad summary bound", memory.Cell{Summary: "s", Compact: memory.Summarize(memory.SummaryOptions{MaxBytes: -1})}, "k=v", records.ReasonInternalPanic, memory.ErrDeclaration},
		{"a write of the summary entry", smallCell, "summary=v", records.ReasonInternalPanic, memory.ErrDeclaration},
		{"a value that cannot fit beside the summary", smallCell, "k=" + strings.Repeat("v", 150), records.ReasonBudgetExceeded, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errs []error
			h := agenttest.New(t, cellAgent(t, tc.cell, smallLimits, &errs), agenttest.Options{})
			h.Send("k", []byte(tc.event))
			dl := h.Outputs("k").DeadLetters
			if len(dl) != 1 || dl[0].GetReason() != string(tc.reason) {
				t.Fatalf("dead letters %v, want one %s", dl, tc.reason)
			}
			if len(errs) != 1 || !errors.Is(errs[0], &agent.Error{Reason: tc.reason}) || (tc.is != nil && !errors.Is(errs[0], tc.is)) {
				t.Fatalf("Put returned %v, want %v as %s", errs, tc.is, tc.reason)
			}
		})
	}
}

// cellYearCell is the support agent's whole working memory: every message under its own
// key, the least recently used folded into a summary of at most 1 KiB when the cell is full.
var cellYearCell = memory.Cell{Summary: "summary", Compact: memory.Summarize(memory.SummaryOptions{MaxBytes: 1024})}

var (
	cellSummarySoFar = regexp.MustCompile(`(?s)^Summary so far, of \d+ entries:\n(.*)\n\nEntries to fold in`)
	cellFolded       = regexp.MustCompile(`\[message-(\d+)\] message \d+, day (\d+): about my (\w+)`)
)

// cellYearSummary is a scripted model's summary of a cell compaction, as yearSummary's of a
// ring's: a sentence per fold, the oldest dropped to stay within 1,000 bytes.
func cellYearSummary(req *model.Request) *model.Response {
	return foldSummary(req, cellSummarySoFar, cellFolded)
}

// One customer writes 5,000 messages over a year, each kept in the memory cell under its own
// key: the cell fills after a few hundred and is compacted from then on. No message leaves the
// cell without being folded into the summary, the cell stays within its bounds, and a replay
// over the recorded replay caches calls no model and reproduces every output and every cell
// byte for byte.
func TestCellYearOfTraffic(t *testing.T) {
	const key = "customer-1"
	const n = 5000
	events := yearOfEvents(n)
	a, err := agent.New(agent.Definition{Name: "support", ModelID: "support-model", Handler: func(hc *agent.Context, tr agent.Trigger) error {
		if err := cellYearCell.Put(hc, fmt.Sprintf("message-%04d", tr.Seq+1), tr.Event); err != nil {
			return err
		}
		sum, err := cellYearCell.Read(hc)
		if err != nil {
			return err
		}
		return hc.Reply(fmt.Sprintf("%d messages in a summary of %d bytes", sum.Compacted, len(sum.Summary)))
	}})
	if err != nil {
		t.Fatal(err)
	}
	var calls int
	var inTokens, maxInTokens int64
	provider := agenttest.ModelFunc(func(_ context.Context, req *model.Request) (*model.Response, error) {
		calls++
		resp := cellYearSummary(req)
		inTokens += resp.Usage.InputTokens
		maxInTokens = max(maxInTokens, resp.Usage.InputTokens)
		return resp, nil
	})
	rec := agenttest.New(t, a, agenttest.Options{Model: provider})
	digests := make([][32]byte, n)
	largest := map[statecodec.Cell]int{}
	var snaps []*pb.StateSnapshot
	var maxValues int64
	for i, ev := range events {
		rec.Advance(time.Duration(ev.atMs-rec.Now()) * time.Millisecond)
		before := calls
		res := rec.Send(key, ev.body)
		if len(res.DeadLetters) != 0 {
			t.Fatalf("message %d: dead letter %v", i+1, res.DeadLetters[0])
		}
		state := rec.State(key)
		digests[i] = stepDigest(t, res, state)
		for c, b := range state {
			largest[c] = max(largest[c], len(b))
		}
		mem := rec.Memory(key)
		var values int64
		kept := 0
		for k, v := range mem {
			values += int64(len(v))
			if strings.HasPrefix(k, "message-") {
				kept++
			}
		}
		maxValues = max(maxValues, values)
		sum, err := memory.Decode(mem[cellYearCell.Summary])
		switch {
		case err != nil:
			t.Fatalf("message %d: %v", i+1, err)
		case values > statecodec.DefaultMemoryMaxValueBytes:
			t.Fatalf("message %d: memory values of %d bytes", i+1, values)
		case sum.Compacted+int64(kept) != int64(i+1):
			t.Fatalf("message %d: %d compacted and %d kept: an entry left without a summary", i+1, sum.Compacted, kept)
		}
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
	final := rec.State(key)
	t.Logf("%d messages over 365 days: %d compactions (mean %d, max %d input tokens estimated as bytes/4); memory values at most %d bytes; %d entries after the year",
		n, calls, inTokens/int64(calls), maxInTokens, maxValues, len(rec.Memory(key)))
	for _, c := range []statecodec.Cell{statecodec.CellMemory, statecodec.CellLLMCache} {
		t.Logf("%s: largest %d bytes, after the year %d bytes", c, largest[c], len(final[c]))
	}

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

// Random writes of keys that come back, of random sizes, to a small cell: after every write
// the cell is within its bounds, and a key missing from it was folded with its latest value.
func TestCellNothingLeavesUnread(t *testing.T) {
	limits := agent.Limits{Memory: statecodec.MemoryOptions{MaxValueBytes: 300, MaxEntries: 6}}
	rng := rand.New(rand.NewPCG(7, 42))
	folded := map[string]string{} // key → the value a prompt last showed
	s := &summarizer{answer: func(req *model.Request) *model.Response {
		for _, line := range strings.Split(agenttest.Last(req), "\n") {
			if m := foldedLine.FindStringSubmatch(line); m != nil {
				folded[m[1]] = m[2]
			}
		}
		return keysAnswer(req)
	}}
	h := agenttest.New(t, cellAgent(t, smallCell, limits, nil), agenttest.Options{Model: s.model()})
	latest := map[string]string{}
	for i := range 400 {
		key := fmt.Sprintf("k%d", rng.IntN(20))
		value := strings.Repeat(string(rune('a'+i%26)), 1+rng.IntN(60)) // never empty: a missing key must have been folded
		if res := h.Send("k", []byte(key+"="+value)); len(res.DeadLetters) != 0 {
			t.Fatalf("write %d: dead letter %v", i, res.DeadLetters[0])
		}
		latest[key] = value
		mem := h.Memory("k")
		var total int
		for _, v := range mem {
			total += len(v)
		}
		if total > 300 || len(mem) > 6 {
			t.Fatalf("write %d: the cell holds %d entries of %d bytes", i, len(mem), total)
		}
		for k, want := range latest {
			if got, ok := mem[k]; ok && string(got) != want {
				t.Fatalf("write %d: %s holds %q, want %q", i, k, got, want)
			} else if !ok && folded[k] != want {
				t.Fatalf("write %d: %s left the cell unread (last folded %q, latest %q)", i, k, folded[k], want)
			}
		}
	}
	if s.calls == 0 {
		t.Fatal("no compaction")
	}
	t.Logf("400 writes: %d compactions", s.calls)
}

var foldedLine = regexp.MustCompile(`^\[([^\]]*)\] (.*)$`)
