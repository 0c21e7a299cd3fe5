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
// The package is built only on the public, journaled operations of *agent.Context: a ring is
// read with Context.Ring, written with Context.Put, and summarized with Context.Propose, so a
// ring has the guarantees of those operations and no others. docs/memory.md says what each
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
