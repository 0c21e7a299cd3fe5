// Package ledger is the cost ledger: one typed record (beam_agents.v1.LedgerEntry) per model
// call of a committed activation, priced by a price table chosen when the pipeline is
// launched, and the price table itself.
//
// Invariants:
//   - A record is a pure function of one LLM_CALL trace event and the price table (Entry):
//     its token counts are the trace's, so the ledger's totals equal the traces' by
//     construction, and a retried or replayed activation, whose trace events are
//     byte-identical, gives byte-identical records. (trace_id, span_id) identifies a record.
//   - Costs are integer micro-units of the table's currency, rounded once per record; a call
//     the replay cache answered costs 0, and so does a call of a model the table does not
//     price (the record says it is unpriced).
//   - A price file is decoded strictly (DecodePrices): unknown fields, duplicate model ids,
//     amounts that are not exact decimals of at most six fractional digits, and trailing data
//     are refused with a *PriceError carrying a stable code.
//
// Calls of an activation that failed (a dead letter) are not in the ledger: the activation
// committed nothing, its trace events included. docs/costs.md is the contract.
package ledger
