package memory

import (
	"fmt"
	"strings"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/internal/bind"
	"github.com/beamagents/beamagents/records"
)

// DefaultCellFill is the share of the memory cell's bounds, in percent, a Cell's compaction
// leaves it at when Cell.Fill is 0.
const DefaultCellFill = 75

// Cell is a declaration of what happens to the key's whole memory cell (every entry, bounded
// by Limits.Memory) when a write would take it over its bounds. With DropOldest (the zero
// Compactor) the cell evicts its least recently used entries, as Context.Put does. With
// Summarize, the least recently used entries are folded into the summary held by the memory
// entry Summary, with one model call, before the write: nothing leaves the cell without being
// summarized. Write the memory through Put for the compaction to happen: a plain Context.Put
// (or a Ring's Append) that overflows the cell still evicts. A Cell is a value, safe to share.
type Cell struct {
	// Summary is the memory entry that holds the summary and the count of the entries
	// compacted out of the cell (the encoding of a compacted ring without entries). Required
	// with Summarize; it is never folded itself.
	Summary string
	// Compact is what happens to the least recently used entries; the zero value evicts them.
	Compact Compactor
	// Fill is the share of each of the cell's bounds (bytes of values and entries), in
	// percent, the cell fills at most after a compaction, the written value and a summary of
	// the largest size counted, so that the writes after it fit without another model call.
	// 0 selects DefaultCellFill; at most 100.
	Fill int
}

// Validate reports a declaration error (ErrDeclaration); Put checks it first.
func (c Cell) Validate() error {
	if err := c.Compact.validate(); err != nil {
		return fmt.Errorf("%w: memory cell: %v", ErrDeclaration, err)
	}
	switch {
	case c.Fill < 0 || c.Fill > 100:
		return fmt.Errorf("%w: memory cell: fill %d%% is outside 0..100", ErrDeclaration, c.Fill)
	case c.Compact.s != nil && c.Summary == "":
		return fmt.Errorf("%w: memory cell: Summarize needs a Summary entry", ErrDeclaration)
	}
	return nil
}

// Put writes value under key, compacting the cell first when it is full. With DropOldest it
// is Context.Put (one operation). With Summarize it takes two operations when the write
// fits (a memory read of what must leave the cell, the write) and four when it does not
// (that read, the summary's read, its model call, and one memory write that deletes the
// folded entries and writes the summary and value), each journaled, so a resumed run repeats none of them and
// a replay over the recorded caches calls no model. A failure fails the activation: the
// handler must return the error.
func (c Cell) Put(hc *agent.Context, key string, value []byte) error {
	if err := c.Validate(); err != nil {
		return &agent.Error{Reason: records.ReasonInternalPanic, Detail: "memory cell", Err: err}
	}
	if c.Compact.s == nil {
		return hc.Put(key, value)
	}
	if key == c.Summary {
		return &agent.Error{Reason: records.ReasonInternalPanic, Detail: "memory cell",
			Err: fmt.Errorf("%w: key %q is the cell's summary entry", ErrDeclaration, key)}
	}
	run := bind.RunOf(hc)
	victims, err := run.Evictions(key, len(value), c.Summary, size(c.Compact.summaryBound(), nil), c.fill())
	if err != nil || len(victims) == 0 {
		if err != nil {
			return err
		}
		return hc.Put(key, value)
	}
	sum, err := c.Read(hc)
	if err != nil {
		return err
	}
	if sum.Summary, err = c.Compact.s.ask(hc, c.Compact.s.cellSystem, c.Compact.s.cellPrompt(sum, victims)); err != nil {
		return err
	}
	sum.Compacted += int64(len(victims))
	drop := make([]string, len(victims))
	for i, v := range victims {
		drop[i] = v.Key
	}
	return run.Replace(drop, bind.MemoryItem{Key: c.Summary, Value: encode(sum)}, bind.MemoryItem{Key: key, Value: value})
}

// Read returns the cell's summary and how many entries were compacted out of it (Entries is
// empty), through one journaled memory read of the Summary entry; the zero Contents before
// the first compaction or without a Summary entry.
func (c Cell) Read(hc *agent.Context) (Contents, error) {
	if err := c.Validate(); err != nil {
		return Contents{}, &agent.Error{Reason: records.ReasonInternalPanic, Detail: "memory cell", Err: err}
	}
	if c.Summary == "" {
		return Contents{}, nil
	}
	slots, err := hc.Ring(c.Summary)
	if err != nil {
		return Contents{}, err
	}
	s, err := split(slots)
	if err == nil && len(s.Entries) > 0 {
		err = fmt.Errorf("%w: it holds %d entries besides its summary", ErrCorrupt, len(s.Entries))
	}
	if err != nil {
		return Contents{}, &agent.Error{Reason: records.ReasonStateCorrupt, Detail: fmt.Sprintf("memory entry %q", c.Summary), Err: err}
	}
	return s, nil
}

func (c Cell) fill() int {
	if c.Fill == 0 {
		return DefaultCellFill
	}
	return c.Fill
}

// cellPrompt shows the summary so far and the entries to fold, each under its key.
func (s *summarizer) cellPrompt(sum Contents, victims []bind.MemoryItem) string {
	var b strings.Builder
	s.writeSoFar(&b, fmt.Sprintf("of %d entries", sum.Compacted), sum.Summary)
	b.WriteString("\nEntries to fold in, least recently used first:\n")
	for _, v := range victims {
		fmt.Fprintf(&b, "[%s] %s\n", v.Key, s.render(v.Value))
	}
	return b.String()
}
