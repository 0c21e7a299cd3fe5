package memory

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/effector/tool"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
)

// Summary bounds, in bytes of UTF-8.
const (
	// DefaultSummaryBytes bounds a summary when SummaryOptions.MaxBytes is 0.
	DefaultSummaryBytes = 1024
	// MaxSummaryBytes is the largest bound: an interaction schema's string bound.
	MaxSummaryBytes = 4096
)

// SummaryTypeID is the stable id of the summary schema's record; its one field, the summary's
// text, is SummaryField. A model answers {"fields":{"beamagents.memory.summary.text":"…"}}.
const (
	SummaryTypeID = "beamagents.memory.summary"
	SummaryField  = SummaryTypeID + ".text"
)

// DefaultInstructions is the system message of a summary when SummaryOptions.Instructions is
// empty; %d is the summary's bound in bytes.
const DefaultInstructions = "You keep the long-term memory of one conversation. Fold the summary so far and the entries " +
	"below (oldest first) into one new summary of at most %d bytes of UTF-8. Keep what later turns need: " +
	"facts, names, numbers, decisions, promises and open questions; drop greetings and repetition. " +
	"Answer with the new summary only."

// DefaultCellInstructions is the system message of a Cell's summary when
// SummaryOptions.Instructions is empty; %d is the summary's bound in bytes.
const DefaultCellInstructions = "You keep the long-term memory of one agent, whose working memory is full. Fold the " +
	"summary so far and the entries below (least recently used first, each under its key) into one new summary of at " +
	"most %d bytes of UTF-8. Keep what later turns need: facts, names, numbers, decisions, promises and open " +
	"questions, with the keys they were under; drop repetition. Answer with the new summary only."

// Compactor is what a Ring does with its oldest entries when it is full. The zero value (and
// DropOldest) drops them; Summarize folds them into the ring's summary with a model call.
type Compactor struct {
	s   *summarizer
	err error // a declaration error of Summarize, reported by Ring.Validate
}

// DropOldest returns the compactor that drops the oldest entries, as Context.Append does: no
// model call, and the ring's summary, if an earlier compactor wrote one, is kept as it is.
func DropOldest() Compactor { return Compactor{} }

// SummaryOptions configure Summarize. The zero value selects every default.
type SummaryOptions struct {
	// MaxBytes bounds the summary (UTF-8 bytes), by the schema that admits it: an answer
	// over it is refused, never cut. 0 selects DefaultSummaryBytes; at most MaxSummaryBytes.
	MaxBytes int
	// Fold is how many of the oldest entries one compaction of a Ring folds at least; 0
	// selects half the ring (Keep/2, at least 1). More fold when the byte bound needs it; the
	// newest entry is never folded. A Cell folds by its Fill instead.
	Fold int
	// Instructions is the system message; empty selects DefaultInstructions for a Ring and
	// DefaultCellInstructions for a Cell.
	Instructions string
	// Render shows an entry to the model; nil shows UTF-8 text as it is and other bytes as
	// "base64:" and their standard base64.
	Render func(entry []byte) string
}

// Summarize returns the compactor that folds the oldest entries into the ring's summary: one
// model call (Context.Propose, through the replay cache and under the activation's budgets)
// is shown the summary so far and the entries to fold, and its answer, admitted strictly by
// a schema of one string of at most MaxBytes bytes, becomes the new summary. A refused answer
// fails the activation as proposal_refused and nothing is written. A bad option is reported
// by Ring.Validate (ErrDeclaration).
func Summarize(opts SummaryOptions) Compactor {
	s, err := newSummarizer(opts)
	return Compactor{s: s, err: err}
}

func (c Compactor) validate() error { return c.err }

// summaryBound is the largest summary the compactor may write: what a ring must leave room for.
func (c Compactor) summaryBound() int {
	if c.s == nil {
		return 0
	}
	return c.s.bound
}

// fold returns how many of the oldest entries to compact, given that n must go: a
// summarizer folds at least its batch, and enough for the rest to fit beside the largest
// summary it may write.
func (c Compactor) fold(r Ring, entries [][]byte, n int) int {
	if c.s == nil {
		return n
	}
	worst := r.overflow(c.s.bound, entries)
	if worst >= len(entries) {
		return worst
	}
	batch := c.s.batch
	if batch == 0 {
		batch = max(r.Keep/2, 1)
	}
	return min(max(n, worst, batch), len(entries)-1)
}

// compact returns the ring's summary once entries (its oldest) have left it.
func (c Compactor) compact(hc *agent.Context, ring Contents, entries [][]byte) ([]byte, error) {
	if c.s == nil {
		return ring.Summary, nil
	}
	return c.s.summarize(hc, ring, entries)
}

type summarizer struct {
	bound, batch       int
	system, cellSystem string
	render             func([]byte) string
	schema             *interaction.Schema
}

func newSummarizer(opts SummaryOptions) (*summarizer, error) {
	s := &summarizer{bound: opts.MaxBytes, batch: opts.Fold, system: opts.Instructions, render: opts.Render}
	switch {
	case s.bound == 0:
		s.bound = DefaultSummaryBytes
	case s.bound < 0 || s.bound > MaxSummaryBytes:
		return nil, fmt.Errorf("summary bound %d bytes is outside 1..%d", s.bound, MaxSummaryBytes)
	}
	if s.batch < 0 {
		return nil, fmt.Errorf("fold %d is negative", s.batch)
	}
	s.cellSystem = s.system
	if s.system == "" {
		s.system = fmt.Sprintf(DefaultInstructions, s.bound)
		s.cellSystem = fmt.Sprintf(DefaultCellInstructions, s.bound)
	}
	if s.render == nil {
		s.render = renderEntry
	}
	var err error
	s.schema, err = summarySchema(s.bound)
	return s, err
}

// schemas holds one summary schema per bound: the agent keeps an admission per schema value,
// so a Summarize built in every run must not build a new one each time.
var schemas sync.Map // int → *interaction.Schema

func summarySchema(bound int) (*interaction.Schema, error) {
	if s, ok := schemas.Load(bound); ok {
		return s.(*interaction.Schema), nil
	}
	doc := `{"type":"object","properties":{"text":{"type":"string","maxLength":` + strconv.Itoa(bound) + `}}}`
	s, err := tool.FromJSONSchema(SummaryTypeID, []byte(doc))
	if err != nil {
		return nil, err
	}
	got, _ := schemas.LoadOrStore(bound, s)
	return got.(*interaction.Schema), nil
}

// summarize asks for the summary of ring's summary and entries, the oldest ones leaving it.
func (s *summarizer) summarize(hc *agent.Context, ring Contents, entries [][]byte) ([]byte, error) {
	return s.ask(hc, s.system, s.prompt(ring, entries))
}

// ask makes the summary's model call and returns the admitted summary.
func (s *summarizer) ask(hc *agent.Context, system, prompt string) ([]byte, error) {
	v, err := hc.Propose(agent.Ask{Schema: s.schema, Messages: []model.Message{
		{Role: model.RoleSystem, Content: system},
		{Role: model.RoleUser, Content: prompt},
	}})
	if err != nil {
		return nil, err
	}
	text, ok := v.Lookup(SummaryField)
	if !ok || text.Representation() != interaction.String {
		// The schema has exactly this field: an admitted value without it is a bug.
		return nil, &agent.Error{Reason: records.ReasonInternalPanic, Detail: "the admitted summary has no " + SummaryField}
	}
	return []byte(text.Text()), nil
}

// writeSoFar writes a compaction prompt's opening: the summary so far (what it covers in
// of), or "(none)" before the first compaction.
func (s *summarizer) writeSoFar(b *strings.Builder, of string, summary []byte) {
	fmt.Fprintf(b, "Summary so far, %s:\n", of)
	if len(summary) == 0 {
		b.WriteString("(none)\n")
		return
	}
	b.WriteString(s.render(summary))
	b.WriteString("\n")
}

// prompt shows the summary so far and the entries to fold, each numbered by its position
// in the ring's whole history.
func (s *summarizer) prompt(ring Contents, entries [][]byte) string {
	var b strings.Builder
	s.writeSoFar(&b, fmt.Sprintf("of entries 1 to %d", ring.Compacted), ring.Summary)
	b.WriteString("\nEntries to fold in, oldest first:\n")
	for i, e := range entries {
		fmt.Fprintf(&b, "[%d] %s\n", ring.Compacted+int64(i)+1, s.render(e))
	}
	return b.String()
}

func renderEntry(e []byte) string {
	if utf8.Valid(e) {
		return string(e)
	}
	return "base64:" + base64.StdEncoding.EncodeToString(e)
}
