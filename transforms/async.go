package transforms

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/statecodec"
)

// Activations apart from their bundle (Options.ModelConcurrency > 1).
//
// Prism hands a stateful stage every ready key in one bundle, and a Beam Go DoFn is called
// for one element or timer at a time, on the bundle's goroutine: a firing that waits on the
// model in its own call makes every other key of the bundle wait. So a firing with due
// envelopes reads the key's state, starts the step (drive.Core.Step) on its own goroutine
// over that copy, sets the key's "await" timer at the firing's time and returns; the step's
// effects are carried out later, in a call for the same key: the await firing (which waits
// for the step), or any earlier call of the key that finds it finished. Everything Beam
// offers per key stays in a call for that key, as the SDK requires: state is read and
// written through the call's provider, timers are set through the call's timer provider
// (the SDK keys them by the call's key), and outputs are emitted from the bundle's goroutine
// with the firing's own timestamp, so they are the bytes and timestamps the firing would
// have emitted in its own call. The await timer holds the output watermark at that time
// until the effects are out.
//
// Per key one step runs at a time: a call of a key whose step is still running in the same
// bundle only makes sure the await timer will bring it back (an await firing the SDK runs
// inside the same bundle does nothing); a call in a later bundle waits for it. An arriving
// envelope is appended to the buffer meanwhile, and the step's rewrite of the buffer keeps
// what arrived after it read it. A restore waits. The effects apply only if the key's state
// is still what the step read (otherwise, as after a worker moved the key or a bundle
// failed, the firing runs again from the state): the step made no decision the state does
// not hold, and a step that never reaches its effects is as if it never ran, so a retried
// bundle runs it again as it would have in its own call.
//
// At most Options.ModelConcurrency steps of one RunAgent run at once in a process; their
// model calls are the process's calls in flight for the step.

// TagAwait starts the tag of the timer that brings a key back for its job's effects, at the
// time of the firing that started the job; the rest of the tag is unique to the job, so that
// setting it never overrides a timer of the key the runner delivers in the same bundle.
const TagAwait = "await:"

// A job is one key's steps running apart from their bundle: the firing that started it and
// the firings of the key that came in the same bundle while it ran, one after another over
// the job's own copy of the key's state.
type job struct {
	done    chan struct{}
	epoch   uint64 // the bundle that started it
	at      int64  // the time of the firing that started it
	await   string // its await timer's tag, unique to the job
	exposed bool   // the key's timers were changed in the starting bundle before it started
	// appended says an envelope joined the key's buffer while the job ran.
	appended atomic.Bool
	cell     []byte   // the key's state cell as the first step read it
	bag      [][]byte // the key's buffer as the first step read it

	mu       sync.Mutex
	queue    []drive.Trigger // firings not yet run
	finished bool            // no firing is run after this

	// Set before done is closed.
	eff       drive.Effects // the steps' effects in order, their timer operations at their times
	stamps    []int64       // each output's firing time
	writes    map[statecodec.Cell][]byte
	rest      []byte // the buffer's new content when eff.Rewrite
	latencies []int64
	err       error
}

func (j *job) isDone() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// extend queues one more firing of the key, unless the job has run its last.
func (j *job) extend(t drive.Trigger) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.finished {
		return false
	}
	j.queue = append(j.queue, t)
	return true
}

func (j *job) next() (drive.Trigger, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.queue) == 0 {
		j.finished = true
		return drive.Trigger{}, false
	}
	t := j.queue[0]
	j.queue = j.queue[1:]
	return t, true
}

// run runs the job's firings over the state it read, holding one of t's slots, each firing
// on the buffer the one before it left; a panic fails the bundle that carries out the
// effects.
func (j *job) run(ctx context.Context, t *jobTable, c drive.Core, key []byte, bl *drive.Backlog, rest []byte) {
	defer t.finish()
	defer close(j.done)
	defer func() {
		if r := recover(); r != nil {
			j.mu.Lock()
			j.finished = true
			j.mu.Unlock()
			j.err = fmt.Errorf("activation of key %q panicked: %v", key, r)
		}
	}()
	t.hold(func() {
		b := c.Agent.NewBatch(layoutStore{layout: &combined{raw: j.cell, haveRaw: true}}, c.Deps)
		b.DeferEncoding()
		c.Around = func(activate func() *agent.Result) *agent.Result {
			res, us := clocked(activate)
			j.latencies = append(j.latencies, us)
			return res
		}
		armed := bl.Timers
		for tr, ok := j.next(); ok; tr, ok = j.next() {
			if bl == nil { // a later firing: the buffer the steps before it left
				bl = &drive.Backlog{}
				bl.Due, rest, bl.Timers, bl.Bad = drive.Split([][]byte{rest}, tr.AtMs)
				maps.Copy(bl.Timers, armed)
			}
			e := c.Step(ctx, b, key, tr, bl)
			j.merge(&e, tr.AtMs)
			armed, bl = bl.Timers, nil
		}
		j.writes = b.Writes()
		if j.eff.Rewrite {
			j.rest = drive.AppendTimers(rest, armed)
		}
	})
}

// merge adds one step's effects to the job's, its timer operations at its own time.
func (j *job) merge(e *drive.Effects, at int64) {
	j.eff.Outputs = append(j.eff.Outputs, e.Outputs...)
	for range e.Outputs {
		j.stamps = append(j.stamps, at)
	}
	j.eff.Results = append(j.eff.Results, e.Results...)
	for _, op := range e.TimerOps {
		op.AtMs = max(op.AtMs, at)
		j.eff.TimerOps = append(j.eff.TimerOps, op)
	}
	j.eff.Activations += e.Activations
	j.eff.Rewrite = j.eff.Rewrite || e.Rewrite
}

// A jobTable holds one RunAgent's jobs in a process, by key, shared by all its DoFn
// instances.
type jobTable struct {
	mu    sync.Mutex
	jobs  map[string]*job
	slots chan struct{}
	// finished counts the jobs that finished; changed is closed and replaced whenever one does.
	finished uint64
	changed  chan struct{}
}

// maxKept bounds the finished jobs a table keeps for keys that never came back (their key
// moved to another worker): beyond it, finished jobs are dropped, which only costs a rerun.
const maxKept = 1 << 16

var (
	tablesMu sync.Mutex
	tables   = map[string]*jobTable{}
	epochs   atomic.Uint64
)

func jobsOf(instance string, n int) *jobTable {
	tablesMu.Lock()
	defer tablesMu.Unlock()
	t := tables[instance]
	if t == nil {
		t = &jobTable{jobs: map[string]*job{}, slots: make(chan struct{}, n), changed: make(chan struct{})}
		tables[instance] = t
	}
	return t
}

func nextEpoch() uint64 { return epochs.Add(1) }

func newInstanceID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// hold runs run holding one of t's slots; with t nil it runs run at once.
func (t *jobTable) hold(run func()) {
	if t != nil {
		t.slots <- struct{}{}
		defer func() { <-t.slots }()
	}
	run()
}

func (t *jobTable) get(key []byte) *job {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.jobs[string(key)]
}

func (t *jobTable) put(key []byte, j *job) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.jobs) >= maxKept {
		for k, o := range t.jobs {
			if o.isDone() {
				delete(t.jobs, k)
			}
		}
	}
	t.jobs[string(key)] = j
}

func (t *jobTable) remove(key []byte, j *job) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.jobs[string(key)] == j {
		delete(t.jobs, string(key))
	}
}

// finish counts a job that finished and wakes the calls waiting for jobs to finish.
func (t *jobTable) finish() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.finished++
	close(t.changed)
	t.changed = make(chan struct{})
}

// finishedJobs is how many jobs have finished.
func (t *jobTable) finishedJobs() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.finished
}

// waitFor waits until job j finishes, and reports false, or until as many jobs as the table
// has slots have finished since the count since (a bundle's start), and reports true. Only
// jobs that finished meanwhile count: a finished job whose key moved to another worker is
// never carried out here, and must not make every later bundle pass over at once.
func (t *jobTable) waitFor(j *job, since uint64) bool {
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

// pending handles a call of a key that may have a job running. It reports whether the call
// is done: an envelope joins the buffer meanwhile; a firing in the job's bundle joins the
// job (unless an envelope did, which the job's copy lacks); the job's own await timer,
// fired by the SDK inside the bundle, is re-armed by the key's later timer calls in it.
// Otherwise the job, if any, is waited for and its effects are carried out: when wait is
// set, when it was started in an earlier bundle, or when the key's timers changed in its
// bundle before it started (the SDK then skips the key's later timers it supersedes, which
// would have re-armed the await timer).
func (f *firing) pending(tag string, wait bool) (bool, error) {
	j := f.jobs.get(f.key)
	if j == nil {
		return false, nil
	}
	if !wait && !j.isDone() {
		switch {
		case tag == "":
			j.appended.Store(true)
			return true, nil
		case j.epoch != f.epoch:
			if tag == j.await && f.passOver(j) {
				return true, nil
			}
		case tag == j.await:
			if !j.exposed {
				return true, nil
			}
		case !j.appended.Load() && j.extend(drive.Trigger{Tag: tag, AtMs: f.now}):
			f.rt.firings.Inc(f.ctx, 1)
			f.await(j)
			return true, nil
		}
	}
	return false, f.settle(j)
}

// start starts the step of a firing on its own goroutine over the key's state, and sets the
// await timer.
func (f *firing) start(tag string, bag [][]byte, bl *drive.Backlog, rest []byte) error {
	cell, err := f.readCell()
	if err != nil {
		return err
	}
	j := &job{done: make(chan struct{}), epoch: f.epoch, at: f.now, await: fmt.Sprintf("%s%d", TagAwait, nextEpoch()),
		exposed: f.touched[string(f.key)], cell: cell, bag: bag, queue: []drive.Trigger{{Tag: tag, AtMs: f.now}}}
	f.jobs.put(f.key, j)
	go j.run(context.WithoutCancel(f.ctx), f.jobs, f.rt.core(f.frame), f.key, bl, rest)
	f.await(j)
	return nil
}

func (f *firing) await(j *job) { f.frame.timer.Set(f.tp, toTime(f.now), timers.WithTag(j.await)) }

// passOver reports whether the await firing of an unfinished job, in a bundle after the one
// that started it, leaves the key to a later bundle: it re-arms the await timer. Prism hands
// the await firings of a bundle in no particular order, so a bundle that waited on each in
// turn would carry out most effects, and let the keys' next timers fire, only after the last
// call answered. A bundle waits on the first unfinished job it meets until that job finishes
// or until as many jobs have finished since the bundle started as the table has slots; from
// then on it passes over every unfinished job, and the next bundle brings them back with the
// finished ones.
// Each bundle so carries out at least a slot count of jobs, which bounds the re-armed
// firings. A key fires at most once more in a bundle that passed over it (the SDK runs a
// timer set in the bundle before the key's later timers in it): that firing waits.
func (f *firing) passOver(j *job) bool {
	p := f.passes
	if p == nil || p.passed[string(f.key)] {
		return false
	}
	if !p.passing && !f.jobs.waitFor(j, p.since) {
		return false
	}
	p.passing = true
	p.passed[string(f.key)] = true
	f.touched[string(f.key)] = true
	f.rt.passedOver.Inc(f.ctx, 1)
	f.await(j)
	return true
}

// passes is what a bundle passed over (passOver).
type passes struct {
	since   uint64 // the jobs finished when the bundle started
	passing bool
	passed  map[string]bool
}

// settle waits for a key's job and carries out its effects, if the key's state is still
// what the job read; otherwise the job is dropped and the firing runs again from the state.
func (f *firing) settle(j *job) error {
	<-j.done

	f.jobs.remove(f.key, j)
	if j.err != nil {
		return j.err
	}
	cell, _, err := f.cell.Read(f.sp)
	if err != nil {
		return err
	}
	bag, _, err := f.buffer.Read(f.sp)
	if err != nil {
		return err
	}
	f.rt.stateReads.Inc(f.ctx, 2)
	if !bytes.Equal(cell, j.cell) || !prefixOf(j.bag, bag) {
		f.rt.staleSteps.Inc(f.ctx, 1)
		return nil
	}
	for _, us := range j.latencies {
		f.rt.m.latency.Update(f.ctx, us)
	}
	l := &combined{cell: f.cell, raw: cell, haveRaw: true}
	f.layout, f.written = l, l
	rest := j.rest
	if j.eff.Rewrite {
		for _, e := range bag[len(j.bag):] { // arrived while the job ran
			rest = append(rest, e...)
		}
		bag = nil
		if len(rest) > 0 {
			bag = [][]byte{rest}
		}
	}
	f.bagNow = &bag
	if err := f.carry(j.at, j.stamps, j.writes, &j.eff, rest); err != nil {
		return err
	}
	f.recordQuiet(l, j.eff.Rewrite, rest)
	return nil
}

// The SDK's state provider does not always show a call the writes it made: a bag read after
// a clear and an append returns the bag from before the clear with the append (the clear is
// counted as a blind write and trimmed), and a value read after a write returns nothing when
// the value was empty when first read. So a call that carried a job's effects out reads the
// key's state on from what it wrote (f.written, f.bagNow), never again through Beam.

// readCell returns the key's state cell: as this call wrote it, or as Beam holds it.
func (f *firing) readCell() ([]byte, error) {
	if f.written != nil {
		return f.written.raw, nil
	}
	cell, _, err := f.cell.Read(f.sp)
	if err == nil {
		f.rt.stateReads.Inc(f.ctx, 1)
	}
	return cell, err
}

// readBuffer returns the key's ordering buffer: as this call left it, or as Beam holds it.
func (f *firing) readBuffer() ([][]byte, error) {
	if f.bagNow != nil {
		return *f.bagNow, nil
	}
	raw, _, err := f.buffer.Read(f.sp)
	if err == nil {
		f.rt.stateReads.Inc(f.ctx, 1)
	}
	return raw, err
}

func prefixOf(prefix, bag [][]byte) bool {
	if len(prefix) > len(bag) {
		return false
	}
	for i, e := range prefix {
		if !bytes.Equal(e, bag[i]) {
			return false
		}
	}
	return true
}
