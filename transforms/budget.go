package transforms

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/budget"
	"github.com/beamagents/beamagents/ledger"
)

func init() {
	register.DoFn5x0[context.Context, []byte, []byte, func([]byte, []byte), func([]byte, []byte)](&byTenantFn{})
	register.DoFn7x1[context.Context, beam.EventTime, state.Provider, timers.Provider, []byte, []byte, func(beam.EventTime, []byte, []byte), error](&admitFn{})
	register.DoFn4x1[context.Context, []byte, func(*[]byte) bool, func([]byte, []byte), error](&admitAllFn{})
	register.Emitter2[[]byte, []byte]()
	register.Emitter3[beam.EventTime, []byte, []byte]()
}

// Stable names of the tenant budget's admission stage (docs/budgets.md): pinned in the update
// manifest when the agent declares a budget, absent otherwise.
const (
	AdmitScope    = "AdmitTenants"     // scope of the admission, before the keyed step
	TallyCellID   = "tenant_tally.v1"  // a tenant's window and tokens granted (budget.Tally)
	AdmitBufferID = "tenant_buffer.v1" // a tenant's events waiting for the watermark (packed budget frames)
	AdmitTimerID  = "admit.v1"         // the one timer family; tags order:<ms>
)

// admitTenants admits the agent's external events against its tenant budget before the
// keyed step, when the agent declares one (agent.Definition.Budget); otherwise keyed is
// returned as it is and the pipeline has no admission stage. The stage is keyed by tenant:
// streaming (bounded false) it buffers each tenant's events until the watermark passes
// them and admits them in event-time order, keeping the tenant's tally in keyed state;
// the bounded fast path groups each tenant's whole input and admits it in one call. Both
// run budget.Admission, and both hand the keyed step the same stamped envelopes.
func admitTenants(s beam.Scope, o Options, keyed beam.PCollection, bounded bool) (beam.PCollection, error) {
	a, err := agent.Build(o.Agent, o.Config)
	if err != nil {
		return beam.PCollection{}, err
	}
	if adm, err := a.Admission(o.Prices); adm == nil || err != nil {
		return keyed, err // a cost budget the launch's prices cannot reserve is refused here, not at run time
	}
	s = s.Scope(AdmitScope)
	byTenant, pass := beam.ParDo2(s, &byTenantFn{Agent: o.Agent, Config: o.Config, Prices: o.Prices}, keyed)
	var admitted beam.PCollection
	if bounded {
		admitted = beam.ParDo(s, &admitAllFn{Agent: o.Agent, Config: o.Config, Prices: o.Prices}, beam.GroupByKey(s, byTenant))
	} else {
		admitted = beam.ParDo(s, &admitFn{Agent: o.Agent, Config: o.Config, Prices: o.Prices, Resolution: o.OrderResolutionMs,
			Tally: state.MakeValueState[[]byte](TallyCellID), Buffer: state.MakeBagState[[]byte](AdmitBufferID),
			Timer: timers.InEventTime(AdmitTimerID)}, byTenant)
	}
	return beam.Flatten(s, admitted, pass), nil
}

// admission builds the agent's admission on a worker.
func admission(name string, config []byte, prices ledger.Table) (*agent.Agent, *budget.Admission, error) {
	a, err := agent.Build(name, config)
	if err != nil {
		return nil, nil, err
	}
	adm, err := a.Admission(prices)
	if err != nil {
		return nil, nil, err
	}
	if adm == nil {
		return nil, nil, fmt.Errorf("agent %s declares no tenant budget", name)
	}
	return a, adm, nil
}

// byTenantFn keys the external events by tenant, each a budget frame of its entity key, event
// time and envelope; every other input passes on to the keyed step as it is.
type byTenantFn struct {
	Agent  string
	Config []byte
	Prices ledger.Table

	a *agent.Agent
}

func (f *byTenantFn) Setup() (err error) {
	f.a, _, err = admission(f.Agent, f.Config, f.Prices)
	return err
}

func (f *byTenantFn) ProcessElement(_ context.Context, key, value []byte, byTenant, pass func([]byte, []byte)) {
	env := budget.Admissible(value)
	if env == nil {
		pass(key, value)
		return
	}
	byTenant([]byte(f.a.Tenant(string(key))), budget.MarshalFrame(budget.Event{Key: key, AtMs: env.GetEventTimeMs(), Value: value}))
}

// admitFn is the streaming admission: a tenant's events wait in its buffer (elements of
// packed frames, budget.AppendPacked) until the
// watermark passes their event time (a timer per ordering bucket, as RunAgent's ordering),
// then run through budget.Admission.Run in event-time order against the tenant's tally.
// Parked events go back to the buffer at their new time.
type admitFn struct {
	Agent      string
	Config     []byte
	Prices     ledger.Table
	Resolution int64

	Tally  state.Value[[]byte]
	Buffer state.Bag[[]byte]
	Timer  timers.EventTime

	adm *budget.Admission
}

func (f *admitFn) Setup() (err error) {
	_, f.adm, err = admission(f.Agent, f.Config, f.Prices)
	return err
}

func (f *admitFn) ProcessElement(_ context.Context, _ beam.EventTime, sp state.Provider, tp timers.Provider, _, frame []byte, _ func(beam.EventTime, []byte, []byte)) error {
	ev, err := budget.DecodeFrame(frame)
	if err != nil {
		return err
	}
	if err := f.Buffer.Add(sp, budget.AppendPacked(nil, ev)); err != nil {
		return err
	}
	f.wake(tp, ev.AtMs)
	return nil
}

// wake sets the ordering timer of the bucket of event time at.
func (f *admitFn) wake(tp timers.Provider, at int64) {
	b := admitBucket(at, f.Resolution)
	f.Timer.Set(tp, mtime.FromMilliseconds(b).ToTime(), timers.WithTag("order:"+strconv.FormatInt(b, 10)))
}

func (f *admitFn) OnTimer(_ context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, tenant []byte, _ timers.Context, emit func(beam.EventTime, []byte, []byte)) error {
	now := mtime.Time(ts).Milliseconds()
	raw, _, err := f.Buffer.Read(sp)
	if err != nil {
		return err
	}
	var due, rest []budget.Event
	for _, b := range raw {
		evs, err := budget.ParsePacked(b)
		if err != nil {
			return fmt.Errorf("tenant %q: admission buffer: %w", tenant, err)
		}
		for _, ev := range evs {
			if ev.AtMs <= now {
				due = append(due, ev)
			} else {
				rest = append(rest, ev)
			}
		}
	}
	if len(due) == 0 {
		return nil
	}
	cell, _, err := f.Tally.Read(sp)
	if err != nil {
		return err
	}
	t, err := budget.DecodeTally(cell)
	if err != nil {
		return fmt.Errorf("tenant %q: %w", tenant, err)
	}
	out, parked := f.adm.Run(&t, string(tenant), due, now)
	if err := f.Tally.Write(sp, budget.MarshalTally(t)); err != nil {
		return err
	}
	// What is left is rewritten as one element: one state call, however many events wait.
	if err := f.Buffer.Clear(sp); err != nil {
		return err
	}
	var left []byte
	for _, ev := range append(rest, parked...) {
		left = budget.AppendPacked(left, ev)
	}
	if len(left) > 0 {
		if err := f.Buffer.Add(sp, left); err != nil {
			return err
		}
	}
	for _, ev := range parked {
		f.wake(tp, ev.AtMs)
	}
	for _, ev := range out {
		emit(ts, ev.Key, ev.Value)
	}
	return nil
}

// admitBucket is event time at rounded up to the ordering resolution.
func admitBucket(at, resolution int64) int64 {
	if resolution <= 0 {
		resolution = DefaultOrderMs
	}
	b := at / resolution * resolution
	if b < at {
		b += resolution
	}
	return b
}

// admitAllFn is the bounded admission: a tenant's whole input at once, from an empty tally.
type admitAllFn struct {
	Agent  string
	Config []byte
	Prices ledger.Table

	adm *budget.Admission
}

func (f *admitAllFn) Setup() (err error) {
	_, f.adm, err = admission(f.Agent, f.Config, f.Prices)
	return err
}

func (f *admitAllFn) ProcessElement(_ context.Context, tenant []byte, frames func(*[]byte) bool, emit func([]byte, []byte)) error {
	var evs []budget.Event
	var b []byte
	for frames(&b) {
		ev, err := budget.DecodeFrame(slices.Clone(b))
		if err != nil {
			return err
		}
		evs = append(evs, ev)
	}
	out, _ := f.adm.Run(&budget.Tally{}, string(tenant), evs, math.MaxInt64)
	for _, ev := range out {
		emit(ev.Key, ev.Value)
	}
	return nil
}
