package inorder

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// yielded is what job i of a test yields: n values, each naming the job and its place.
func values(i, n int) []string {
	v := make([]string, n)
	for k := range v {
		v[k] = fmt.Sprintf("%d.%d", i, k)
	}
	return v
}

func TestOrder(t *testing.T) {
	for _, workers := range []int{1, 2, 3, 8} {
		for _, buffer := range []int{0, 64, 1000} {
			t.Run(fmt.Sprintf("workers=%d/buffer=%d", workers, buffer), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(workers), uint64(buffer)))
				r := New[string](workers, buffer)
				var got, want []string
				inCall := false
				deliver := func(v string) {
					if !inCall {
						t.Fatal("delivered outside Go, Poll and Wait")
					}
					got = append(got, v) // -race: a job's goroutine delivering would race here
				}
				var running, peak atomic.Int32
				for i := range 60 {
					vs := values(i, rng.IntN(300))
					want = append(want, vs...)
					pause := rng.IntN(3) == 0
					inCall = true
					err := r.Go(func(yield func(string) bool) {
						if n := running.Add(1); n > peak.Load() {
							peak.Store(n) // racy maximum, good enough: it only errs low
						}
						defer running.Add(-1)
						for _, v := range vs {
							if pause {
								runtime.Gosched()
							}
							if !yield(v) {
								t.Error("yield refused on a running runner")
								return
							}
						}
					}, deliver)
					if err == nil && i%7 == 0 {
						err = r.Poll(deliver)
					}
					inCall = false
					if err != nil {
						t.Fatal(err)
					}
				}
				inCall = true
				if err := r.Wait(deliver); err != nil {
					t.Fatal(err)
				}
				inCall = false
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("delivered %d values out of order or incomplete (want %d)", len(got), len(want))
				}
				if p := peak.Load(); p > int32(workers) {
					t.Fatalf("%d jobs ran at once, limit %d", p, workers)
				}
			})
		}
	}
}

// TestBufferBound: a job behind a slow one stops in yield once it holds its buffer, and goes
// on when it becomes the oldest.
func TestBufferBound(t *testing.T) {
	r := New[int](2, 128)
	release := make(chan struct{})
	var yielded atomic.Int64
	deliver := func(int) {}
	if err := r.Go(func(func(int) bool) { <-release }, deliver); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	if err := r.Go(func(yield func(int) bool) {
		defer close(done)
		for i := range 10_000 {
			yielded.Add(1)
			yield(i)
		}
	}, deliver); err != nil {
		t.Fatal(err)
	}
	// The second job cannot finish while the first holds the head.
	select {
	case <-done:
		t.Fatal("the second job yielded 10,000 values past a buffer of 128")
	case <-time.After(200 * time.Millisecond):
	}
	if n := yielded.Load(); n > 128+2*chunk+1 {
		t.Fatalf("the second job yielded %d values while blocked; bound %d", n, 128+2*chunk+1)
	}
	close(release)
	var n int
	if err := r.Wait(func(int) { n++ }); err != nil {
		t.Fatal(err)
	}
	if n != 10_000 {
		t.Fatalf("delivered %d values, want 10000", n)
	}
}

func TestPanic(t *testing.T) {
	r := New[string](3, 0)
	var got []string
	deliver := func(v string) { got = append(got, v) }
	stopped, failed := make(chan bool, 1), make(chan struct{})
	for i, job := range []func(func(string) bool){
		func(yield func(string) bool) { yield("a") },
		func(yield func(string) bool) { yield("b"); panic(io.ErrUnexpectedEOF) },
		func(yield func(string) bool) { <-failed; stopped <- !yield("c") },
	} {
		if err := r.Go(job, deliver); err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
	}
	err := r.Wait(deliver)
	close(failed)
	var pe *PanicError
	if !errors.As(err, &pe) || !errors.Is(err, io.ErrUnexpectedEOF) || len(pe.Stack) == 0 {
		t.Fatalf("Wait = %v, want the job's panic", err)
	}
	if fmt.Sprint(got) != "[a b]" {
		t.Fatalf("delivered %v, want [a b]: the failed job's values, then nothing", got)
	}
	if !<-stopped {
		t.Fatal("a job after the failed one was not stopped")
	}
	if err := r.Go(func(func(string) bool) {}, deliver); !errors.As(err, &pe) {
		t.Fatalf("Go on a failed runner = %v, want its panic", err)
	}
}

func TestStop(t *testing.T) {
	r := New[int](2, 64)
	refused := make(chan bool, 2)
	for range 2 {
		r.Go(func(yield func(int) bool) {
			for i := 0; ; i++ {
				if !yield(i) {
					refused <- true
					return
				}
			}
		}, func(int) {})
	}
	r.Stop()
	for range 2 {
		<-refused // both endless jobs end
	}
	var n int
	if err := r.Wait(func(int) { n++ }); err != nil || n != 0 {
		t.Fatalf("Wait after Stop = %v with %d values, want nothing", err, n)
	}
	r.Stop()
}
