package agent

import (
	"errors"

	"github.com/beamagents/beamagents/ltm"
	"github.com/beamagents/beamagents/records"
)

// flushOnExpiry writes the expiring key's working memory to Definition.FlushOnExpiry's
// namespace of the long-term store, each entry under its own key and stamped with the key's
// seq: a firing retried after a failure rewrites the same entries with the same seq, and a
// later activation's Remember (a higher seq) is never overwritten. A store that fails fails
// the firing, so the memory is not cleared.
func (c *call) flushOnExpiry(v *view) error {
	ns := c.a.def.FlushOnExpiry
	if ns == "" {
		return nil
	}
	if err := v.need(seqCell, memoryCell); err != nil {
		return err
	}
	if v.memory.Len() == 0 {
		return nil
	}
	s := c.deps.LongTermMemory
	if s == nil {
		return fail(records.ReasonMemoryStoreFailed, nil, "the expiring key's memory has no long-term memory store to be flushed to (Deps.LongTermMemory)")
	}
	for key, value := range v.memory.All() {
		err := s.Put(c.ctx, ltm.Entry{Entity: c.entity, Namespace: ns, Key: key, Value: value, Seq: v.seq})
		if err != nil && !errors.Is(err, ltm.ErrStale) {
			return fail(records.ReasonMemoryStoreFailed, err, "flushing memory entry %q to namespace %q at expiry", key, ns)
		}
	}
	return nil
}
