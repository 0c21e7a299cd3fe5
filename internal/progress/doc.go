// Package progress counts what the runtime's steps do in this process, for the status line
// a launcher prints while its pipeline runs on workers in the same process (Prism, or a
// loopback job service): envelopes read, activations, model calls (completed, and in flight
// now), tokens and dead letters.
//
// The counts are plain atomics, never read by a step: they change no output and no state,
// and a failed bundle's work stays counted (they say what the process did, not what was
// committed; Beam's metrics say that). On a runner whose workers are other processes they
// stay zero, and the status line says only what the launcher sees.
package progress
