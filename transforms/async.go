package transforms

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"sync/atomic"

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

// Await tags: the timer that brings a key back for its step's effects, at the firing's time.
// TagAwaitDeadline stands for a deadline firing that a running step made wait: when it fires,
// the key is woken as by its deadline (drive.Timers.Woken).
const (
	TagAwait         = "await"
	TagAwaitDeadline = "await.deadline"
)

func awaitTag(tag string) string {
	if tag == agent.TagDeadline || tag == TagAwaitDeadline {
		return TagAwaitDeadline
	}
	return TagAwait
}

func isAwait(tag string) bool { return tag == TagAwait || tag == TagAwaitDeadline }

// wokenBy is the tag the step of a firing sees.
func wokenBy(tag string) string {
	if tag == TagAwaitDeadline {
		return agent.TagDeadline
	}
	return tag
}

// A job is one key's step running apart from its bundle.
type job struct {
	done  chan struct{}
	epoch uint64   // the bundle that started it
	now   int64    // the firing's time
	cell  []byte   // the key's state cell as the step read it
	bag   [][]byte // the key's buffer as the step read it

	// Set before done is closed.
	eff       drive.Effects
	writes    map[statecodec.Cell][]byte
	rest      []byte // the buffer's new content when eff.Rewrite
	latencies []int64
	err       error
}

func (j *job) finished() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// run runs the step over the state the job read, holding one of t's slots; a panic fails
// the bundle that carries out the effects.
func (j *job) run(ctx context.Context, t *jobTable, c drive.Core, key []byte, tr drive.Trigger, bl *drive.Backlog, rest []byte) {
	defer close(j.done)
	defer func() {
		if r := recover(); r != nil {
			j.err = fmt.Errorf("activation of key %q panicked: %v", key, r)
		}
	}()
	t.hold(func() {
		b := c.Agent.NewBatch(layoutStore{layout: &combined{raw: j.cell, haveRaw: true}}, c.Deps)
		c.Around = func(activate func() *agent.Result) *agent.Result {
			res, us := clocked(activate)
			j.latencies = append(j.latencies, us)
			return res
		}
		j.eff = c.Step(ctx, b, key, tr, bl)
		j.writes = b.Writes()
		if j.eff.Rewrite {
			j.rest = drive.AppendTimers(rest, bl.Timers)
		}
	})
}

// A jobTable holds one RunAgent's jobs in a process, by key, shared by all its DoFn
// instances.
type jobTable struct {
	mu    sync.Mutex
	jobs  map[string]*job
	slots chan struct{}
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
		t = &jobTable{jobs: map[string]*job{}, slots: make(chan struct{}, n)}
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
			if o.finished() {
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

// pending handles a call of a key that may have a step running: it reports whether the call
// is done (the step runs on in this bundle and the await timer will bring the key back).
// Otherwise the step, if any, has finished or is waited for (when wait is set, or the step
// was started in an earlier bundle) and its effects are carried out.
func (f *firing) pending(tag string, wait bool) (bool, error) {
	j := f.jobs.get(f.key)
	if j == nil {
		return false, nil
	}
	if !wait && !j.finished() && j.epoch == f.epoch {
		if tag != "" && !isAwait(tag) {
			f.await(tag)
		}
		return true, nil
	}
	return false, f.settle(j)
}

// start starts the step of a firing on its own goroutine over the key's state, and sets the
// await timer.
func (f *firing) start(tag string, bag [][]byte, bl *drive.Backlog, rest []byte) error {
	cell, _, err := f.cell.Read(f.sp)
	if err != nil {
		return err
	}
	f.rt.stateReads.Inc(f.ctx, 1)
	j := &job{done: make(chan struct{}), epoch: f.epoch, now: f.now, cell: cell, bag: bag}
	f.jobs.put(f.key, j)
	go j.run(context.WithoutCancel(f.ctx), f.jobs, f.rt.core(f.frame), f.key, drive.Trigger{Tag: tag, AtMs: f.now}, bl, rest)
	f.await(tag)
	return nil
}

func (f *firing) await(tag string) {
	f.setTimers([]agent.TimerOp{{Tag: awaitTag(tag), Set: true, AtMs: f.now}}, f.now)
}

// settle waits for a key's step and carries out its effects, if the key's state is still
// what the step read; otherwise the step is dropped and the firing runs again from the state.
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
	f.layout = &combined{cell: f.cell, raw: cell, haveRaw: true}
	j.eff.Firing = false // counted when the step started
	rest := j.rest
	if j.eff.Rewrite {
		for _, e := range bag[len(j.bag):] { // arrived while the step ran
			rest = append(rest, e...)
		}
	}
	return f.carry(j.now, j.writes, &j.eff, rest)
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
