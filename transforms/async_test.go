package transforms

import (
	"testing"
	"time"
)

// TestJobTableWaitFor: a bundle's wait on an unfinished job ends when the job finishes, or
// when as many jobs as the table has slots have finished since the bundle started; jobs that
// finished before it (a key moved away leaves its finished job behind) do not count.
func TestJobTableWaitFor(t *testing.T) {
	newTable := func() *jobTable {
		return &jobTable{jobs: map[string]*job{}, slots: make(chan struct{}, 2), changed: make(chan struct{})}
	}
	newJob := func() *job { return &job{done: make(chan struct{})} }
	finish := func(tb *jobTable, j *job) {
		close(j.done)
		tb.finish()
	}
	waited := func(tb *jobTable, j *job, since uint64) chan bool {
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
		tb := newTable()
		a := newJob()
		c := waited(tb, a, tb.finishedJobs())
		pending(t, c)
		finish(tb, a)
		if result(t, c) {
			t.Error("waitFor passed over a job that finished")
		}
	})
	t.Run("enough others finish", func(t *testing.T) {
		tb := newTable()
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
		tb := newTable()
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
