package budget

import (
	"bytes"
	"cmp"
	"maps"
	"math"
	"slices"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// Admission admits one agent's external events against its tenants' budgets.
type Admission struct {
	Budget Budget
	// Grant is what each admitted activation is granted: the agent's per-activation token
	// budget (agent.Limits.MaxTokens).
	Grant int64
	// Reserve is what each grant takes of a cost budget (Budget.CostMicros), in micro-units
	// (Reservation at the launch's price table); 0 for a token budget. NewAdmission sets it.
	Reserve int64
}

// charge is what one grant takes of the window's budget, and limit the window's budget: in
// tokens for a token budget, in micro-units for a cost budget.
func (a Admission) charge() (charge, limit int64) {
	if a.Budget.IsCost() {
		return a.Reserve, a.Budget.CostMicros
	}
	return a.Grant, a.Budget.Tokens
}

// Tally is a tenant's admission state: the window it admits in and the tokens granted in it.
// The zero Tally has granted nothing.
type Tally struct {
	WindowMs int64 // start of the current window
	Granted  int64 // tokens granted in it (micro-units reserved, for a cost budget)
	Started  bool  // whether any event was admitted (WindowMs is meaningful)
}

// Event is one keyed input value: an entity key, its value (a binary AgentEnvelope, or any
// other input of the keyed step, which the admission passes on as it is) and its event time.
type Event struct {
	Key   []byte
	AtMs  int64
	Value []byte
	// FromMs is the event time a parked event came with (0 for an event not parked): parked
	// events run first come, first served.
	FromMs int64
}

// compareEvents orders events by event time, then by the time they came with (parked events
// first come, first served), then by their bytes (the entity key first).
func compareEvents(x, y Event) int {
	return cmp.Or(cmp.Compare(x.AtMs, y.AtMs), cmp.Compare(x.from(), y.from()), bytes.Compare(x.Key, y.Key), bytes.Compare(x.Value, y.Value))
}

func (e Event) from() int64 {
	if e.FromMs != 0 {
		return e.FromMs
	}
	return e.AtMs
}

// Admissible decodes value when the admission decides on it: a binary envelope of an external
// event. Tool results, approvals, signals and export requests continue or read a key and
// are not admitted; a restore or a value that does not decode passes on for the keyed step
// to handle.
func Admissible(value []byte) *pb.AgentEnvelope {
	env := &pb.AgentEnvelope{}
	if len(value) == 0 || proto.Unmarshal(value, env) != nil || env.GetPayload() == nil {
		return nil
	}
	if _, ok := env.GetPayload().(*pb.AgentEnvelope_ExternalEvent); !ok {
		return nil
	}
	return env
}

// admit decides one event of tenant at event time atMs against t, which it advances: the
// event's window is the tally's when the event is late for it (its window started before
// the tally's), else the event's own, which resets the tally. It returns the grant; a nil
// grant with park > 0 moves the event to event time park (DegradePark).
func (a Admission) admit(t *Tally, tenant string, atMs int64) (g *pb.BudgetGrant, park int64) {
	w := a.Budget.WindowOf(atMs)
	if !t.Started || w > t.WindowMs {
		*t = Tally{WindowMs: w, Started: true}
	}
	g = &pb.BudgetGrant{Tenant: tenant, WindowStartMs: t.WindowMs, WindowMs: a.Budget.PerMs()}
	if charge, limit := a.charge(); charge > 0 && t.Granted <= limit-charge {
		t.Granted += charge
		g.Tokens = a.Grant
		return g, 0
	}
	if _, ok := a.Budget.Rule().(DegradePark); ok {
		return nil, t.WindowMs + a.Budget.PerMs()
	}
	g.OverBudget = true
	return g, 0
}

// Run admits a tenant's due events, queue (each Admissible), in event-time order, against t.
// It returns the events to pass on, each stamped with its grant, and the events parked to
// a time after upTo, to run again when their time comes; an event parked to upTo or before
// is admitted in this run, in its place in the order.
func (a Admission) Run(t *Tally, tenant string, queue []Event, upTo int64) (out, parked []Event) {
	queue = slices.Clone(queue)
	slices.SortFunc(queue, compareEvents)
	for len(queue) > 0 {
		ev := queue[0]
		queue = queue[1:]
		env := Admissible(ev.Value)
		if env == nil {
			out = append(out, ev)
			continue
		}
		g, park := a.admit(t, tenant, ev.AtMs)
		if g == nil {
			moved := parkTo(env, tenant, park)
			moved.Key = ev.Key
			if park > upTo {
				parked = append(parked, moved)
				continue
			}
			i, _ := slices.BinarySearchFunc(queue, moved, compareEvents)
			queue = slices.Insert(queue, i, moved)
			continue
		}
		out = append(out, Event{Key: ev.Key, AtMs: ev.AtMs, Value: stamp(env, g)})
	}
	return out, parked
}

// AdmitAll admits a whole bounded input (the keyed step's input values, in any order): the
// external events of each tenant (tenantOf of their key) in event-time order, from an
// empty tally, parked events admitted in their later windows. Every other value passes on as
// it is. Each tenant's stamped events follow in order, tenants in the order of their names,
// then the values passed on, in the input's order.
func (a Admission) AdmitAll(tenantOf func(key string) string, events []Event) []Event {
	byTenant := map[string][]Event{}
	var rest []Event
	for _, ev := range events {
		if Admissible(ev.Value) == nil {
			rest = append(rest, ev)
			continue
		}
		tn := tenantOf(string(ev.Key))
		byTenant[tn] = append(byTenant[tn], ev)
	}
	var out []Event
	for _, tn := range slices.Sorted(maps.Keys(byTenant)) {
		admitted, _ := a.Run(&Tally{}, tn, byTenant[tn], math.MaxInt64)
		out = append(out, admitted...)
	}
	return append(out, rest...)
}

// parkTo is the event env moved to event time at: its envelope's event time becomes at and
// a grant without tokens records the time it came with (kept through later parkings); the
// grant is decided again when it runs.
func parkTo(env *pb.AgentEnvelope, tenant string, at int64) Event {
	from := env.GetEventTimeMs()
	if prev := env.GetBudgetGrant().GetParkedFromMs(); prev != 0 {
		from = prev
	}
	env = proto.CloneOf(env)
	env.EventTimeMs = at
	env.BudgetGrant = &pb.BudgetGrant{Tenant: tenant, ParkedFromMs: from}
	return Event{AtMs: at, Value: marshal(env), FromMs: from}
}

// stamp is env's bytes with grant g (keeping the parked-from time of a parked event).
func stamp(env *pb.AgentEnvelope, g *pb.BudgetGrant) []byte {
	g.ParkedFromMs = env.GetBudgetGrant().GetParkedFromMs()
	env = proto.CloneOf(env)
	env.BudgetGrant = g
	return marshal(env)
}

// marshal serializes deterministically. An envelope that was decoded re-encodes, so there is
// no error to report.
func marshal(m proto.Message) []byte {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	return b
}

// Unstamped returns env as it came in: without its grant, at the event time it came with
// when it was parked. It is env itself when env carries no grant. A dead letter carries
// the event so, to be redriven as any input (an input with a grant is refused).
func Unstamped(env *pb.AgentEnvelope) *pb.AgentEnvelope {
	g := env.GetBudgetGrant()
	if g == nil {
		return env
	}
	env = proto.CloneOf(env)
	env.BudgetGrant = nil
	if g.GetParkedFromMs() != 0 {
		env.EventTimeMs = g.GetParkedFromMs()
	}
	return env
}
