package pubsub

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

func init() {
	register.DoFn6x2[context.Context, *sdf.ManualWatermarkEstimator, beam.BundleFinalization, *sdf.LockRTracker, string, func(beam.EventTime, []byte), sdf.ProcessContinuation, error](&pullFn{})
	register.Emitter2[beam.EventTime, []byte]()
}

// endPos is the position whose claim stops the reader (a drain); one position is claimed
// per pull, so the reader never runs out of them.
const endPos = int64(math.MaxInt64 - 1)

// pullFn is the unbounded reader: a splittable DoFn over one subscription. Each call
// acknowledges what the previous call emitted (its bundle has committed, see
// readRestriction), claims one position, pulls once (unary Pull), emits the messages at their
// event time, holds their ack ids (extending their deadlines) until its bundle commits,
// updates the watermark and checkpoints. The bundle finalization acknowledges them as well,
// on runners that finalize every bundle. It is stateless: Prism rejects a DoFn that is both
// splittable and stateful.
type pullFn struct {
	MaxMessages                     int
	PullTimeoutMs, AckExtensionMs   int64
	PollIntervalMs                  int64
	MaxHoldMs, IdleLagMs            int64
	StartWatermarkMs                int64 // Options.StartWatermark; 0 for none
	EventTimeAttribute, EnvelopeIDs string
	Run                             string

	client *pubsub.Client
	acks   *acker
	pulls  beam.Counter

	mu sync.Mutex
	// newest is the newest event time pulled and when (wall clock) it was pulled: while the
	// subscription is idle the watermark advances from there at the wall clock's pace.
	newestMs int64
	newestAt time.Time
	// startedAt is when the reader first found the subscription idle before any message:
	// the start watermark advances from then.
	startedAt time.Time
}

func startMs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func newPullFn(o Options) *pullFn {
	o = o.resolved()
	return &pullFn{
		MaxMessages: o.MaxMessages, PullTimeoutMs: o.PullTimeout.Milliseconds(), PollIntervalMs: o.PollInterval.Milliseconds(),
		AckExtensionMs: o.AckExtension.Milliseconds(), MaxHoldMs: o.MaxHold.Milliseconds(),
		IdleLagMs: o.IdleLag.Milliseconds(), EventTimeAttribute: o.EventTimeAttribute,
		StartWatermarkMs: startMs(o.StartWatermark),
		EnvelopeIDs:      o.EnvelopeIDAttribute, Run: o.Run,
	}
}

func (f *pullFn) options() Options {
	return Options{EventTimeAttribute: f.EventTimeAttribute, EnvelopeIDAttribute: f.EnvelopeIDs}
}

func (f *pullFn) CreateInitialRestriction(string) readRestriction { return readRestriction{} }

func (f *pullFn) SplitRestriction(_ string, r readRestriction) []readRestriction {
	return []readRestriction{r}
}

func (f *pullFn) RestrictionSize(string, readRestriction) float64 { return 1 }

func (f *pullFn) CreateTracker(r readRestriction) *sdf.LockRTracker {
	return sdf.NewLockRTracker(&readTracker{rest: r})
}

// TruncateRestriction is what a runner's drain keeps of the restriction: the pending
// acknowledgements, and nothing to read.
func (f *pullFn) TruncateRestriction(rt *sdf.LockRTracker, _ string) readRestriction {
	r := rt.GetRestriction().(readRestriction)
	return readRestriction{Pos: r.Pos, Acks: r.Acks}
}

func (f *pullFn) InitialWatermarkEstimatorState(beam.EventTime, readRestriction, string) int64 {
	return int64(mtime.MinTimestamp)
}

func (f *pullFn) CreateWatermarkEstimator(ms int64) *sdf.ManualWatermarkEstimator {
	return &sdf.ManualWatermarkEstimator{State: mtime.Time(ms).ToTime()}
}

func (f *pullFn) WatermarkEstimatorState(e *sdf.ManualWatermarkEstimator) int64 {
	return int64(mtime.FromTime(e.State))
}

func (f *pullFn) Setup(ctx context.Context) error {
	f.pulls = beam.NewCounter("beamagents", "pubsub_pulls")
	return nil
}

func (f *pullFn) connect(ctx context.Context, sub string) error {
	if f.client != nil {
		return nil
	}
	n, err := ParseSubscription(sub)
	if err != nil {
		return err
	}
	c, err := pubsub.NewClient(context.WithoutCancel(ctx), n.Project)
	if err != nil {
		return err
	}
	f.client = c
	f.acks = newAcker(c.SubscriptionAdminClient, sub, time.Duration(f.AckExtensionMs)*time.Millisecond, time.Duration(f.MaxHoldMs)*time.Millisecond,
		max(30*time.Second, 10*time.Duration(f.PollIntervalMs)*time.Millisecond))
	return nil
}

func (f *pullFn) Teardown() {
	if f.acks != nil {
		f.acks.close()
	}
	if f.client != nil {
		f.client.Close()
	}
}

func (f *pullFn) ProcessElement(ctx context.Context, we *sdf.ManualWatermarkEstimator, bf beam.BundleFinalization, rt *sdf.LockRTracker, sub string, emit func(beam.EventTime, []byte)) (sdf.ProcessContinuation, error) {
	// Prism asks every bundle of this step to finalize; a bundle without a callback makes the
	// SDK log an error, so each registers at least this no-op one.
	bf.RegisterCallback(time.Minute, func() error { return nil })
	rest := rt.GetRestriction().(readRestriction)
	if err := f.connect(ctx, sub); err != nil {
		return sdf.StopProcessing(), err
	}
	f.acks.touch()
	f.acks.ackAsync(rest.Acks)
	run := lookupRun(f.Run)
	if run != nil && run.Draining() {
		rt.TryClaim(endPos) // ends the restriction cleanly: the reader is done
		return sdf.StopProcessing(), nil
	}
	if !rt.TryClaim(rest.Pos) {
		return sdf.StopProcessing(), rt.GetError()
	}
	f.pulls.Inc(ctx, 1)
	msgs, err := f.pull(ctx, sub)
	if err != nil {
		// Pub/Sub being unreachable is not a bundle failure: nothing was taken; try again.
		log.Warnf(ctx, "pubsub: pulling %s: %v", sub, err)
		return sdf.ResumeProcessingIn(time.Second), nil
	}
	if len(msgs) == 0 {
		f.idle(we, run)
		return sdf.ResumeProcessingIn(time.Duration(f.PollIntervalMs) * time.Millisecond), nil
	}
	ids := make([]string, 0, len(msgs))
	oldest, newest := int64(math.MaxInt64), int64(math.MinInt64)
	for _, rm := range msgs {
		m := rm.GetMessage()
		d, _ := DecodeMessage(m, f.options()) // a malformed message still has an event time
		raw, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			return sdf.StopProcessing(), err
		}
		emit(mtime.FromMilliseconds(d.EventMs), raw)
		ids = append(ids, rm.GetAckId())
		oldest, newest = min(oldest, d.EventMs), max(newest, d.EventMs)
	}
	add(run, func(r *Run) *atomic.Int64 { return &r.in }, int64(len(msgs)))
	f.acks.hold(ids)
	rt.Mu.Lock()
	rt.Rt.(*readTracker).next = ids
	rt.Mu.Unlock()
	bf.RegisterCallback(time.Duration(f.MaxHoldMs)*time.Millisecond, func() error {
		// Never an error: a failed finalization stops a Prism job, while a failed
		// acknowledgement only means a redelivery, which dedup absorbs.
		f.acks.ackAsync(ids)
		return nil
	})
	f.mu.Lock()
	if newest > f.newestMs || f.newestAt.IsZero() {
		f.newestMs = newest
	}
	f.newestAt = time.Now()
	f.mu.Unlock()
	f.advance(we, run, oldest)
	return sdf.ResumeProcessingIn(0), nil
}

// pull makes one unary Pull that returns at once, bounded by PullTimeout. It does not wait
// for messages on the server: a waiting Pull that its caller cancels can lose the messages
// the server handed it (they stay leased until their ack deadline runs out), so the reader
// polls instead (PollInterval).
func (f *pullFn) pull(ctx context.Context, sub string) ([]*pubsubpb.ReceivedMessage, error) {
	pctx, cancel := context.WithTimeout(ctx, time.Duration(f.PullTimeoutMs)*time.Millisecond)
	defer cancel()
	//lint:ignore SA1019 returning at once is the point: see above.
	resp, err := f.client.SubscriptionAdminClient.Pull(pctx, &pubsubpb.PullRequest{Subscription: sub, MaxMessages: int32(f.MaxMessages), ReturnImmediately: true})
	if err != nil {
		if ctx.Err() == nil && (errors.Is(pctx.Err(), context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded) {
			return nil, nil
		}
		return nil, err
	}
	return resp.GetReceivedMessages(), nil
}

// idle advances the watermark of an idle subscription from the newest event time pulled, at
// the wall clock's pace, less IdleLag. Before the first message it advances the same way
// from StartWatermarkMs, counted from the first idle pull, or stays where it is without one.
func (f *pullFn) idle(we *sdf.ManualWatermarkEstimator, run *Run) {
	f.mu.Lock()
	newest, at := f.newestMs, f.newestAt
	if at.IsZero() && f.StartWatermarkMs != 0 {
		if f.startedAt.IsZero() {
			f.startedAt = time.Now()
		}
		newest, at = f.StartWatermarkMs+f.IdleLagMs, f.startedAt // the start is already lagged
	}
	f.mu.Unlock()
	if at.IsZero() {
		return
	}
	f.advance(we, run, newest+time.Since(at).Milliseconds()-f.IdleLagMs)
}

// advance moves the watermark forward (never back) to ms.
func (f *pullFn) advance(we *sdf.ManualWatermarkEstimator, run *Run, ms int64) {
	cur := int64(mtime.FromTime(we.CurrentWatermark()))
	if ms <= cur {
		return
	}
	we.UpdateWatermark(mtime.Time(ms).ToTime())
	if run != nil {
		run.watermarkMs.Store(ms)
	}
}
