package keysched

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTableWaitFor: a bundle's wait on an unfinished job ends when the job finishes, or
// when as many jobs as the table has slots have finished since the bundle started; jobs that
// finished before it (a key moved away leaves its finished job behind) do not count.
func TestTableWaitFor(t *testing.T) {
	newJob := func() *Job[int] { return NewJob[int](1, Timer{}, "await:1", false) }
	finish := func(tb *Table[int], j *Job[int]) {
		close(j.done)
		tb.finish()
	}
	waited := func(tb *Table[int], j *Job[int], since uint64) chan bool {
		c := make(chan bool, 1)
		go func() { c <- tb.waitFor(j, since) }()
		return c
	}
	result := func(t *testing.T, c chan bool) bool {
		t.Helper()
		select {
		case v := <-c:
			return v
		case <-time.After(30 * time.Second):
			t.Fatal("waitFor did not return")
			return false
		}
	}
	pending := func(t *testing.T, c chan bool) {
		t.Helper()
		select {
		case v := <-c:
			t.Fatalf("waitFor returned %v early", v)
		case <-time.After(20 * time.Millisecond):
		}
	}

	t.Run("own job finishes", func(t *testing.T) {
		tb := NewTable[int](2)
		a := newJob()
		c := waited(tb, a, tb.finishedJobs())
		pending(t, c)
		finish(tb, a)
		if result(t, c) {
			t.Error("waitFor passed over a job that finished")
		}
	})
	t.Run("enough others finish", func(t *testing.T) {
		tb := NewTable[int](2)
		a, b, d := newJob(), newJob(), newJob()
		c := waited(tb, a, tb.finishedJobs())
		finish(tb, b)
		pending(t, c) // one finished, two slots
		finish(tb, d)
		if !result(t, c) {
			t.Error("waitFor kept waiting with two other jobs finished")
		}
	})
	t.Run("jobs finished before the bundle do not count", func(t *testing.T) {
		tb := NewTable[int](2)
		a, b, d, e := newJob(), newJob(), newJob(), newJob()
		finish(tb, b)
		finish(tb, d) // left behind: their keys never come back
		c := waited(tb, a, tb.finishedJobs())
		pending(t, c)
		finish(tb, e)
		pending(t, c)
		finish(tb, a)
		if result(t, c) {
			t.Error("waitFor passed over a job that finished")
		}
	})
}

// TestTableLifetime: the DoFn instances of a step share one Table, freed by the last
// Release; a name holding another type of job is an error.
func TestTableLifetime(t *testing.T) {
	before := registered()
	a, err := Acquire[int]("step-a", 2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Acquire[int]("step-a", 5)
	if err != nil {
		t.Fatal(err)
	}
	if a != b || cap(a.slots) != 2 {
		t.Fatalf("a second instance got another table (%p, %p) or slots %d", a, b, cap(b.slots))
	}
	if _, err := Acquire[string]("step-a", 1); err == nil || !strings.Contains(err.Error(), "another type") {
		t.Errorf("Acquire with another job type: %v", err)
	}
	if registered() != before+1 {
		t.Errorf("%d tables registered, want %d", registered(), before+1)
	}
	a.Release()
	if registered() != before+1 {
		t.Error("the first Release freed a table still in use")
	}
	b.Release()
	if registered() != before {
		t.Error("the last Release left the table registered")
	}
	c, _ := Acquire[int]("step-a", 2)
	defer c.Release()
	if c == a {
		t.Error("a freed table came back")
	}
	var none *Table[int]
	none.Release() // no table: nothing to release
	if none.Get([]byte("k")) != nil {
		t.Error("a nil table has a job")
	}
}

// TestTableKeepsAtMostMaxKept: beyond the bound, finished jobs are dropped; running ones stay.
func TestTableKeepsAtMostMaxKept(t *testing.T) {
	tb := NewTable[int](1)
	tb.maxKept = 3
	running := NewJob[int](1, Timer{}, "await:1", false)
	tb.put([]byte("running"), running)
	for _, k := range []string{"a", "b"} {
		j := NewJob[int](1, Timer{}, "await:2", false)
		close(j.done)
		tb.put([]byte(k), j)
	}
	tb.put([]byte("new"), NewJob[int](1, Timer{}, "await:3", false))
	if tb.Len() != 2 || tb.Get([]byte("running")) != running || tb.Get([]byte("a")) != nil {
		t.Errorf("after the bound: %d jobs, running kept %v", tb.Len(), tb.Get([]byte("running")) == running)
	}
}

// TestJobRuns: a job runs its queued firings and those that joined it, takes none once it
// ran its last, and a panic becomes its Err.
func TestJobRuns(t *testing.T) {
	tb := NewTable[[]Timer](1)
	release := make(chan struct{})
	j := NewJob[[]Timer](1, Timer{Tag: "order:1", AtMs: 1}, "await:1", false)
	tb.Start([]byte("k"), j, func(j *Job[[]Timer]) {
		<-release
		for tm, ok := j.Next(); ok; tm, ok = j.Next() {
			j.Data = append(j.Data, tm)
		}
	})
	if !j.Extend(Timer{Tag: "ttl", AtMs: 2}) {
		t.Fatal("a running job refused a firing")
	}
	close(release)
	<-j.Done()
	if j.Extend(Timer{Tag: "deadline", AtMs: 3}) {
		t.Error("a finished job took a firing")
	}
	if len(j.Data) != 2 || j.Data[1].Tag != "ttl" || j.Err != nil {
		t.Errorf("ran %v, err %v", j.Data, j.Err)
	}
	if r := j.Running(); !r.Present || !r.Done || r.Await != "await:1" {
		t.Errorf("Running() = %+v", r)
	}

	p := NewJob[[]Timer](1, Timer{}, "await:2", false)
	tb.Start([]byte("p"), p, func(*Job[[]Timer]) { panic("boom") })
	<-p.Done()
	if p.Err == nil || !strings.Contains(p.Err.Error(), "boom") || p.Extend(Timer{}) {
		t.Errorf("a panicking job: err %v", p.Err)
	}
}

// TestHoldBoundsJobs: at most the slot count of runs hold a slot at once.
func TestHoldBoundsJobs(t *testing.T) {
	tb := NewTable[int](2)
	var mu sync.Mutex
	var now, most int
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tb.Hold(func() {
				mu.Lock()
				now++
				most = max(most, now)
				mu.Unlock()
				time.Sleep(time.Millisecond)
				mu.Lock()
				now--
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	if most > 2 {
		t.Errorf("%d runs held a slot at once, want at most 2", most)
	}
}

// TestPassOver: a bundle passes over a key at most once, and only once enough jobs finished.
func TestPassOver(t *testing.T) {
	tb := NewTable[int](1)
	b := tb.NewBundle()
	j := NewJob[int](b.Epoch-1, Timer{}, "await:1", false)
	other := NewJob[int](b.Epoch-1, Timer{}, "await:2", false)
	go func() { close(other.done); tb.finish() }()
	if !tb.PassOver(b, []byte("k"), j) {
		t.Fatal("the bundle waited for a job although a slot count of jobs finished")
	}
	if !b.Touched([]byte("k")) {
		t.Error("passing over did not count as changing the key's timers")
	}
	if tb.PassOver(b, []byte("k"), j) {
		t.Error("the bundle passed over the same key twice")
	}
	if (*Table[int])(nil).NewBundle().touched != nil {
		t.Error("a bundle without a table tracks timers")
	}
}
