package transforms

import (
	"testing"
	"time"
)

// TestJobTableWaitFor: a bundle's wait on an unfinished job ends when the job finishes, or
// when as many other jobs as the table has slots have finished and are not carried out; a
// job carried out (removed) or replaced no longer counts.
func TestJobTableWaitFor(t *testing.T) {
	newJob := func() *job { return &job{done: make(chan struct{})} }
	finish := func(tb *jobTable, key string, j *job) {
		close(j.done)
		tb.finish([]byte(key), j)
	}
	waited := func(tb *jobTable, j *job) chan bool {
		c := make(chan bool, 1)
		go func() { c <- tb.waitFor(j) }()
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
		tb := &jobTable{jobs: map[string]*job{}, slots: make(chan struct{}, 2), changed: make(chan struct{})}
		a := newJob()
		tb.put([]byte("a"), a)
		c := waited(tb, a)
		pending(t, c)
		finish(tb, "a", a)
		if result(t, c) {
			t.Error("waitFor passed over a job that finished")
		}
	})
	t.Run("enough others finish", func(t *testing.T) {
		tb := &jobTable{jobs: map[string]*job{}, slots: make(chan struct{}, 2), changed: make(chan struct{})}
		a, b, c2 := newJob(), newJob(), newJob()
		for k, j := range map[string]*job{"a": a, "b": b, "c": c2} {
			tb.put([]byte(k), j)
		}
		c := waited(tb, a)
		finish(tb, "b", b)
		pending(t, c) // one finished, two slots
		finish(tb, "c", c2)
		if !result(t, c) {
			t.Error("waitFor kept waiting with two other jobs finished")
		}
		if tb.unsettled != 2 {
			t.Errorf("unsettled = %d, want 2", tb.unsettled)
		}
	})
	t.Run("carried out jobs no longer count", func(t *testing.T) {
		tb := &jobTable{jobs: map[string]*job{}, slots: make(chan struct{}, 2), changed: make(chan struct{})}
		a, b, c2, d := newJob(), newJob(), newJob(), newJob()
		for k, j := range map[string]*job{"a": a, "b": b, "c": c2} {
			tb.put([]byte(k), j)
		}
		finish(tb, "b", b)
		tb.remove([]byte("b"), b) // carried out
		tb.put([]byte("c"), d)    // c's job replaced before it finished
		finish(tb, "c", c2)       // no longer in the table
		if tb.unsettled != 0 {
			t.Fatalf("unsettled = %d, want 0", tb.unsettled)
		}
		c := waited(tb, a)
		pending(t, c)
		finish(tb, "c", d)
		pending(t, c)
		finish(tb, "a", a)
		if result(t, c) {
			t.Error("waitFor passed over a job that finished")
		}
	})
}
