package transforms

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"

	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/internal/keysched"
	"github.com/beamagents/beamagents/statecodec"
)

// Steps apart from their bundle (Options.ModelConcurrency > 1).
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
// Package internal/keysched decides what each call does about a key's running step
// (keysched.Decide: its table test is the specification) and keeps the steps in a table that
// the DoFn instances of one RunAgent share in a process, from Setup to Teardown. The effects
// apply only if the key's state is still what the step read (otherwise, as after a worker
// moved the key or a bundle failed, the firing runs again from the state): the step made no
// decision the state does not hold, and a step that never reaches its effects is as if it
// never ran, so a retried bundle runs it again as it would have in its own call.
//
// At most Options.ModelConcurrency steps of one RunAgent run at once in a process; their
// model calls are the process's calls in flight for the step.

// TagAwait starts the tag of the timer that brings a key back for its job's effects, at the
// time of the firing that started the job; the rest of the tag is unique to the job, so that
// setting it never overrides a timer of the key the runner delivers in the same bundle.
const TagAwait = "await:"

// stepJob is one key's steps running apart from their bundle.
type stepJob = keysched.Job[stepData]

// jobTable holds one RunAgent's step jobs in a process.
type jobTable = keysched.Table[stepData]

// stepData is what a job reads and what its steps decided.
type stepData struct {
	cell []byte   // the key's state cell as the first step read it
	bag  [][]byte // the key's buffer as the first step read it

	// Set before the job is done.
	eff       drive.Effects // the steps' effects in order, their timer operations at their times
	stamps    []int64       // each output's firing time
	writes    map[statecodec.Cell][]byte
	latencies []int64
}

func newInstanceID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// runSteps runs a job's firings over the state it read, each on the buffer the one before it
// left; bl is the first firing's backlog, read by the call that started the job.
func runSteps(ctx context.Context, c drive.Core, key []byte, bl *drive.Backlog) func(*stepJob) {
	return func(j *stepJob) {
		d := &j.Data
		b := host.NewBatch(c.Agent, layoutStore{layout: &combined{raw: d.cell, haveRaw: true}}, c.Deps)
		b.DeferEncoding()
		c.Around = func(activate func() *host.Result) *host.Result {
			res, us := clocked(activate)
			d.latencies = append(d.latencies, us)
			return res
		}
		bag := d.bag
		for t, ok := j.Next(); ok; t, ok = j.Next() {
			if bl == nil { // a later firing: the buffer the steps before it left
				bl = drive.ReadBuffer(bag, t.AtMs)
			}
			e := c.Step(ctx, b, key, drive.Trigger{Tag: t.Tag, AtMs: t.AtMs}, bl)
			d.merge(&e, t.AtMs)
			if e.Rewrite {
				bag = [][]byte{e.Bag}
			}
			bl = nil
		}
		d.writes = b.Writes()
	}
}

// merge adds one step's effects to the job's, its timer operations at its own time.
func (d *stepData) merge(e *drive.Effects, at int64) {
	d.eff.Outputs = append(d.eff.Outputs, e.Outputs...)
	for range e.Outputs {
		d.stamps = append(d.stamps, at)
	}
	d.eff.Results = append(d.eff.Results, e.Results...)
	for _, op := range e.TimerOps {
		op.AtMs = max(op.AtMs, at)
		d.eff.TimerOps = append(d.eff.TimerOps, op)
	}
	d.eff.Activations += e.Activations
	if e.Rewrite {
		d.eff.Rewrite, d.eff.Bag = true, e.Bag
	}
}

// ask asks keysched.Decide what call c does about the key's job, carries the answer out and
// reports whether the call is done; when not, the call runs its own step.
func (f *firing) ask(c keysched.Call) (bool, error) {
	j := f.jobs.Get(f.key)
	switch keysched.Decide(c, j.Running()) {
	case keysched.Buffer:
		j.MarkAppended()
		return true, nil
	case keysched.Leave:
		return true, nil
	case keysched.Join:
		if j.Extend(keysched.Timer{Tag: f.tag, AtMs: f.now}) {
			f.rt.firings.Inc(f.ctx, 1)
			f.await(j)
			return true, nil
		}
	case keysched.PassOver:
		if f.jobs.PassOver(f.bundle, f.key, j) {
			f.rt.passedOver.Inc(f.ctx, 1)
			f.await(j)
			return true, nil
		}
	case keysched.Run:
		return false, nil
	case keysched.Freeze:
		return true, f.freeze(j)
	}
	return false, f.settle(j)
}

// start starts the step of a firing on its own goroutine over the key's state (the buffer as
// read, raw, its backlog bl), and sets the await timer.
func (f *firing) start(raw [][]byte, bl *drive.Backlog) error {
	cell, err := f.readCell()
	if err != nil {
		return err
	}
	f.rt.firings.Inc(f.ctx, 1)
	j := keysched.NewJob[stepData](f.bundle.Epoch, keysched.Timer{Tag: f.tag, AtMs: f.now},
		fmt.Sprintf("%s%d", TagAwait, keysched.NewEpoch()), f.bundle.Touched(f.key))
	j.Data = stepData{cell: cell, bag: raw}
	f.jobs.Start(f.key, j, runSteps(context.WithoutCancel(f.ctx), f.rt.core(f.frame), f.key, bl))
	f.await(j)
	return nil
}

func (f *firing) await(j *stepJob) { f.frame.timer.Set(f.tp, toTime(f.now), timers.WithTag(j.Await())) }

// settle waits for a key's job and carries out its effects, if the key's state is still
// what the job read; otherwise the job is dropped and the firing runs again from the state.
func (f *firing) settle(j *stepJob) error {
	<-j.Done()
	f.jobs.Remove(f.key, j)
	if j.Err != nil {
		return j.Err
	}
	cell, bag, err := f.readCommitted()
	if err != nil {
		return err
	}
	d := &j.Data
	rebased, fresh := drive.Rebased(d.bag, bag, d.eff.Bag)
	if !fresh || !bytes.Equal(cell, d.cell) {
		f.rt.staleSteps.Inc(f.ctx, 1)
		return nil
	}
	for _, us := range d.latencies {
		f.rt.m.latency.Update(f.ctx, us)
	}
	l := &combined{cell: f.cell, raw: cell, haveRaw: true}
	f.layout, f.written = l, l
	e := d.eff
	if e.Rewrite {
		e.Bag, bag = rebased, packed(rebased)
	}
	f.bagNow = &bag
	return f.carry(j.At(), d.stamps, d.writes, nil, &e)
}

// readCommitted reads the key's state cell and ordering buffer through Beam.
func (f *firing) readCommitted() (cell []byte, bag [][]byte, err error) {
	if cell, _, err = f.cell.Read(f.sp); err != nil {
		return nil, nil, err
	}
	if bag, _, err = f.buffer.Read(f.sp); err != nil {
		return nil, nil, err
	}
	f.rt.stateReads.Inc(f.ctx, 2)
	return cell, bag, nil
}

// packed is a buffer holding one element b, or nothing when b is empty.
func packed(b []byte) [][]byte {
	if len(b) == 0 {
		return nil
	}
	return [][]byte{b}
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
