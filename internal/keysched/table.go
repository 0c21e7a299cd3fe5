package keysched

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/beamagents/beamagents/internal/registry"
)

// A Timer is one firing queued on a job: its tag and its time.
type Timer struct {
	Tag  string
	AtMs int64
}

// A Job is one key's step running apart from its bundle: the firing that started it and the
// firings of the key that joined it in the same bundle, run one after another. D is the
// shell's data: set before Table.Start, then written only by the job's run until Done is
// closed, and read-only after.
type Job[D any] struct {
	done    chan struct{}
	epoch   uint64
	at      int64
	await   string
	exposed bool
	// appended says an element joined the key's buffer while the job ran.
	appended atomic.Bool

	mu       sync.Mutex
	queue    []Timer // firings not yet run
	finished bool    // no firing is run after this

	// Data is the shell's; Err is set before Done is closed when the run panicked.
	Data D
	Err  error
}

// NewJob returns the job of the firing first, at its time in bundle epoch, with await timer
// tag await; exposed says the key's Beam timers were changed in the bundle before it.
func NewJob[D any](epoch uint64, first Timer, await string, exposed bool) *Job[D] {
	return &Job[D]{done: make(chan struct{}), epoch: epoch, at: first.AtMs, await: await, exposed: exposed, queue: []Timer{first}}
}

// At is the time of the firing that started the job.
func (j *Job[D]) At() int64 { return j.at }

// Await is the tag of the job's await timer.
func (j *Job[D]) Await() string { return j.await }

// Done is closed once the job ran its last firing.
func (j *Job[D]) Done() <-chan struct{} { return j.done }

func (j *Job[D]) isDone() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// Running is what Decide reads of j (nil: no job).
func (j *Job[D]) Running() Running {
	if j == nil {
		return Running{}
	}
	return Running{Present: true, Done: j.isDone(), Epoch: j.epoch, Await: j.await, Exposed: j.exposed, Appended: j.appended.Load()}
}

// MarkAppended records that an element joined the key's buffer while j runs.
func (j *Job[D]) MarkAppended() { j.appended.Store(true) }

// Extend queues one more firing, unless the job has run its last.
func (j *Job[D]) Extend(t Timer) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.finished {
		return false
	}
	j.queue = append(j.queue, t)
	return true
}

// Next returns the next firing to run; once it reports false, the job takes no more.
func (j *Job[D]) Next() (Timer, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.queue) == 0 {
		j.finished = true
		return Timer{}, false
	}
	t := j.queue[0]
	j.queue = j.queue[1:]
	return t, true
}

func (j *Job[D]) stop() {
	j.mu.Lock()
	j.finished = true
	j.mu.Unlock()
}

// A Table holds one step's jobs in a process, by key, shared by its DoFn instances.
type Table[D any] struct {
	name string // the name it is registered under; "" for a Table of its own

	mu    sync.Mutex
	jobs  map[string]*Job[D]
	slots chan struct{}
	// finished counts the jobs that finished; changed is closed and replaced whenever one does.
	finished uint64
	changed  chan struct{}
	maxKept  int
}

// MaxKept bounds the jobs a Table keeps: beyond it, finished jobs (of keys that never came
// back) are dropped, which only costs a rerun.
const MaxKept = 1 << 16

var (
	tables registry.Registry[any] // name → *Table[D]
	epochs atomic.Uint64
)

// NewTable returns a Table of its own (not registered) running at most slots jobs at once.
func NewTable[D any](slots int) *Table[D] {
	return &Table[D]{jobs: map[string]*Job[D]{}, slots: make(chan struct{}, max(slots, 1)), changed: make(chan struct{}), maxKept: MaxKept}
}

// Acquire returns the process's Table of the step named name, creating it with slots on
// first use, and counts a reference to it: call it in Setup, and Release in Teardown.
func Acquire[D any](name string, slots int) (*Table[D], error) {
	v, _ := tables.Acquire(name, func() (any, error) {
		t := NewTable[D](slots)
		t.name = name
		return t, nil
	})
	t, ok := v.(*Table[D])
	if !ok {
		tables.Release(name)
		return nil, fmt.Errorf("keysched: table %q holds another type of job", name)
	}
	return t, nil
}

// Release drops a reference taken by Acquire; the last one frees the Table. A nil Table
// releases nothing.
func (t *Table[D]) Release() {
	if t == nil || t.name == "" {
		return
	}
	tables.Release(t.name)
}

// registered is how many Tables the process holds (for tests).
func registered() int { return tables.Len() }

// NewEpoch returns a number no earlier call returned in this process: a bundle's epoch, or
// what makes an await timer's tag unique.
func NewEpoch() uint64 { return epochs.Add(1) }

// Hold runs run holding one of t's slots; with t nil it runs run at once.
func (t *Table[D]) Hold(run func()) {
	if t != nil {
		t.slots <- struct{}{}
		defer func() { <-t.slots }()
	}
	run()
}

// Get returns key's job, nil for none (or a nil Table).
func (t *Table[D]) Get(key []byte) *Job[D] {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.jobs[string(key)]
}

// Start makes j key's job and runs run(j) on its own goroutine, holding one of t's slots. A
// panic in run stops the job and becomes its Err.
func (t *Table[D]) Start(key []byte, j *Job[D], run func(*Job[D])) {
	t.put(key, j)
	go func() {
		defer t.finish()
		defer close(j.done)
		defer func() {
			if r := recover(); r != nil {
				j.stop()
				j.Err = fmt.Errorf("activation of key %q panicked: %v", key, r)
			}
		}()
		t.Hold(func() { run(j) })
	}()
}

func (t *Table[D]) put(key []byte, j *Job[D]) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.jobs) >= t.maxKept {
		for k, o := range t.jobs {
			if o.isDone() {
				delete(t.jobs, k)
			}
		}
	}
	t.jobs[string(key)] = j
}

// Remove forgets key's job j (once its effects were carried out or dropped).
func (t *Table[D]) Remove(key []byte, j *Job[D]) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.jobs[string(key)] == j {
		delete(t.jobs, string(key))
	}
}

// Len is how many jobs t keeps.
func (t *Table[D]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.jobs)
}

// finish counts a job that finished and wakes the calls waiting for jobs to finish.
func (t *Table[D]) finish() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.finished++
	close(t.changed)
	t.changed = make(chan struct{})
}

// finishedJobs is how many jobs have finished.
func (t *Table[D]) finishedJobs() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.finished
}

// waitFor waits until job j finishes, and reports false, or until as many jobs as the table
// has slots have finished since the count since (a bundle's start), and reports true. Only
// jobs that finished meanwhile count: a finished job whose key moved to another worker is
// never carried out here, and must not make every later bundle pass over at once.
func (t *Table[D]) waitFor(j *Job[D], since uint64) bool {
	for {
		t.mu.Lock()
		enough, changed := t.finished-since >= uint64(cap(t.slots)), t.changed
		t.mu.Unlock()
		if j.isDone() {
			return false
		}
		if enough {
			return true
		}
		select {
		case <-j.done:
			return false
		case <-changed:
		}
	}
}

// A Bundle is what one bundle of a DoFn instance keeps: its epoch, the keys whose Beam timers
// it changed, and the await firings it passed over.
type Bundle struct {
	Epoch   uint64
	touched map[string]bool // nil without a Table
	since   uint64          // the jobs finished when the bundle started
	passing bool
	passed  map[string]bool
}

// NewBundle starts a bundle over t (which may be nil: no jobs).
func (t *Table[D]) NewBundle() *Bundle {
	b := &Bundle{Epoch: NewEpoch()}
	if t != nil {
		b.touched, b.passed, b.since = map[string]bool{}, map[string]bool{}, t.finishedJobs()
	}
	return b
}

// Touch records that the bundle changed key's Beam timers.
func (b *Bundle) Touch(key []byte) {
	if b.touched != nil {
		b.touched[string(key)] = true
	}
}

// Touched reports whether the bundle changed key's Beam timers.
func (b *Bundle) Touched(key []byte) bool { return b.touched[string(key)] }

// PassOver reports whether bundle b leaves key's unfinished job j, whose await timer fired
// in a bundle after the one that started it, to a later bundle; the caller then re-arms the
// await timer. The runner hands a bundle's await firings in no particular order, so a bundle
// that waited on each in turn would carry out most effects, and let the keys' next timers
// fire, only after the last call answered. A bundle waits on the first unfinished job it
// meets until that job finishes or until as many jobs have finished since the bundle started
// as the table has slots; from then on it passes over every unfinished job, and the next
// bundle brings them back with the finished ones. Each bundle so carries out at least a slot
// count of jobs, which bounds the re-armed firings. A key fires at most once more in a bundle
// that passed over it (a timer set in the bundle runs before the key's later timers in it):
// that firing waits.
func (t *Table[D]) PassOver(b *Bundle, key []byte, j *Job[D]) bool {
	if b.passed == nil || b.passed[string(key)] {
		return false
	}
	if !b.passing && !t.waitFor(j, b.since) {
		return false
	}
	b.passing = true
	b.passed[string(key)] = true
	b.Touch(key)
	return true
}
