package drive

import (
	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/budget"
	"github.com/beamagents/beamagents/ledger"
)

// Admit runs the tenant budget's admission (agent.Agent.Admission, budget.Admission.AdmitAll)
// over a whole bounded input, each key's values in values[i] for entity keys[i], as the
// admission stage before RunAgent and RunAgentBatch does: it returns each key's values with
// its external events stamped (or parked) in their tenant's event-time order. Without a
// tenant budget it returns values as they are. Run each key's returned values through Run.
// prices is the launch's price table (agent.Agent.Admission): a cost budget it cannot price
// is an error matching budget.ErrCostBudget.
func Admit(a *agent.Agent, prices ledger.Table, keys [][]byte, values [][][]byte) ([][][]byte, error) {
	adm, err := a.Admission(prices)
	if adm == nil || err != nil {
		return values, err
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
	return out, nil
}
