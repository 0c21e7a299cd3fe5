// Package hostapi holds what package agent/host re-exports and package agent's core uses: the
// plain types of a call of the core (Store, MapStore, Deps, InlineRun, Result, Outputs,
// TimerOp), the timer tags and the inbox cell's id, and the hook (Core) through which package
// agent lends package host the entry points that need its internals. The two packages meet
// here because host imports agent: agent cannot import host, so the types both name live
// below them both. Nothing here runs an activation.
package hostapi
