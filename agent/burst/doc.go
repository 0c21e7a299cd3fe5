// Package burst is the rule that gathers a key's external events falling close together in
// event time into one activation (agent.Definition.Burst): a customer who sends three
// messages in ten seconds costs one activation (one model call, one reply) instead of three.
// docs/agents.md, Bursts.
//
// A burst begins with an external event that would run an activation and holds every later
// external event of the key whose event time falls in [first, first+Window), in processing
// order (event time, ties by the envelopes' bytes), up to MaxEvents events and MaxBytes bytes
// of events; an event the bounds leave out begins the next burst.
//
// Invariants:
//   - The window is aligned to the burst's first event, never to the clock, so the bursts
//     depend only on the events' times and bytes, not on the order they arrive in.
//   - Gather is the one gathering rule: the shells' ordering buffer (agent/drive, package
//     transforms) and the core's inbox both call it (or Joins, its step), so every runtime
//     forms the same bursts.
//   - A burst is its first event and events of its window in their order, within its bounds
//     (a first event larger than MaxBytes still runs, alone); with the events left out it is
//     the input again.
//   - The zero Rule (Window 0) runs every event on its own, exactly as an agent without it.
//
// The package is plain Go over envelopes; the activation that runs a burst is package
// agent's (host.Batch.ActivateBurst), whose trigger lists the burst's Events.
package burst
