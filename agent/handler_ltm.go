package agent

import (
	"errors"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/ltm"
	"github.com/beamagents/beamagents/records"
)

// Recall reads the long-term memory entry key of namespace for the activation's entity from
// host.Deps.LongTermMemory (package ltm). The read is journaled: a resumed run sees what the first
// run read and does not reach the store.
func (hc *Context) Recall(namespace, key string) ([]byte, bool, error) {
	if err := hc.unsharded("long-term memory recall"); err != nil {
		return nil, false, err
	}
	e, replayed, err := hc.begin(pb.JournalEntry_LTM_RECALL, key, []byte(namespace))
	if err != nil {
		return nil, false, err
	}
	if !replayed {
		s, err := hc.longTermMemory()
		if err != nil {
			return nil, false, err
		}
		got, found, err := s.Get(hc.Context(), hc.trigger.EntityKey, namespace, key)
		if err != nil {
			return nil, false, hc.fails(fail(records.ReasonMemoryStoreFailed, err, "recall of key %q in namespace %q", key, namespace))
		}
		e.Result, e.Found = got.Value, found
	}
	return e.GetResult(), e.GetFound(), nil
}

// Remember writes value under key of namespace for the activation's entity to
// host.Deps.LongTermMemory, stamped with the activation's seq. It takes effect once in a run; the
// write happens when the operation runs, not when the activation commits, so an activation
// that fails afterwards or is retried writes again with the same seq, which the store takes
// as a rewrite. A write the store refuses as stale (a later activation of the key already
// wrote the key) leaves the later value and is not an error.
func (hc *Context) Remember(namespace, key string, value []byte) error {
	if err := hc.unsharded("long-term memory write"); err != nil {
		return err
	}
	_, replayed, err := hc.begin(pb.JournalEntry_LTM_REMEMBER, key, []byte(namespace), value)
	if err != nil || replayed {
		return err
	}
	s, err := hc.longTermMemory()
	if err != nil {
		return err
	}
	err = s.Put(hc.Context(), ltm.Entry{Entity: hc.trigger.EntityKey, Namespace: namespace, Key: key, Value: value, Seq: hc.trigger.Seq})
	if err != nil && !errors.Is(err, ltm.ErrStale) {
		return hc.fails(fail(records.ReasonMemoryStoreFailed, err, "remembering key %q in namespace %q", key, namespace))
	}
	return nil
}

func (hc *Context) longTermMemory() (ltm.Store, error) {
	if s := hc.act.c.deps.LongTermMemory; s != nil {
		return s, nil
	}
	return nil, hc.fails(fail(records.ReasonMemoryStoreFailed, nil, "no long-term memory store (Deps.LongTermMemory)"))
}
