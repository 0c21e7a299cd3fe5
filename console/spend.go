package console

import (
	"cmp"
	"net/http"
	"slices"

	bolt "go.etcd.io/bbolt"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/ledger"
)

// Spend is what the stored model calls cost: each stored LLM_CALL event priced by a price
// table with the ledger's own function (ledger.Entry), so the page agrees with a run's cost
// ledger under the same prices. Rows are by cost, then calls, then name; hours in order.
type Spend struct {
	Currency string
	Totals   ledger.Totals
	ByTenant []SpendRow
	ByAgent  []SpendRow // "agent" or "agent@version"
	ByModel  []SpendRow // the model that answered (LedgerEntry.response_model)
	ByEntity []SpendRow // at most MaxListed, the costliest
	Entities int        // entity keys with a model call
	Hours    []SpendRow // by event-time hour (AtMs)
}

// SpendRow is one group's totals. Key is the entity key of a ByEntity row; AtMs the start of
// an Hours row.
type SpendRow struct {
	Name string
	Key  []byte
	AtMs int64
	ledger.Totals
}

const hourMs = 3_600_000

// Spend prices every stored model call with prices and sums the records by tenant, agent,
// model, entity key and event-time hour.
func (s *Store) Spend(prices ledger.Table) (*Spend, error) {
	sp := &Spend{Currency: prices.Currency}
	tenants, agents, models, entities := map[string]*SpendRow{}, map[string]*SpendRow{}, map[string]*SpendRow{}, map[string]*SpendRow{}
	hours := map[int64]*SpendRow{}
	add := func(m map[string]*SpendRow, name string, e *pb.LedgerEntry) *SpendRow {
		r := m[name]
		if r == nil {
			r = &SpendRow{Name: name}
			m[name] = r
		}
		r.Add(e)
		return r
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bTraces).ForEach(func(_, v []byte) error {
			ev := &pb.TraceEvent{}
			if decode(v, ev) != nil {
				return nil
			}
			e, ok := ledger.Entry(ev, prices)
			if !ok {
				return nil
			}
			sp.Totals.Add(e)
			add(tenants, e.GetTenant(), e)
			agent := e.GetAgent()
			if v := e.GetAgentVersion(); v != "" {
				agent += "@" + v
			}
			add(agents, agent, e)
			add(models, e.GetResponseModel(), e)
			add(entities, string(e.GetEntityKey()), e).Key = e.GetEntityKey()
			h := e.GetEventTimeMs() - ((e.GetEventTimeMs()%hourMs)+hourMs)%hourMs
			if hours[h] == nil {
				hours[h] = &SpendRow{AtMs: h}
			}
			hours[h].Add(e)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	sp.ByTenant, sp.ByAgent, sp.ByModel = ranked(tenants), ranked(agents), ranked(models)
	sp.ByEntity, sp.Entities = ranked(entities), len(entities)
	if len(sp.ByEntity) > MaxListed {
		sp.ByEntity = sp.ByEntity[:MaxListed]
	}
	for _, r := range hours {
		sp.Hours = append(sp.Hours, *r)
	}
	slices.SortFunc(sp.Hours, func(a, b SpendRow) int { return cmp.Compare(a.AtMs, b.AtMs) })
	return sp, nil
}

// ranked lists groups by cost, then calls, then name, costliest first.
func ranked(m map[string]*SpendRow) []SpendRow {
	out := make([]SpendRow, 0, len(m))
	for _, r := range m {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b SpendRow) int {
		return cmp.Or(cmp.Compare(b.Cost, a.Cost), cmp.Compare(b.Calls, a.Calls), cmp.Compare(a.Name, b.Name))
	})
	return out
}

func (c *server) spend(w http.ResponseWriter, r *http.Request) {
	who, ok := c.reader(w, r)
	if !ok {
		return
	}
	sp, err := c.o.Store.Spend(c.o.Prices)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, 200, "spend", "Spend", who, map[string]any{"S": sp, "Priced": len(c.o.Prices.Models) > 0})
}
