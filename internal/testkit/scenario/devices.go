package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/examples/devices"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/records"
)

// anomaly is what the model does for one anomaly of the devices agent.
type anomaly int

const (
	anomalyAnswer   anomaly = iota // a text answer at once
	anomalyDispatch                // inline lookup, then one dispatch, then the answer
	anomalyTwo                     // two dispatches in one answer, then the answer
	anomalyBadArgs                 // a dispatch whose arguments the schema refuses
	anomalyUnscript                // no recorded answer: a model error
)

// DevicesGenerator decides traffic for the handler agent of examples/devices: quiet readings
// (memory ring, no model), anomalies (native tools: an inline lookup, one or two dispatch
// intents answered in and out of order, late or never, refused arguments, unscripted
// answers), unreadable readings, export requests, duplicate deliveries, malformed records, and
// restored suspensions recorded by another version of the handler, which a resumed run finds
// nondeterministic. The same seed always gives the same bytes.
type DevicesGenerator struct {
	rng    *rand.Rand
	script []byte
	keys   []*devKey
}

type devKey struct {
	key     string
	device  uint64
	envs    []*pb.AgentEnvelope
	history []*pb.AgentEnvelope // run before a restore, by the recording version
}

// NewDevices decides the traffic of n keys from seed.
func NewDevices(seed uint64, n int) *DevicesGenerator {
	g := &DevicesGenerator{rng: rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))}
	for i := range n {
		g.keys = append(g.keys, g.devKey(fmt.Sprintf("d%d-%04d", seed%1000, i)))
	}
	return g
}

// Script is the model script of the traffic (for devices.Config.Script).
func (g *DevicesGenerator) Script() []byte { return g.script }

func (g *DevicesGenerator) device() uint64 {
	switch g.rng.IntN(4) {
	case 0:
		return 17
	case 1:
		return 9007199254740993 // in the lookup table, and beyond a float64's integers
	case 2:
		return 1<<63 + g.rng.Uint64N(1<<62) // not in the table: the lookup fails inline
	}
	return g.rng.Uint64N(1000)
}

func reading(device uint64, milliC int64) []byte {
	return []byte(fmt.Sprintf(`{"device_id":"%d","milli_c":%d}`, device, milliC))
}

// devKey plans one key. Each committed activation takes the next seq; a failed one (an
// unreadable reading, refused arguments, a model error) commits nothing and takes none.
func (g *DevicesGenerator) devKey(key string) *devKey {
	k := &devKey{key: key, device: g.device()}
	t := T0 + int64(g.rng.IntN(60))*1000
	seq := int64(0)
	if g.rng.IntN(6) == 0 {
		k.restored(g, t-3600_000)
		seq = 1 // the restored activation fails closed before the traffic
	}
	for range 1 + g.rng.IntN(4) {
		t += 1000 + int64(g.rng.IntN(120))*1000
		switch r := g.rng.IntN(10); {
		case r < 4: // quiet
			k.event(t, reading(k.device, int64(devices.BandLowMilliC+g.rng.IntN(devices.BandHighMilliC-devices.BandLowMilliC+1))))
			seq++
		case r == 4: // unreadable
			k.event(t, []byte(`{"device_id":"`+strconv.Itoa(g.rng.IntN(9))+`","milli_c":"hot"}`))
		default:
			if g.anomaly(k, seq, t) {
				seq++
			}
		}
		if g.rng.IntN(5) == 0 {
			k.envs = append(k.envs, export(key, t+500, fmt.Sprintf("x-%d", t)))
		}
	}
	return k
}

// anomaly plans one anomaly at seq and reports whether its activation commits.
func (g *DevicesGenerator) anomaly(k *devKey, seq, t int64) bool {
	milliC := int64(devices.BandHighMilliC + 1 + g.rng.IntN(200000))
	if g.rng.IntN(3) == 0 {
		milliC = int64(devices.BandLowMilliC - 1 - g.rng.IntN(100000))
	}
	k.event(t, reading(k.device, milliC))
	when := fmt.Sprintf("reads %d milli", milliC)
	dispatch := func(id string) map[string]any {
		return map[string]any{"id": id, "name": devices.ToolDispatch, "arguments": json.RawMessage(fmt.Sprintf(`{"device_id":%d,"reason":"%d mC"}`, k.device, milliC))}
	}
	switch a := anomaly(g.rng.IntN(5)); a {
	case anomalyAnswer:
		g.rule(k.key, 2, when, nil, "No dispatch needed.")
	case anomalyDispatch:
		g.rule(k.key, 2, when, []map[string]any{{"id": "l1", "name": devices.ToolLookup, "arguments": json.RawMessage(fmt.Sprintf(`{"device_id":%d}`, k.device))}}, "")
		g.rule(k.key, 4, when, []map[string]any{dispatch("d1")}, "")
		g.rule(k.key, 6, when, nil, "Dispatched.")
		g.results(k, seq, t, 5)
	case anomalyTwo:
		g.rule(k.key, 2, when, []map[string]any{dispatch("d1"), dispatch("d2")}, "Two crews.")
		g.rule(k.key, 5, when, nil, "Both dispatched.")
		g.results(k, seq, t, 3, 4)
	case anomalyBadArgs:
		g.rule(k.key, 2, when, []map[string]any{{"id": "b1", "name": devices.ToolDispatch, "arguments": json.RawMessage(`{"device_id":-1,"reason":"x"}`)}}, "")
		return false
	case anomalyUnscript:
		return false
	}
	return true
}

// results plans the tool results of the intents at positions of activation seq: each
// answered in time (in a random order), late (after the activation failed closed: an
// orphan), or never (the deadline fails it closed).
func (g *DevicesGenerator) results(k *devKey, seq, t int64, positions ...uint32) {
	for _, pos := range positions {
		at := t + 1000 + int64(g.rng.IntN(300))*1000
		switch g.rng.IntN(6) {
		case 0:
			continue
		case 1:
			at = t + 40*60*1000
		}
		id := intent.ID([]byte(k.key), seq, pos)
		k.envs = append(k.envs, &pb.AgentEnvelope{EntityKey: []byte(k.key), EventTimeMs: at, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
			IntentId: id, EntityKey: []byte(k.key), Seq: seq, Status: pb.ToolResult_OK, Payload: []byte(fmt.Sprintf(`{"ticket":"T-%d"}`, pos)), CompletedAtMs: at,
		}}})
	}
}

// restored makes the key start from a snapshot of a suspended dispatch recorded at t: its
// result arrives in the traffic, and the handler that resumes differs from the recording one.
func (k *devKey) restored(g *DevicesGenerator, t int64) {
	milliC := int64(devices.BandHighMilliC + 5000)
	when := fmt.Sprintf("reads %d milli", milliC)
	k.history = []*pb.AgentEnvelope{event(k.key, t, string(reading(k.device, milliC))), export(k.key, t+1000, "history")}
	g.rule(k.key, 2, when, []map[string]any{{"id": "r1", "name": devices.ToolDispatch, "arguments": json.RawMessage(fmt.Sprintf(`{"device_id":%d,"reason":"r"}`, k.device))}}, "")
	id := intent.ID([]byte(k.key), 0, 3)
	k.envs = append(k.envs, &pb.AgentEnvelope{EntityKey: []byte(k.key), EventTimeMs: t + 2000, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
		IntentId: id, EntityKey: []byte(k.key), Seq: 0, Status: pb.ToolResult_OK, CompletedAtMs: t + 2000,
	}}})
}

func (k *devKey) event(t int64, ev []byte) { k.envs = append(k.envs, event(k.key, t, string(ev))) }

// rule adds a script rule for the key's model call at step whose request contains when.
func (g *DevicesGenerator) rule(key string, step uint32, when string, calls []map[string]any, text string) {
	r := map[string]any{"entity": key, "step": step, "contains": when, "response_text": text, "input_tokens": 50 + step, "output_tokens": 5}
	if calls != nil {
		r["tool_calls"] = calls
	}
	line, _ := json.Marshal(r)
	g.script = append(append(g.script, line...), '\n')
}

// Build makes the traffic. d runs the histories of restored keys with the recording version
// of the handler; their snapshots are the exports those histories end with.
func (g *DevicesGenerator) Build(ctx context.Context, d *drive.Driver) (*Set, error) {
	set := &Set{Script: g.script}
	for _, k := range g.keys {
		set.Keys = append(set.Keys, k.key)
		if k.history != nil {
			var values [][]byte
			for _, e := range k.history {
				b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(e)
				values = append(values, b)
			}
			var snap []byte
			d.Run(ctx, []byte(k.key), values, func(kind int64, b []byte) {
				if kind == records.OutSnapshot {
					snap = b
				}
			})
			if snap == nil {
				return nil, fmt.Errorf("scenario: the history of %s exported nothing", k.key)
			}
			set.Snapshots = append(set.Snapshots, snap)
		}
		for _, e := range k.envs {
			b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(e)
			set.Records = append(set.Records, b)
			if g.rng.IntN(12) == 0 {
				set.Records = append(set.Records, b)
			}
		}
		if g.rng.IntN(10) == 0 {
			set.Records = append(set.Records, []byte{0xff, 0x01})
		}
	}
	g.rng.Shuffle(len(set.Records), func(i, j int) { set.Records[i], set.Records[j] = set.Records[j], set.Records[i] })
	return set, nil
}
