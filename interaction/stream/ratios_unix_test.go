//go:build unix

package stream_test

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRatiosCPU is BenchmarkRatios measured in process CPU time with GOMAXPROCS=1, so
// garbage collection is charged to whoever allocates and time spent descheduled on a shared
// machine is not charged at all; each way runs in blocks long enough for getrusage's clock-tick resolution.
func BenchmarkRatiosCPU(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	g, docs := benchDocs(b)
	for _, size := range []string{"2K", "60K"} {
		doc := docs[size]
		block := max(1, 10_000_000/len(doc)) // tens of milliseconds: getrusage counts in clock ticks
		b.Run(size, func(b *testing.B) {
			var spent [3]time.Duration
			for b.Loop() {
				for i, w := range ways {
					t0 := cpuTime()
					for range block {
						if !w.run(g, doc) {
							b.Fatal("refused")
						}
					}
					spent[i] += cpuTime() - t0
				}
			}
			per := func(i int) float64 { return float64(spent[i].Nanoseconds()) / float64(b.N*block) }
			for i, w := range ways {
				b.ReportMetric(per(i), w.name+"-cpu-ns/op")
			}
			b.ReportMetric(per(1)/per(0), "push/whole")
			b.ReportMetric(per(2)/per(1), "bytewise/push")
			b.ReportMetric(0, "ns/op")
		})
	}
}
