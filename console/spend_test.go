package console_test

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/console"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/ledger"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/tracing"
)

// tenantCalls is two model calls of key for tenant acme by agent support at version v2, an
// hour apart: the first billed, 400 of its 1,000 input tokens read from the provider's
// prompt cache, the second answered by the replay cache.
func tenantCalls(key string) []proto.Message {
	attrs := func(hit bool) map[string]string {
		a := map[string]string{tracing.AttrRequestModel: "big", tracing.AttrTenant: "acme", tracing.AttrAgent: "support", tracing.AttrAgentVersion: "v2"}
		if hit {
			a[tracing.AttrCacheHit] = "true"
		} else {
			a[tracing.AttrInputTokens], a[tracing.AttrOutputTokens] = "1000", "100"
			a[tracing.AttrCacheReadInputTokens] = "400"
		}
		return a
	}
	return []proto.Message{
		event(key, 0, pb.TraceEvent_LLM_CALL, 0, T0, T0, attrs(false)),
		event(key, 1, pb.TraceEvent_LLM_CALL, 0, T0+3_600_000, T0+3_600_000, attrs(true)),
	}
}

// The spend page prices the stored model calls as the ledger does: by tenant, agent and
// version, model, entity and hour, cache hits at 0, an unpriced model counted.
func TestSpend(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "console.db"))
	var recs []console.Record
	trace, _ := records.KindOf(records.OutTrace)
	for _, m := range append(lookupTrace("customer-2"), tenantCalls("customer-9")...) {
		recs = append(recs, console.Record{Kind: trace, Data: marshal(t, m)})
	}
	if _, _, err := st.Ingest("", console.Offset{}, recs); err != nil {
		t.Fatal(err)
	}
	prices, err := ledger.DecodePrices([]byte(`{"currency":"USD","models":{"big":{"input":2.5,"output":10,"cached_input":1.25}}}`))
	if err != nil {
		t.Fatal(err)
	}
	sp, err := st.Spend(prices)
	if err != nil {
		t.Fatal(err)
	}
	// customer-9's billed call: 600 × 2.5 + 400 × 1.25 + 100 × 10 = 3,000 micro-units;
	// customer-2's two calls are of support-scripted-1, which the table does not price.
	tot := sp.Totals
	if tot.Calls != 4 || tot.CacheHits != 1 || tot.Unpriced != 2 || tot.Cost != 3000 || tot.InputTokens != 190+236+1000 || tot.CachedInputTokens != 400 || tot.OutputTokens != 22+29+100 {
		t.Fatalf("totals %+v", tot)
	}
	first := func(rows []console.SpendRow) console.SpendRow { return rows[0] }
	if r := first(sp.ByTenant); r.Name != "acme" || r.Cost != 3000 || r.CachedInputTokens != 400 || r.Calls != 2 || len(sp.ByTenant) != 2 {
		t.Errorf("by tenant %+v", sp.ByTenant)
	}
	if r := first(sp.ByAgent); r.Name != "support@v2" || r.Cost != 3000 {
		t.Errorf("by agent %+v", sp.ByAgent)
	}
	if r := first(sp.ByModel); r.Name != "big" || r.Calls != 2 || len(sp.ByModel) != 2 {
		t.Errorf("by model %+v", sp.ByModel)
	}
	if r := first(sp.ByEntity); string(r.Key) != "customer-9" || r.Cost != 3000 || sp.Entities != 2 {
		t.Errorf("by entity %+v", sp.ByEntity)
	}
	if len(sp.Hours) != 2 || sp.Hours[0].AtMs != 1767225600000 || sp.Hours[0].Calls != 3 || sp.Hours[1].CacheHits != 1 {
		t.Errorf("hours %+v", sp.Hours)
	}

	h, err := console.New(console.Options{Store: st, Prices: prices})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	page := get(t, srv.URL+"/spend")
	for _, want := range []string{`id="spend-cost">0.003000</b> USD`, `id="spend-cached">400</span>`, `<th>Cached input</th>`, `id="spend-tenant"`, `id="spend-hour"`, "support@v2", `id="unpriced">2 calls`, `href="/entities/`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if !strings.Contains(get(t, srv.URL+"/"), `href="/spend"`) {
		t.Error("the overview does not link the spend page")
	}
}
