// Package devloop is the machinery of `beamagents dev` (and `demo --live`, which is dev with
// the bundled agent): one process running an agent's whole loop locally, and the client side
// that `send` and `approve --state_dir` use to reach it.
//
// Serve runs, until its context ends (or, with Config.Until, until every listed entity has a
// final reply or a dead letter): the Pub/Sub client library's in-process emulator, the agent
// streaming on Prism with its keyed state kept in the state directory, the effector running
// the agent's registered tools, and the console (pages, approvals, JSON API) on a loopback
// address. The state directory holds keys/ (runstate), effector.db, console.db,
// keyring.json, memory.db, follow.json and, while dev runs, server.json.
//
// Invariants:
//   - The clock is read only at ingestion: an event or signal taken by the JSON API, --follow
//     or Config.Events gets its arrival time as event time, strictly increasing per process;
//     activations read no clock.
//   - A stop loses nothing that was accepted: ingestion closes first, the effector finishes
//     what it holds, every published event is taken by the pipeline, then the drain records
//     every key (runstate). What the last run's keys waited on (their pending intents) is
//     sent to the effector again at the next start, but those already answered by a restored
//     envelope; the effector's store makes a tool run once.
//   - server.json (the console's URL and the JSON API's bearer token, 0600) exists only
//     while dev serves; ReadServer and Call are how another process finds and talks to it.
//     dev serves on loopback only.
//   - --follow's read position moves past a line only once its event is accepted (or the
//     line is passed over as not an event); a file that became shorter is read again from
//     its start.
//   - A failure while stopping is reported through Config.Errorf as it happens and the stop
//     goes on; Serve then returns ErrFailed.
package devloop
