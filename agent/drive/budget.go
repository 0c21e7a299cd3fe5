package drive

import (
	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/budget"
)

// Admit runs the tenant budget's admission (agent.Agent.Admission, budget.Admission.AdmitAll)
// over a whole bounded input, each key's values in values[i] for entity keys[i], as the
// admission stage before RunAgent and RunAgentBatch does: it returns each key's values with
// its external events stamped (or parked) in their tenant's event-time order. Without a
// tenant budget it returns values as they are. Run each key's returned values through Run.
func Admit(a *agent.Agent, keys [][]byte, values [][][]byte) [][][]byte {
	adm := a.Admission()
	if adm == nil {
		return values
	}
	var evs []budget.Event
	at := map[string]int{}
	for i, k := range keys {
		at[string(k)] = i
		for _, v := range values[i] {
			ev := budget.Event{Key: k, Value: v}
			if env := budget.Admissible(v); env != nil {
				ev.AtMs = env.GetEventTimeMs()
			}
			evs = append(evs, ev)
		}
	}
	out := make([][][]byte, len(keys))
	for _, ev := range adm.AdmitAll(a.Tenant, evs) {
		i := at[string(ev.Key)]
		out[i] = append(out[i], ev.Value)
	}
	return out
}
