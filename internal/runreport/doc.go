// Package runreport is what a launcher says about a finished run: its counters and
// distributions, whether nothing succeeded (and the commonest reason why), and the demo's
// summary of its outputs.
//
// Invariants:
//   - It reads the run's Result and its output files only: saying changes nothing.
//   - The dead_letters headline is the sum of every dead_letters.<reason> counter (the
//     agent's own and the undecodable input's), when the run counted by reason.
//   - Lines are sorted by name (counters, distributions) or by key (the summary's lists), so
//     the same run says the same.
package runreport
