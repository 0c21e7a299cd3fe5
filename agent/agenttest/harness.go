package agenttest

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/jsontext"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/statecodec"
)

// DefaultStartMs is the event time a Harness starts at unless Options.StartMs says otherwise:
// 2026-01-01T00:00:00Z.
const DefaultStartMs = int64(1767225600000)

// handlerAdapter names the journal form of a handler agent's suspension (a HandlerJournal),
// as the continuation cell records it (docs/wire-and-state.md).
const handlerAdapter = "beamagents.agent.handler.v1"

// Options configure a Harness.
type Options struct {
	// Model answers every model call instead of the agent's own model, under the agent's model
	// id (Agent.WithModel); nil keeps the agent's model.
	Model model.Model
	// StartMs is the event time of the first input; 0 selects DefaultStartMs.
	StartMs int64
}

// Harness drives one agent over any number of keys in memory. It is not safe for concurrent
// use; its methods fail the test (t.Fatal) only on a misuse of the harness, never because the
// agent failed: an input the agent fails is a dead letter in the outputs, as in a pipeline.
type Harness struct {
	t    testing.TB
	a    *agent.Agent
	kr   *intent.Keyring
	deps host.Deps
	now  int64
	keys map[string]*key
}

// key is one entity's committed cells, armed timers and everything emitted for it.
type key struct {
	id      []byte
	state   host.MapStore
	timers  map[string]int64 // by tag: the event time it fires at
	out     host.Outputs
	emitted []*pb.ToolIntent // every intent, in emission order
}

// New returns a harness for a, at event time opts.StartMs, with a keyring of its own that
// signs intents and answers.
func New(t testing.TB, a *agent.Agent, opts Options) *Harness {
	t.Helper()
	if opts.Model != nil {
		swapped, err := a.WithModel(opts.Model, "", false)
		if err != nil {
			t.Fatalf("agenttest: %v", err)
		}
		a = swapped
	}
	kr, err := intent.NewKeyring("agenttest", map[string][]byte{"agenttest": bytes.Repeat([]byte("k"), 32)})
	if err != nil {
		t.Fatalf("agenttest: %v", err)
	}
	mode := intent.ModeRequire
	h := &Harness{t: t, a: a, kr: kr, now: opts.StartMs, keys: map[string]*key{},
		deps: host.Deps{Keyring: kr, VerifyResults: &mode}}
	if h.now == 0 {
		h.now = DefaultStartMs
	}
	return h
}

// Agent returns the agent the harness drives (with Options.Model swapped in).
func (h *Harness) Agent() *agent.Agent { return h.a }

// Keyring returns the keyring that signs the agent's intents and the harness's answers.
func (h *Harness) Keyring() *intent.Keyring { return h.kr }

// Now returns the harness's event time, in milliseconds since the epoch.
func (h *Harness) Now() int64 { return h.now }

// Send delivers an external event to the key at the current event time and returns what the
// core did with it.
func (h *Harness) Send(entity string, event []byte) *host.Result {
	h.t.Helper()
	return h.Deliver(&pb.AgentEnvelope{EntityKey: []byte(entity), Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: event}})
}

// Deliver delivers any envelope (an export request, a hand-made or unsigned answer) to its
// key; an envelope without an event time gets the current one. A sharded agent's external
// event goes to its sub-key, as in a pipeline (agent.Definition.Shards).
func (h *Harness) Deliver(env *pb.AgentEnvelope) *host.Result {
	h.t.Helper()
	if env.GetEventTimeMs() == 0 {
		env = proto.CloneOf(env)
		env.EventTimeMs = h.now
	}
	env = h.routed(env)
	k := h.key(env.GetEntityKey())
	res, _ := host.Activate(context.Background(), h.a, k.state, env, h.deps) // a failure is its dead letter
	k.apply(res)
	return res
}

// Answer delivers the successful result of tool intent ti with payload, signed for ti.
func (h *Harness) Answer(ti *pb.ToolIntent, payload []byte) *host.Result {
	h.t.Helper()
	return h.result(ti, &pb.ToolResult{Status: pb.ToolResult_OK, Payload: payload})
}

// Fail delivers the failure of tool intent ti with message, signed for ti.
func (h *Harness) Fail(ti *pb.ToolIntent, message string) *host.Result {
	h.t.Helper()
	return h.result(ti, &pb.ToolResult{Status: pb.ToolResult_ERROR, ErrorMessage: message})
}

func (h *Harness) result(ti *pb.ToolIntent, r *pb.ToolResult) *host.Result {
	h.t.Helper()
	if ti.GetKind() != pb.ToolIntent_TOOL {
		h.t.Fatalf("agenttest: intent %s is an %s intent: decide it with Approve or Reject", ti.GetIntentId(), ti.GetKind())
	}
	r.IntentId, r.EntityKey, r.Seq, r.CompletedAtMs = ti.GetIntentId(), ti.GetEntityKey(), ti.GetSeq(), h.now
	if err := intent.SignResult(r, ti, h.kr); err != nil {
		h.t.Fatalf("agenttest: signing the result of %s: %v", ti.GetIntentId(), err)
	}
	return h.Deliver(&pb.AgentEnvelope{EntityKey: ti.GetEntityKey(), Payload: &pb.AgentEnvelope_ToolResult{ToolResult: r}})
}

// Approve delivers approver's approval of APPROVAL intent ti, signed for ti.
func (h *Harness) Approve(ti *pb.ToolIntent, approver string) *host.Result {
	h.t.Helper()
	return h.decide(ti, approver, true)
}

// Reject delivers approver's rejection of APPROVAL intent ti, signed for ti.
func (h *Harness) Reject(ti *pb.ToolIntent, approver string) *host.Result {
	h.t.Helper()
	return h.decide(ti, approver, false)
}

func (h *Harness) decide(ti *pb.ToolIntent, approver string, approved bool) *host.Result {
	h.t.Helper()
	if ti.GetKind() != pb.ToolIntent_APPROVAL {
		h.t.Fatalf("agenttest: intent %s is a %s intent: answer it with Answer or Fail", ti.GetIntentId(), ti.GetKind())
	}
	ap := &pb.AgentEnvelope_Approval{IntentId: ti.GetIntentId(), Approved: approved, Approver: approver, DecidedAtMs: h.now}
	if err := intent.SignApproval(ap, ti, h.kr); err != nil {
		h.t.Fatalf("agenttest: signing the decision of %s: %v", ti.GetIntentId(), err)
	}
	return h.Deliver(&pb.AgentEnvelope{EntityKey: ti.GetEntityKey(), Payload: &pb.AgentEnvelope_Approval_{Approval: ap}})
}

// Signal delivers the signal name with id and payload to key, now, signed with the harness's
// keyring (as Deliver, a handler's Await or AwaitBy of that name takes it).
func (h *Harness) Signal(key, name, id string, payload []byte) *host.Result {
	h.t.Helper()
	sig := &pb.AgentEnvelope_Signal{Name: name, SignalId: id, Payload: payload, Sender: "agenttest", SentAtMs: h.now, EntityKey: []byte(key)}
	if err := intent.SignSignal(sig, h.kr); err != nil {
		h.t.Fatalf("agenttest: signing signal %s: %v", id, err)
	}
	return h.Deliver(&pb.AgentEnvelope{EntityKey: []byte(key), Payload: &pb.AgentEnvelope_Signal_{Signal: sig}})
}

// Advance lets event time pass by d: every timer of every key due by the new time fires,
// earliest first (a suspension's deadline before the idle TTL at the same time, then keys in
// byte order), each at its own time, as the watermark passing them fires them in a pipeline.
// It returns the results of the firings in order.
func (h *Harness) Advance(d time.Duration) []*host.Result {
	h.t.Helper()
	if d < 0 {
		h.t.Fatalf("agenttest: Advance(%v): event time does not go back", d)
	}
	until := h.now + d.Milliseconds()
	var out []*host.Result
	for {
		k, tag, at, ok := h.nextTimer(until)
		if !ok {
			break
		}
		delete(k.timers, tag)
		h.now = max(h.now, at)
		res, _ := host.Fire(context.Background(), h.a, k.state, k.id, tag, at, h.deps) // a failure is its dead letter
		k.apply(res)
		out = append(out, res)
	}
	h.now = until
	return out
}

// nextTimer returns the first timer due by until.
func (h *Harness) nextTimer(until int64) (k *key, tag string, at int64, ok bool) {
	for _, name := range slices.Sorted(maps.Keys(h.keys)) {
		c := h.keys[name]
		for _, t := range []string{host.TagDeadline, host.TagTTL} {
			when, armed := c.timers[t]
			if armed && when <= until && (!ok || when < at) {
				k, tag, at, ok = c, t, when, true
			}
		}
	}
	return k, tag, at, ok
}

// Timers returns the key's armed timers: event time by tag (host.TagDeadline, host.TagTTL).
func (h *Harness) Timers(entity string) map[string]int64 {
	return maps.Clone(h.key([]byte(entity)).timers)
}

// Outputs returns everything emitted for the key so far, in emission order.
func (h *Harness) Outputs(entity string) host.Outputs {
	return h.key([]byte(entity)).out
}

// Pending returns the key's intents that still wait for an answer or a decision, in emission
// order.
func (h *Harness) Pending(entity string) []*pb.ToolIntent {
	h.t.Helper()
	k := h.key([]byte(entity))
	p, err := statecodec.DecodePending(k.state[statecodec.CellPending])
	if err != nil {
		h.t.Fatalf("agenttest: the pending intents of %q: %v", entity, err)
	}
	var out []*pb.ToolIntent
	for _, ti := range k.emitted {
		if _, ok := p.Get(ti.GetIntentId()); ok && !slices.ContainsFunc(out, func(o *pb.ToolIntent) bool { return o.GetIntentId() == ti.GetIntentId() }) {
			out = append(out, ti)
		}
	}
	return out
}

// Intent returns the key's one pending intent for tool (a call, or the approval that gates
// it); the test fails unless exactly one is pending.
func (h *Harness) Intent(entity, tool string) *pb.ToolIntent {
	h.t.Helper()
	var found []*pb.ToolIntent
	for _, ti := range h.Pending(entity) {
		if ti.GetToolName() == tool {
			found = append(found, ti)
		}
	}
	if len(found) != 1 {
		h.t.Fatalf("agenttest: key %q has %d pending intents for %s, want 1 (pending: %s)", entity, len(found), tool, describe(h.Pending(entity)))
	}
	return found[0]
}

func describe(tis []*pb.ToolIntent) string {
	var parts []string
	for _, ti := range tis {
		parts = append(parts, ti.GetKind().String()+" "+ti.GetToolName())
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Replies returns the messages of the key's final replies, in order.
func (h *Harness) Replies(entity string) []string {
	h.t.Helper()
	var out []string
	for _, f := range h.Outputs(entity).Finals {
		var action struct {
			Message string `json:"message"`
		}
		if err := jsontext.Decode(f.GetActionJson(), &action, jsontext.DecodeOptions{}); err != nil {
			h.t.Fatalf("agenttest: final reply of %q: %v", entity, err)
		}
		out = append(out, action.Message)
	}
	return out
}

// Journal returns the journal of the key's suspended activation, nil when the key is not
// suspended. It is a handler agent's: the test fails for an agent of bindings, whose
// suspensions keep their steps in another form.
func (h *Harness) Journal(entity string) *pb.HandlerJournal {
	h.t.Helper()
	c, err := statecodec.ContinuationOptions{Schema: h.a.Limits().Memory.Schema}.Decode(h.key([]byte(entity)).state[statecodec.CellContinuation])
	if err != nil {
		h.t.Fatalf("agenttest: the continuation of %q: %v", entity, err)
	}
	if c == nil {
		return nil
	}
	if c.Adapter() != handlerAdapter {
		h.t.Fatalf("agenttest: key %q is suspended in the %s form, not a handler's journal", entity, c.Adapter())
	}
	j := &pb.HandlerJournal{}
	if err := proto.Unmarshal(c.Snapshot(), j); err != nil {
		h.t.Fatalf("agenttest: the journal of %q: %v", entity, err)
	}
	return j
}

// Memory returns the key's working memory (rings included, under their own keys).
func (h *Harness) Memory(entity string) map[string][]byte {
	h.t.Helper()
	m, err := statecodec.DecodeMemory(h.key([]byte(entity)).state[statecodec.CellMemory], h.a.Limits().Memory)
	if err != nil {
		h.t.Fatalf("agenttest: the memory of %q: %v", entity, err)
	}
	return maps.Collect(m.All())
}

// State returns a copy of the key's committed cells.
func (h *Harness) State(entity string) host.MapStore {
	return maps.Clone(h.key([]byte(entity)).state)
}

func (h *Harness) key(id []byte) *key {
	k, ok := h.keys[string(id)]
	if !ok {
		k = &key{id: bytes.Clone(id), state: host.MapStore{}, timers: map[string]int64{}}
		h.keys[string(id)] = k
	}
	return k
}

// apply commits res to the key and keeps its outputs and timers.
func (k *key) apply(res *host.Result) {
	if res == nil {
		return
	}
	k.state.Apply(res)
	for _, op := range res.Timers {
		if op.Set {
			k.timers[op.Tag] = op.AtMs
		} else {
			delete(k.timers, op.Tag)
		}
	}
	k.emitted = append(k.emitted, res.Intents...)
	k.out.Intents = append(k.out.Intents, res.Intents...)
	k.out.Traces = append(k.out.Traces, res.Traces...)
	k.out.Finals = append(k.out.Finals, res.Finals...)
	k.out.Snapshots = append(k.out.Snapshots, res.Snapshots...)
	k.out.DeadLetters = append(k.out.DeadLetters, res.DeadLetters...)
}
