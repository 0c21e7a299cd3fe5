package agent

import (
	"github.com/beamagents/beamagents/agent/internal/bind"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
)

// bindRun is the activation as a bindings step sees it (bind.Run, through bind.RunOf): the
// few operations package agent/bindings needs of a run that a handler does not call. A
// bindings step records no argument digest and takes no operation budget: its journal is an
// AgentResume, whose records never had either.
type bindRun struct{ hc *Context }

func (r bindRun) Next(op pb.JournalEntry_Op) (*pb.JournalEntry, bool, error) {
	hc := r.hc
	if err := hc.usable(); err != nil {
		return nil, false, err
	}
	if hc.pos >= len(hc.j.Entries) {
		return nil, false, nil
	}
	e := hc.j.Entries[hc.pos]
	if e.GetOp() != op {
		return nil, false, hc.fails(fail(records.ReasonStateCorrupt, nil, "step %d of the journal is %s, not %s", hc.pos, e.GetOp(), op))
	}
	hc.pos++
	return e, true, nil
}

func (r bindRun) Memory() ([]bind.MemoryItem, error) {
	v := r.hc.act.v
	if err := v.need(memoryCell, cacheCell); err != nil {
		return nil, r.hc.fails(err)
	}
	var items []bind.MemoryItem
	for k, val := range v.memory.All() {
		items = append(items, bind.MemoryItem{Key: k, Value: val})
	}
	return items, nil
}

func (r bindRun) Entries() []*pb.JournalEntry { return r.hc.j.Entries }

func (r bindRun) Propose(msgs []model.Message) (*interaction.Value, error) {
	hc := r.hc
	u := hc.act.c.a.use
	req := hc.request(msgs)
	req.ResponseSchema, req.SchemaDigest = u.provider, u.schema.Digest()
	val, err := hc.act.admitted(req, model.CacheKey(req), u)
	if err != nil {
		return nil, hc.fails(err)
	}
	return val, nil
}

func (r bindRun) Admit(doc []byte) (*interaction.Value, error) {
	out, err := r.hc.act.c.a.use.admitter.Admit(doc)
	if err != nil {
		return nil, err
	}
	return out.Value, nil
}

func (r bindRun) Append(e *pb.JournalEntry) {
	r.hc.j.Entries = append(r.hc.j.Entries, e)
	r.hc.pos++
}

func (r bindRun) Intent(e *pb.JournalEntry, tool, args string, kind pb.ToolIntent_Kind, receipt map[string]string) error {
	hc, act := r.hc, r.hc.act
	timeout := act.c.a.limits.ToolTimeoutMs
	if kind == pb.ToolIntent_APPROVAL {
		timeout = act.c.a.limits.ApprovalTimeoutMs
	}
	ti, err := act.newIntent(hc.lastPos(), tool, args, kind, timeout)
	if err != nil {
		return hc.fails(err)
	}
	e.IntentId, act.receipt = ti.IntentId, receipt
	hc.fresh = []*pb.ToolIntent{ti}
	return ErrSuspended
}

func (r bindRun) Put(key string, value []byte) error { return r.hc.put(key, value) }

func (r bindRun) Evictions(key string, size int, keep string, reserve, fill int) ([]bind.MemoryItem, error) {
	return r.hc.evictions(room{key: key, size: size, keep: keep, reserve: reserve, fill: fill})
}

func (r bindRun) Replace(drop []string, puts ...bind.MemoryItem) error {
	return r.hc.replace(drop, puts)
}
