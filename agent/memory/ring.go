package memory

import (
	"fmt"
	"slices"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/records"
)

// Ring is a bounded ring of a key's working memory whose oldest entries are compacted, not
// lost: when an Append would take it over Keep entries or MaxBytes bytes, its Compactor folds
// the oldest entries into the ring's summary (Summarize) or drops them (DropOldest, the zero
// Compactor). The ring is one memory entry, Name, so it lives, moves in the memory's LRU
// order and is evicted as one value. A Ring is a declaration: a value, safe to share.
type Ring struct {
	// Name is the memory entry that holds the ring.
	Name string
	// Keep bounds the entries kept verbatim (≥ 1).
	Keep int
	// MaxBytes bounds the ring's memory value (summary, entries and their framing); 0 bounds
	// it only by Keep. It must leave room for the largest summary the Compactor admits.
	MaxBytes int
	// Compact is what happens to the oldest entries; the zero value drops them.
	Compact Compactor
}

// Contents is what a ring holds.
type Contents struct {
	// Summary is the summary of the entries compacted so far; nil before the first summary.
	Summary []byte
	// Compacted counts the entries compacted out of the ring since it was created: folded
	// into the summary or dropped.
	Compacted int64
	// Entries are the entries kept verbatim, oldest first.
	Entries [][]byte
}

// Validate reports a declaration error (ErrDeclaration); Append checks it first. An agent
// may call it when it is built, to refuse a bad declaration before any input.
func (r Ring) Validate() error {
	switch {
	case r.Name == "":
		return fmt.Errorf("%w: the ring has no name", ErrDeclaration)
	case r.Keep < 1:
		return fmt.Errorf("%w: ring %q keeps %d entries; at least 1", ErrDeclaration, r.Name, r.Keep)
	case r.MaxBytes < 0:
		return fmt.Errorf("%w: ring %q has a negative byte bound", ErrDeclaration, r.Name)
	}
	if err := r.Compact.validate(); err != nil {
		return fmt.Errorf("%w: ring %q: %v", ErrDeclaration, r.Name, err)
	}
	// The ring must hold the largest summary and one empty entry.
	if min := size(r.Compact.summaryBound(), [][]byte{nil}); r.MaxBytes > 0 && r.MaxBytes < min {
		return fmt.Errorf("%w: ring %q: %d bytes cannot hold a summary of %d bytes and an entry; at least %d", ErrDeclaration, r.Name, r.MaxBytes, r.Compact.summaryBound(), min)
	}
	return nil
}

// Read returns what the ring holds, through one journaled memory read (Context.Ring): a
// resumed run reads what the first run read.
func (r Ring) Read(hc *agent.Context) (Contents, error) {
	if err := r.Validate(); err != nil {
		return Contents{}, &agent.Error{Reason: records.ReasonInternalPanic, Detail: "memory ring", Err: err}
	}
	slots, err := hc.Ring(r.Name)
	if err != nil {
		return Contents{}, err
	}
	c, err := split(slots)
	if err != nil {
		return Contents{}, &agent.Error{Reason: records.ReasonStateCorrupt, Detail: fmt.Sprintf("memory entry %q", r.Name), Err: err}
	}
	return c, nil
}

// Entries returns the ring's summary and its entries kept verbatim, oldest first (Read).
func (r Ring) Entries(hc *agent.Context) (summary []byte, entries [][]byte, err error) {
	c, err := r.Read(hc)
	return c.Summary, c.Entries, err
}

// Append appends value to the ring. When the ring would exceed Keep entries or MaxBytes
// bytes, the Compactor first compacts its oldest entries; value itself is always kept. It
// takes at most three operations of the activation (the read, the summary's model call, the
// write), each journaled, so a resumed run repeats none of them. A failure fails the
// activation: the handler must return the error.
func (r Ring) Append(hc *agent.Context, value []byte) error {
	c, err := r.Read(hc)
	if err != nil {
		return err
	}
	entries := append(slices.Clip(c.Entries), value)
	if n := r.overflow(len(c.Summary), entries); n > 0 {
		if n = r.Compact.fold(r, entries, n); n >= len(entries) {
			return &agent.Error{Reason: records.ReasonBudgetExceeded, Detail: fmt.Sprintf("memory ring %q", r.Name),
				Err: fmt.Errorf("%w: %d bytes, bound %d", ErrTooLarge, len(value), r.MaxBytes)}
		}
		if c.Summary, err = r.Compact.compact(hc, c, entries[:n]); err != nil {
			return err
		}
		c.Compacted += int64(n)
		entries = entries[n:]
	}
	c.Entries = entries
	return hc.Put(r.Name, encode(c))
}

// overflow returns how many of the oldest entries must leave the ring for the rest to fit
// with a summary of summaryLen bytes: 0 when everything fits, len(entries) when not even the
// newest one does.
func (r Ring) overflow(summaryLen int, entries [][]byte) int {
	n := max(len(entries)-r.Keep, 0)
	if r.MaxBytes == 0 {
		return n
	}
	for total := size(summaryLen, entries[n:]); n < len(entries) && total > r.MaxBytes; n++ {
		total -= frameSize(entries[n])
	}
	return n
}
