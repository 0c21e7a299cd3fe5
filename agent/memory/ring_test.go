package memory_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/agenttest"
	"github.com/beamagents/beamagents/agent/memory"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
)

// summaryAnswer is a model's answer admitted by the summary schema: the summary text.
func summaryAnswer(text string) *model.Response {
	q, _ := json.Marshal(text)
	return agenttest.Text(`{"fields":{"` + memory.SummaryField + `":` + string(q) + `}}`)
}

var lastEntry = regexp.MustCompile(`\[(\d+)\] `)

// folded is the number of the last entry a summary request folds (its prompt's last "[N] ").
func folded(req *model.Request) int {
	m := lastEntry.FindAllStringSubmatch(agenttest.Last(req), -1)
	if len(m) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(m[len(m)-1][1])
	return n
}

// summarizer is a scripted model that counts its calls and answers "entries 1-N".
type summarizer struct {
	calls   int
	prompts []string
	answer  func(req *model.Request) *model.Response // nil: "entries 1-N"
}

func (s *summarizer) model() agenttest.ModelFunc {
	return func(_ context.Context, req *model.Request) (*model.Response, error) {
		s.calls++
		s.prompts = append(s.prompts, agenttest.Last(req))
		if s.answer != nil {
			return s.answer(req), nil
		}
		return summaryAnswer(fmt.Sprintf("entries 1-%d", folded(req))), nil
	}
}

// ringAgent appends each event to ring; errs receives what Append returned.
func ringAgent(t *testing.T, ring memory.Ring, limits agent.Limits, errs *[]error) *agent.Agent {
	t.Helper()
	a, err := agent.New(agent.Definition{Name: "memtest", ModelID: "memtest-model", Limits: limits,
		Handler: func(hc *agent.Context, tr agent.Trigger) error {
			err := ring.Append(hc, tr.Event)
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

// contents reads the committed ring of key "k".
func contents(t *testing.T, h *agenttest.Harness, name string) (memory.Contents, int) {
	t.Helper()
	v := h.Memory("k")[name]
	c, err := memory.Decode(v)
	if err != nil {
		t.Fatalf("ring %s: %v", name, err)
	}
	return c, len(v)
}

func texts(bs [][]byte) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = string(b)
	}
	return strings.Join(parts, ",")
}

func TestAppendCompacts(t *testing.T) {
	summarize := memory.Summarize(memory.SummaryOptions{})
	for _, tc := range []struct {
		name      string
		ring      memory.Ring
		events    []string
		summary   string
		entries   string
		compacted int64
		calls     int
		answer    func(*model.Request) *model.Response // nil: "entries 1-N"
	}{
		{"under the bound", memory.Ring{Name: "r", Keep: 4}, []string{"e1", "e2", "e3"}, "", "e1,e2,e3", 0, 0, nil},
		{"drop oldest by count", memory.Ring{Name: "r", Keep: 3}, []string{"e1", "e2", "e3", "e4", "e5"}, "", "e3,e4,e5", 2, 0, nil},
		{"drop oldest by bytes", memory.Ring{Name: "r", Keep: 100, MaxBytes: 36, Compact: memory.DropOldest()},
			[]string{"aaa1", "aaa2", "aaa3", "aaa4", "aaa5"}, "", "aaa3,aaa4,aaa5", 2, 0, nil},
		{"summarize half", memory.Ring{Name: "r", Keep: 4, Compact: summarize},
			[]string{"e1", "e2", "e3", "e4", "e5"}, "entries 1-2", "e3,e4,e5", 2, 1, nil},
		{"summarize twice", memory.Ring{Name: "r", Keep: 4, Compact: summarize},
			[]string{"e1", "e2", "e3", "e4", "e5", "e6", "e7"}, "entries 1-4", "e5,e6,e7", 4, 2, nil},
		{"summarize a fold of three", memory.Ring{Name: "r", Keep: 4, Compact: memory.Summarize(memory.SummaryOptions{Fold: 3})},
			[]string{"e1", "e2", "e3", "e4", "e5"}, "entries 1-3", "e4,e5", 3, 1, nil},
		{"an empty summary", memory.Ring{Name: "r", Keep: 2, Compact: memory.Summarize(memory.SummaryOptions{Fold: 1})},
			[]string{"e1", "e2", "e3"}, "", "e2,e3", 1, 1, func(*model.Request) *model.Response { return summaryAnswer("") }},
		{"summarize by bytes", memory.Ring{Name: "r", Keep: 100, MaxBytes: 21 + 16 + 4*5, Compact: memory.Summarize(memory.SummaryOptions{MaxBytes: 16, Fold: 1})},
			[]string{"aaa1", "aaa2", "aaa3", "aaa4", "aaa5", "aaa6", "aaa7", "aaa8"}, "entries 1-4", "aaa5,aaa6,aaa7,aaa8", 4, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &summarizer{answer: tc.answer}
			h := agenttest.New(t, ringAgent(t, tc.ring, agent.Limits{}, nil), agenttest.Options{Model: s.model()})
			for _, e := range tc.events {
				h.Send("k", []byte(e))
				c, n := contents(t, h, tc.ring.Name)
				if len(c.Entries) > tc.ring.Keep || (tc.ring.MaxBytes > 0 && n > tc.ring.MaxBytes) {
					t.Fatalf("after %s: %d entries, %d bytes; bound %d entries, %d bytes", e, len(c.Entries), n, tc.ring.Keep, tc.ring.MaxBytes)
				}
			}
			if dl := h.Outputs("k").DeadLetters; len(dl) != 0 {
				t.Fatalf("dead letters %v", dl)
			}
			c, _ := contents(t, h, tc.ring.Name)
			if string(c.Summary) != tc.summary || texts(c.Entries) != tc.entries || c.Compacted != tc.compacted || s.calls != tc.calls {
				t.Fatalf("summary %q, entries %s, compacted %d, model calls %d; want %q, %s, %d, %d",
					c.Summary, texts(c.Entries), c.Compacted, s.calls, tc.summary, tc.entries, tc.compacted, tc.calls)
			}
		})
	}
}

// The model is shown the summary so far and exactly the entries it folds, numbered in the
// ring's whole history.
func TestSummaryPrompt(t *testing.T) {
	s := &summarizer{}
	ring := memory.Ring{Name: "r", Keep: 4, Compact: memory.Summarize(memory.SummaryOptions{})}
	h := agenttest.New(t, ringAgent(t, ring, agent.Limits{}, nil), agenttest.Options{Model: s.model()})
	for i := 1; i <= 7; i++ {
		h.Send("k", []byte("e"+strconv.Itoa(i)))
	}
	want := []string{
		"Summary so far, of entries 1 to 0:\n(none)\n\nEntries to fold in, oldest first:\n[1] e1\n[2] e2\n",
		"Summary so far, of entries 1 to 2:\nentries 1-2\n\nEntries to fold in, oldest first:\n[3] e3\n[4] e4\n",
	}
	if strings.Join(s.prompts, "|") != strings.Join(want, "|") {
		t.Fatalf("prompts %q, want %q", s.prompts, want)
	}
}

// A failed compaction fails the activation: one dead letter of its reason, nothing committed.
func TestCompactionFailureCommitsNothing(t *testing.T) {
	ring := memory.Ring{Name: "r", Keep: 2, Compact: memory.Summarize(memory.SummaryOptions{MaxBytes: 16})}
	for _, tc := range []struct {
		name   string
		answer func(req *model.Request) *model.Response
		limits agent.Limits
		reason records.Reason
	}{
		{"summary over its bound", func(*model.Request) *model.Response { return summaryAnswer(strings.Repeat("x", 17)) }, agent.Limits{}, records.ReasonProposalRefused},
		{"not the schema", func(*model.Request) *model.Response { return agenttest.Text(`{"fields":{"other":"x"}}`) }, agent.Limits{}, records.ReasonProposalRefused},
		{"not JSON", func(*model.Request) *model.Response { return agenttest.Text("the customer asked about a refund") }, agent.Limits{}, records.ReasonProposalRefused},
		{"over the token budget", func(*model.Request) *model.Response {
			r := summaryAnswer("ok")
			r.Usage = model.Usage{InputTokens: 90, OutputTokens: 10}
			return r
		}, agent.Limits{MaxTokens: 50}, records.ReasonBudgetExceeded},
		{"over the request bound", nil, agent.Limits{MaxRequestBytes: 64}, records.ReasonRequestTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &summarizer{answer: tc.answer}
			h := agenttest.New(t, ringAgent(t, ring, tc.limits, nil), agenttest.Options{Model: s.model()})
			h.Send("k", []byte("e1"))
			h.Send("k", []byte("e2"))
			before := h.State("k")
			h.Send("k", []byte("e3"))
			dl := h.Outputs("k").DeadLetters
			if len(dl) != 1 || dl[0].GetReason() != string(tc.reason) {
				t.Fatalf("dead letters %v, want one %s", dl, tc.reason)
			}
			if !maps.EqualFunc(before, h.State("k"), bytes.Equal) {
				t.Fatal("the failed activation changed the key's state")
			}
		})
	}
}

func TestAppendErrors(t *testing.T) {
	plain := func(hc *agent.Context, tr agent.Trigger) error { return hc.Append("r", tr.Event, 3) }
	for _, tc := range []struct {
		name   string
		ring   memory.Ring
		before agent.Handler // run once first
		value  string
		reason records.Reason
		is     error
	}{
		{"no name", memory.Ring{Keep: 2}, nil, "v", records.ReasonInternalPanic, memory.ErrDeclaration},
		{"keep 0", memory.Ring{Name: "r"}, nil, "v", records.ReasonInternalPanic, memory.ErrDeclaration},
		{"summary bound too large", memory.Ring{Name: "r", Keep: 2, Compact: memory.Summarize(memory.SummaryOptions{MaxBytes: memory.MaxSummaryBytes + 1})}, nil, "v", records.ReasonInternalPanic, memory.ErrDeclaration},
		{"byte bound below the summary", memory.Ring{Name: "r", Keep: 2, MaxBytes: 100, Compact: memory.Summarize(memory.SummaryOptions{})}, nil, "v", records.ReasonInternalPanic, memory.ErrDeclaration},
		{"value over the byte bound", memory.Ring{Name: "r", Keep: 2, MaxBytes: 40}, nil, strings.Repeat("v", 40), records.ReasonBudgetExceeded, memory.ErrTooLarge},
		{"a plain ring", memory.Ring{Name: "r", Keep: 2}, plain, "v", records.ReasonStateCorrupt, memory.ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errs []error
			first := tc.before
			a, err := agent.New(agent.Definition{Name: "memtest", ModelID: "m", Handler: func(hc *agent.Context, tr agent.Trigger) error {
				if first != nil {
					f := first
					first = nil
					return f(hc, tr)
				}
				err := tc.ring.Append(hc, tr.Event)
				errs = append(errs, err)
				return err
			}})
			if err != nil {
				t.Fatal(err)
			}
			h := agenttest.New(t, a, agenttest.Options{})
			if tc.before != nil {
				h.Send("k", []byte("plain"))
			}
			h.Send("k", []byte(tc.value))
			dl := h.Outputs("k").DeadLetters
			if len(dl) != 1 || dl[0].GetReason() != string(tc.reason) {
				t.Fatalf("dead letters %v, want one %s", dl, tc.reason)
			}
			if len(errs) != 1 || !errors.Is(errs[0], tc.is) || !errors.Is(errs[0], &agent.Error{Reason: tc.reason}) {
				t.Fatalf("Append returned %v, want %v as %s", errs, tc.is, tc.reason)
			}
			if tc.ring.Validate() == nil != (tc.is != memory.ErrDeclaration) {
				t.Fatalf("Validate = %v", tc.ring.Validate())
			}
		})
	}
}

// A compaction before a tool call is journaled: the resumed run neither asks the model again
// nor appends twice.
func TestCompactionIsJournaled(t *testing.T) {
	ring := memory.Ring{Name: "r", Keep: 2, Compact: memory.Summarize(memory.SummaryOptions{})}
	a, err := agent.New(agent.Definition{Name: "memtest", ModelID: "m", Handler: func(hc *agent.Context, tr agent.Trigger) error {
		if err := ring.Append(hc, tr.Event); err != nil {
			return err
		}
		if string(tr.Event) != "e3" {
			return nil
		}
		if _, err := hc.Tool("notes.write", `{}`); err != nil {
			return err
		}
		summary, entries, err := ring.Entries(hc)
		if err != nil {
			return err
		}
		return hc.Reply(string(summary) + " / " + texts(entries))
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := &summarizer{}
	h := agenttest.New(t, a, agenttest.Options{Model: s.model()})
	for _, e := range []string{"e1", "e2", "e3"} {
		h.Send("k", []byte(e))
	}
	h.Answer(h.Intent("k", "notes.write"), []byte("ok"))
	if got := h.Replies("k"); len(got) != 1 || got[0] != "entries 1-1 / e2,e3" || s.calls != 1 {
		t.Fatalf("replies %q, model calls %d", got, s.calls)
	}
}
