// Package rehearse runs a candidate agent over a recorded period of traffic with its effects
// quarantined, and reports per key where it first behaves differently from the agent that
// served the period (the baseline), and what that cost.
//
// A rehearsal is an offline replay (package replay) with three differences:
//
//   - A model request the baseline made is answered from the baseline's replay caches at no
//     cost. A request it did not make (the prompt, the model, the tools or the handler
//     changed) goes to the live model only within the budget (Options.LiveCalls and
//     Options.LiveTokens, both zero by default); otherwise it is left unanswered and the key
//     stops there (StopUnanswered).
//   - A tool call the baseline made with the same arguments is answered by the baseline's
//     result (the recorded result envelope), an approval by its decision, also when the
//     candidate makes it at another step: the key reruns with the answer addressed to the
//     candidate's intent. An inline tool run is answered by its recorded run. A call the
//     baseline did not make is never executed: the key stops there (StopNewEffect). Intents
//     are emitted unsigned and go nowhere but the report.
//   - Every restored snapshot is decoded and migrated by the candidate first (CheckState): a
//     state the candidate cannot read fails the whole rehearsal with ErrState.
//
// Invariants:
//   - A key's first divergence is the earliest, in its emission order, of: a model request the
//     baseline's caches do not answer (KindModelRequest), a new tool call (KindTool), an
//     output the baseline does not have (by kind: KindTool, KindApproval, KindFinal,
//     KindDeadLetter, KindState), else a baseline output the candidate did not produce
//     (Divergence.Missing; never reported for a stopped key, whose traffic was cut short).
//   - Outputs are compared as replay compares them (replay.Diff), intents and snapshots without
//     their signatures (the baseline signed its intents, a rehearsal never does) and without
//     traces (they describe how, not what).
//   - Nothing after a key's stop is compared, asked of a model or counted.
//   - The same traffic, baseline and candidate give the same report, byte for byte
//     (WriteJSONL), as long as the live model answers the same.
package rehearse
