// Package runstatus is what a launcher shows while its pipeline runs with workers in this
// process (Prism, a loopback job service): a status line from package progress's counts
// (and, for a Pub/Sub run, its source's), the model endpoints whose breaker is not closed,
// and the runner's informational logging kept off the terminal.
//
// Invariants:
//   - It only reads counts: printing a status changes no output and no state of the run.
//   - A status on a terminal is one line rewritten in place, cut to the terminal's width; in a
//     log it is a plain line each period.
package runstatus
