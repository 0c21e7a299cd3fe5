// Package memory gives a handler agent memory that outlives its bound: a Ring is a bounded
// ring of working memory whose oldest entries, when it is full, are compacted instead of
// lost. Its Compactor drops them (DropOldest, what Context.Append does) or folds them into a
// summary with one model call (Summarize): the model is shown the summary so far and the
// oldest entries, and its answer, admitted strictly by a schema of one bounded string,
// replaces them. A support agent that talks to a customer for a year keeps the last Keep
// messages verbatim and the gist of every earlier one.
//
//	var conversation = memory.Ring{Name: "conversation", Keep: 32, MaxBytes: 16 << 10,
//		Compact: memory.Summarize(memory.SummaryOptions{MaxBytes: 1024})}
//
//	func handle(hc *agent.Context, tr agent.Trigger) error {
//		if err := conversation.Append(hc, tr.Event); err != nil {
//			return err
//		}
//		summary, recent, err := conversation.Entries(hc)
//		…
//	}
//
// A Cell declares the same compaction for the key's whole memory cell (every entry, bounded
// by Limits.Memory): a handler that writes through Cell.Put has the least recently used
// entries folded into a summary entry when a write would overflow the cell, instead of
// evicted unread; with DropOldest, Cell.Put is Context.Put and the cell evicts as it always
// did.
//
//	var mem = memory.Cell{Summary: "memory.summary", Compact: memory.Summarize(memory.SummaryOptions{})}
//
//	func handle(hc *agent.Context, tr agent.Trigger) error {
//		if err := mem.Put(hc, "ticket-"+ticketID(tr.Event), tr.Event); err != nil {
//			return err
//		}
//		…
//	}
//
// The package is built only on the public, journaled operations of *agent.Context: a ring is
// read with Context.Ring, written with Context.Put, and summarized with Context.Propose, so a
// ring has the guarantees of those operations and no others. A cell adds two operations the
// context does not export, journaled as a memory read and a memory write: which entries must
// leave the cell (values included), and one write that deletes the folded entries and writes
// the summary and the value. docs/memory.md says what each
// state cell of a key holds and weighs, what a compaction costs, and what a key weighs after a
// year of traffic.
//
// # Invariants
//
//   - Bounded. After every Append a ring holds at most Keep entries and, with MaxBytes, a
//     memory value of at most MaxBytes bytes, whatever the model answers: a summary is
//     admitted only within SummaryOptions.MaxBytes (at most MaxSummaryBytes), and a
//     compaction folds enough entries for the rest to fit beside a summary of that size.
//     Room for that summary is checked by Ring.Validate.
//   - Strict. A summary is the admitted value of Context.Propose under the summary schema
//     (SummaryTypeID); an answer the schema refuses fails the activation as
//     proposal_refused, and a failed activation commits nothing: the ring is as it was.
//   - Journaled and replayable. Append takes at most three operations (read, model call,
//     write), each journaled: a resumed run repeats none of them. The model call goes through
//     the replay cache under the activation's budgets (Limits.MaxModelCalls, MaxTokens,
//     MaxRequestBytes), so replaying recorded inputs over the recorded caches calls no
//     model and writes the same bytes.
//   - Deterministic. The prompt, the fold and the encoding depend only on the ring's contents
//     and the declaration: the same state and input give the same bytes. No clock is read.
//   - Nothing unread. A Cell with Summarize folds every entry that must leave into its
//     summary before it leaves, and leaves the cell within Cell.Fill percent of its bounds
//     (a summary of the largest size counted), so most writes need no compaction. Its
//     summary entry is never folded; a write Cell.Put cannot fit beside a summary of the
//     largest size fails as budget_exceeded.
//   - One value. A ring is one memory entry (Name): the memory's LRU order moves and evicts
//     it whole, never its summary apart from its entries. Its value is the ring encoding of
//     Context.Ring (each slot a uvarint length and its bytes) whose first slot is a
//     versioned header (version 1, the compacted count, the summary); a value that is not
//     one fails the activation as state_corrupt (ErrCorrupt). Do not use Context.Append on
//     a compacted ring's name.
//
// Errors wrap ErrDeclaration (internal_panic), ErrCorrupt (state_corrupt) and ErrTooLarge
// (budget_exceeded) in the *agent.Error that fails the activation; errors.Is finds both.
package memory
