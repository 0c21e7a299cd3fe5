package rehearse

import (
	"context"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/replay"
)

// Options configure a rehearsal.
type Options struct {
	// Live answers the requests the baseline did not make, within LiveCalls calls and, when
	// LiveTokens > 0, while fewer than LiveTokens tokens (input and output) were spent (the
	// call that crosses it counts in full). Nil, or LiveCalls 0, makes no live call.
	Live       model.Model
	LiveCalls  int
	LiveTokens int64
	// ModelID is the model id the candidate's requests name (part of every cache key): the
	// live model's, when the change under test is the model. Empty names the baseline's, as
	// replay does (replay.Model.ModelID), or the candidate's own when the baseline names none
	// or several.
	ModelID string
	// Ending is how the baseline's bounded run ended (parked keys or failed closed).
	Ending replay.Ending
	// Refused are the dead letters of input records refused before they reached the agent
	// (undecodable envelopes): the baseline has them too, and they belong to their keys.
	Refused [][]byte
}

// Run rehearses candidate a over inputs (each key's input values, restores first, as replay
// takes them) against baseline, the baseline's output records by kind as `run` wrote them:
// its snapshots' replay caches answer the model, its traces give the recorded usage, and
// its outputs are what the candidate is compared with. Every restore among inputs is first
// checked with CheckState. The context bounds the live calls.
func Run(ctx context.Context, a *agent.Agent, inputs []replay.Input, baseline map[int64][][]byte, o Options) (*Report, error) {
	for _, in := range inputs {
		for _, v := range in.Values {
			if snap := drive.DecodeInput(in.Entity, v).Snapshot; snap != nil {
				if err := CheckState(ctx, a, snap); err != nil {
					return nil, err
				}
			}
		}
	}
	rec, err := readRecording(baseline)
	if err != nil {
		return nil, err
	}
	g := &gate{rec: rec.model, o: o}
	id := o.ModelID
	if id == "" {
		id = rec.model.ModelID()
	}
	candidate, err := a.WithModel(g, id, false)
	if err != nil {
		return nil, err
	}
	// Unsigned intents: a rehearsal holds no production keyring, and its intents go nowhere.
	// Results and approvals are admitted unchecked: the baseline's run verified them.
	deps := host.Deps{AllowUnsigned: true, Recorded: g.inline}
	d := &drive.Driver{Core: drive.Core{Agent: candidate, Deps: deps, OrderResolutionMs: 1, Park: o.Ending.Park, EndMs: o.Ending.EndMs}}
	refused := replay.ByEntity(map[int64][][]byte{records.OutDeadLetter: o.Refused})
	r := &Report{}
	for _, in := range replay.Sharded(candidate.Shards(), inputs) {
		r.Keys = append(r.Keys, g.key(ctx, d, in, rec, refused[string(in.Entity)][records.OutDeadLetter]))
	}
	r.Summary = summarize(r.Keys)
	return r, nil
}

// maxPasses bounds the runs of one key whose tool calls moved (key.moved).
const maxPasses = 8

// key rehearses one key. A tool call or approval the candidate makes at another step than the
// baseline (another intent id) is answered by the baseline's answer to the same call: the key
// runs again with the answers addressed to the candidate's intents, until no call moves. A
// rerun asks the live model nothing new (g.memo) and spends what its first run spent.
func (g *gate) key(ctx context.Context, d *drive.Driver, in replay.Input, rec *recording, refused [][]byte) Key {
	values := in.Values
	calls, tokens := g.calls, g.tokens
	for pass := 1; ; pass++ {
		k := newKey(in.Entity, rec.byKey[string(in.Entity)], rec.inline[string(in.Entity)])
		for _, dl := range refused {
			k.emit(records.OutDeadLetter, dl)
		}
		g.start(k, calls, tokens)
		d.Run(ctx, in.Entity, values, k.emit)
		moved := k.moved(values)
		if moved == nil || pass == maxPasses {
			return k.report()
		}
		values = moved
	}
}
