package agent

import "github.com/beamagents/beamagents/model"

// AnsweredBy returns a copy of a that asks m instead of its model: everything else (schema,
// prompt, bindings, limits, model id, so every replay-cache key) stays the same. Offline
// replay answers from recorded caches this way.
func (a *Agent) AnsweredBy(m model.Model) *Agent {
	b := *a
	b.def.Model = m
	return &b
}
