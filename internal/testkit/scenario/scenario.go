package scenario

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/beamagents/beamagents/ledger"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/records"
)

// idleTTLMs is agent.Limits' default IdleTTLMs, 30 days: a gap longer than it expires a
// key's memory and replay cache.
const idleTTLMs = int64(30 * 24 * 60 * 60 * 1000)

// T0 is the event time the generated traffic starts at.
const T0 = int64(1767225600000)

// Set is the traffic of n scenarios, each on its own keys.
type Set struct {
	// Records are binary envelope records in arrival order (shuffled), malformed ones included.
	Records [][]byte
	// Snapshots are binary StateSnapshot records to restore before the records run.
	Snapshots [][]byte
	// Script is the model script (model.Scripted) answering every key's requests.
	Script []byte
	// Keys lists every entity key, in generation order.
	Keys []string
	// Prices is the price table the set is run with (transforms.Options.Prices), which a
	// tenant cost budget reserves its grants at; empty for most sets.
	Prices ledger.Table
}

// plan is what the model answers for one activation of a key.
type plan int

const (
	planReply plan = iota
	planRemember
	planLookup
	planRefund
	planGarbage
	planUnscripted
)

// Generator decides the traffic of one seed. Script is known before Build runs, so the agent
// that Build needs for the restored keys' histories can be built from it.
type Generator struct {
	rng    *rand.Rand
	script []byte
	keys   []*keyPlan
}

type keyPlan struct {
	key     string
	plans   []plan
	history []*pb.AgentEnvelope // run before a restore, when restore is set
	restore bool
	envs    []*pb.AgentEnvelope
}

// New decides the traffic of n scenarios from seed.
func New(seed uint64, n int) (*Generator, error) {
	s, err := support.Schema()
	if err != nil {
		return nil, err
	}
	g := &Generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	for i := range n {
		for k := range 1 + g.rng.IntN(3) {
			g.keys = append(g.keys, g.keyPlan(fmt.Sprintf("s%d-%04d-k%d", seed%1000, i, k)))
		}
	}
	for _, kp := range g.keys {
		for seq, p := range kp.plans {
			g.script = append(g.script, rules(s, kp.key, int64(seq), p)...)
		}
	}
	return g, nil
}

// Script is the model script of the traffic.
func (g *Generator) Script() []byte { return g.script }

// Build makes the traffic. d runs the histories of restored keys (their snapshots are the
// exports those histories end with); it must run the support agent over Script.
func (g *Generator) Build(ctx context.Context, d *drive.Driver) (*Set, error) {
	set := &Set{Script: g.script}
	for _, kp := range g.keys {
		set.Keys = append(set.Keys, kp.key)
		if kp.restore {
			snap, err := g.snapshot(ctx, d, kp)
			if err != nil {
				return nil, err
			}
			set.Snapshots = append(set.Snapshots, snap)
			if g.rng.IntN(4) == 0 { // delivered twice: the second finds state and is refused
				set.Snapshots = append(set.Snapshots, snap)
			}
		}
		for _, e := range kp.envs {
			b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(e)
			set.Records = append(set.Records, b)
			if g.rng.IntN(12) == 0 { // a duplicate delivery
				set.Records = append(set.Records, b)
			}
		}
		if g.rng.IntN(10) == 0 {
			set.Records = append(set.Records, g.malformed(kp.key))
		}
	}
	set.Snapshots = append(set.Snapshots, []byte("not a snapshot"))
	g.rng.Shuffle(len(set.Records), func(i, j int) { set.Records[i], set.Records[j] = set.Records[j], set.Records[i] })
	return set, nil
}

func (g *Generator) snapshot(ctx context.Context, d *drive.Driver, kp *keyPlan) ([]byte, error) {
	var values [][]byte
	for _, e := range kp.history {
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(e)
		values = append(values, b)
	}
	var snap []byte
	d.Run(ctx, []byte(kp.key), values, func(kind int64, b []byte) {
		if kind == records.OutSnapshot {
			snap = b
		}
	})
	if snap == nil {
		return nil, fmt.Errorf("scenario: the history of %s exported nothing", kp.key)
	}
	return snap, nil
}

func (g *Generator) malformed(key string) []byte {
	switch g.rng.IntN(3) {
	case 0:
		return []byte{0xff, 0x01, byte(g.rng.IntN(256))}
	case 1: // no payload
		b, _ := proto.Marshal(&pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: T0})
		return b
	}
	b, _ := proto.Marshal(&pb.AgentEnvelope{EventTimeMs: T0, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("no key")}})
	return b
}

// keyPlan decides one key: its activations' plans and its envelopes.
func (g *Generator) keyPlan(key string) *keyPlan {
	kp := &keyPlan{key: key}
	events := 1 + g.rng.IntN(4)
	t := T0 + int64(g.rng.IntN(5000))
	if g.rng.IntN(6) == 0 {
		kp.restore = true
		hist := 1 + g.rng.IntN(2)
		for i := range hist {
			kp.plans = append(kp.plans, g.plan())
			kp.history = append(kp.history, g.activation(key, int64(i), kp.plans[i], &t, true)...)
		}
		t += 1000
		kp.history = append(kp.history, export(key, t, "history"))
		t += 1000
		events += hist
		for i := hist; i < events; i++ {
			kp.plans = append(kp.plans, g.plan())
			kp.envs = append(kp.envs, g.activation(key, int64(i), kp.plans[i], &t, false)...)
		}
	} else {
		for i := range events {
			kp.plans = append(kp.plans, g.plan())
			kp.envs = append(kp.envs, g.activation(key, int64(i), kp.plans[i], &t, false)...)
		}
	}
	if g.rng.IntN(2) == 0 {
		kp.envs = append(kp.envs, export(key, t+int64(g.rng.IntN(4000)), fmt.Sprintf("x%d", g.rng.IntN(100))))
	}
	return kp
}

func (g *Generator) plan() plan {
	switch r := g.rng.IntN(20); {
	case r < 5:
		return planReply
	case r < 8:
		return planRemember
	case r < 13:
		return planLookup
	case r < 18:
		return planRefund
	case r < 19:
		return planGarbage
	}
	return planUnscripted
}

// activation makes the envelopes of one planned activation, from *t on: the event and the
// answers its intents expect, on time, late, early (before the intent exists) or missing.
func (g *Generator) activation(key string, seq int64, p plan, t *int64, tidy bool) []*pb.AgentEnvelope {
	step := func(max int) int64 { return int64(g.rng.IntN(max)) }
	envs := []*pb.AgentEnvelope{event(key, *t, fmt.Sprintf("message %d of %s", seq, key))}
	switch p {
	case planLookup:
		at := *t + g.when(tidy)
		envs = append(envs, result(key, at, seq, 0, "order A-1 shipped"))
		*t = max(*t, at)
	case planRefund:
		at := *t + g.when(tidy)
		approved := tidy || g.rng.IntN(3) > 0
		envs = append(envs, approval(key, at, seq, 0, approved))
		if approved && (tidy || g.rng.IntN(5) > 0) {
			at2 := at + g.when(tidy)
			envs = append(envs, result(key, at2, seq, 1, "refunded"))
			at = max(at, at2)
		}
		*t = max(*t, at)
	}
	switch g.rng.IntN(8) {
	case 0: // a long idle gap: the key's memory and replay cache expire first
		*t += idleTTLMs + step(1000)
	case 1: // the next event at the same instant
	default:
		*t += 1 + step(20000)
	}
	return envs
}

// when is how long after its request an answer arrives.
func (g *Generator) when(tidy bool) int64 {
	if tidy {
		return 1 + int64(g.rng.IntN(60000))
	}
	switch g.rng.IntN(10) {
	case 0:
		return -int64(g.rng.IntN(3000)) // before the request: an orphan, or waiting its turn
	case 1:
		return 11*60*1000 + int64(g.rng.IntN(30*60*1000)) // after the deadline or an escalation
	}
	return int64(g.rng.IntN(120000))
}

// rules are the model script's answers for one activation.
func rules(s *interaction.Schema, key string, seq int64, p plan) []byte {
	doc := func(value string) string {
		return fmt.Sprintf(`{"schema":%q,"root_type_id":%q,"schema_digest":%q,"value":%s}`, interaction.ValueFormat, s.RootTypeID(), s.Digest(), value)
	}
	rule := func(step int, text string) string {
		return fmt.Sprintf("{\"entity\":%q,\"seq\":%d,\"step\":%d,\"response_text\":%q}\n", key, seq, step, text)
	}
	reply := func(text string) string {
		return doc(fmt.Sprintf(`{"case":"support.reply","fields":{"support.reply.text":%q}}`, text))
	}
	var out string
	switch p {
	case planReply:
		out = rule(0, reply(fmt.Sprintf("Hello %s, %d", key, seq)))
	case planRemember:
		out = rule(0, doc(fmt.Sprintf(`{"case":"support.remember","fields":{"support.remember.key":"k%d","support.remember.value":"v%d"}}`, seq, seq))) +
			rule(1, reply("Noted."))
	case planLookup:
		out = rule(0, doc(`{"case":"support.lookup_order","fields":{"support.lookup_order.order_id":"A-1"}}`)) +
			rule(1, reply("Your order shipped."))
	case planRefund:
		out = rule(0, doc(`{"case":"support.refund","fields":{"support.refund.order_id":"A-1","support.refund.amount_cents":"1299","support.refund.reason":"broken"}}`)) +
			rule(1, reply("Refund declined.")) + rule(2, reply("Refunded."))
	case planGarbage:
		out = rule(0, `{"case":"support.delete_everything"}`)
	}
	return []byte(out)
}

func event(key string, t int64, text string) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: t, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(text)}}
}

func result(key string, t int64, seq int64, step uint32, payload string) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: t, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
		IntentId: intent.ID([]byte(key), seq, step), EntityKey: []byte(key), Seq: seq, Status: pb.ToolResult_OK, Payload: []byte(payload)}}}
}

func approval(key string, t int64, seq int64, step uint32, ok bool) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: t, Payload: &pb.AgentEnvelope_Approval_{Approval: &pb.AgentEnvelope_Approval{
		IntentId: intent.ID([]byte(key), seq, step), Approved: ok, Approver: "ops"}}}
}

func export(key string, t int64, id string) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: t, Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{RequestId: id}}}
}
