package main

import (
	"testing"
	"time"

	"github.com/beamagents/beamagents/examples/devices"
)

// BenchmarkOverhead: the demo traffic (three quiet readings, an anomaly with two model calls,
// an inline lookup and a signed dispatch intent, its result resuming to the final reply, an
// undecodable reading) through the activation core, by the native devices agent and by the
// Eino one, interleaved in one loop; eino/native is the ratio of their times.
func BenchmarkOverhead(b *testing.B) {
	native, err := devices.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	adapted, err := New(nil)
	if err != nil {
		b.Fatal(err)
	}
	kr, envs := keyring(b), envelopes(b)
	var tn, ta time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		run(native, kr, envs)
		t1 := time.Now()
		run(adapted, kr, envs)
		ta += time.Since(t1)
		tn += t1.Sub(t0)
	}
	b.ReportMetric(float64(tn.Nanoseconds())/float64(b.N), "native-ns/op")
	b.ReportMetric(float64(ta.Nanoseconds())/float64(b.N), "eino-ns/op")
	b.ReportMetric(float64(ta)/float64(tn), "eino/native")
}
