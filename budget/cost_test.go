package budget_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/beamagents/beamagents/budget"
	"github.com/beamagents/beamagents/ledger"
)

// The reservation is every token at the table's dearest per-token price, rounded up.
func TestReservation(t *testing.T) {
	two := ledger.Table{Models: map[string]ledger.Price{
		"large": {Input: 2_500_000, CachedInput: 1_250_000, Output: 10_000_000}, // 2.50, 1.25, 10.00 per million
		"small": {Input: 150_000, CachedInput: 75_000, Output: 600_000},
	}}
	for _, tc := range []struct {
		name      string
		t         ledger.Table
		maxTokens int64
		want      int64
	}{
		{"the dearest output of two models", two, 2_000, 20_000}, // 2000 × 10
		{"a cached input dearer than the rest", ledger.Table{Models: map[string]ledger.Price{"m": {CachedInput: 3_000_000}}}, 7, 21},
		{"an input dearer than the output", ledger.Table{Models: map[string]ledger.Price{"m": {Input: 4_000_000, Output: 1}}}, 10, 40},
		{"a fraction rounds up", ledger.Table{Models: map[string]ledger.Price{"m": {Output: 150_000}}}, 10, 2},     // 1.5
		{"the smallest fraction rounds up", ledger.Table{Models: map[string]ledger.Price{"m": {Output: 1}}}, 1, 1}, // 0.000001
		{"a whole product stays", ledger.Table{Models: map[string]ledger.Price{"m": {Output: 500_000}}}, 4, 2},
		{"no models", ledger.Table{}, 100, 0},
		{"free models", ledger.Table{Models: map[string]ledger.Price{"m": {}}}, 100, 0},
		{"no tokens", two, 0, 0},
		{"saturates", ledger.Table{Models: map[string]ledger.Price{"m": {Output: ledger.MaxPrice}}}, math.MaxInt64, math.MaxInt64},
	} {
		if got := budget.Reservation(tc.t, tc.maxTokens); got != tc.want {
			t.Errorf("%s: Reservation = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// A cost budget is refused at a price table that cannot reserve it, with a typed error; a
// token budget ignores the table.
func TestNewAdmission(t *testing.T) {
	prices := ledger.Table{Models: map[string]ledger.Price{"m": {Input: 1_000_000, Output: 3_000_000}}} // 3 micro-units a token at most
	cost := budget.Budget{CostMicros: 1_000, Per: time.Hour}
	for _, tc := range []struct {
		name        string
		b           budget.Budget
		maxTokens   int64
		t           ledger.Table
		code        budget.CostCode
		wantReserve int64
	}{
		{"a token budget needs no table", budget.Budget{Tokens: 1000, Per: time.Hour}, 100, ledger.Table{}, "", 0},
		{"a cost budget reserves at the table", cost, 100, prices, "", 300},
		{"a reservation of the whole budget", cost, 333, prices, "", 999},
		{"no price table", cost, 100, ledger.Table{}, budget.CodeNoPrices, 0},
		{"free prices", cost, 100, ledger.Table{Models: map[string]ledger.Price{"m": {}}}, budget.CodeFreeReservation, 0},
		{"one grant over the budget", cost, 334, prices, budget.CodeOverReservation, 0},
	} {
		adm, err := budget.NewAdmission(tc.b, tc.maxTokens, tc.t)
		var ce *budget.CostError
		switch {
		case tc.code == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.code == "" && (adm.Reserve != tc.wantReserve || adm.Grant != tc.maxTokens):
			t.Errorf("%s: reserve %d grant %d, want %d and %d", tc.name, adm.Reserve, adm.Grant, tc.wantReserve, tc.maxTokens)
		case tc.code != "" && (!errors.Is(err, budget.ErrCostBudget) || !errors.As(err, &ce) || ce.Code != tc.code):
			t.Errorf("%s: error %v, want code %s", tc.name, err, tc.code)
		}
	}
}

// A cost budget grants floor(CostMicros/reservation) activations a window, each stamped
// with the agent's MaxTokens as its grant.
func TestAdmitCost(t *testing.T) {
	prices := ledger.Table{Models: map[string]ledger.Price{"m": {Output: 2_500_000}}} // 2.5 micro-units a token
	adm, err := budget.NewAdmission(budget.Budget{CostMicros: 1_000, Per: time.Minute}, 100, prices)
	if err != nil {
		t.Fatal(err)
	}
	var in []budget.Event
	for i := range 6 {
		in = append(in, external("k", int64(i)*1000, string(rune('a'+i))))
	}
	in = append(in, external("k", 60_000, "next"))
	granted, over := map[int64]int{}, map[int64]int{}
	for _, ev := range adm.AdmitAll(func(string) string { return "t" }, in) {
		g := grantOf(t, ev).GetBudgetGrant()
		switch {
		case g.GetOverBudget():
			over[g.GetWindowStartMs()]++
		case g.GetTokens() != 100:
			t.Errorf("grant %v: want 100 tokens", g)
		default:
			granted[g.GetWindowStartMs()]++
		}
	}
	// 1000 / 250 = 4 grants in the first window; the next window starts afresh.
	if granted[0] != 4 || over[0] != 2 || granted[60_000] != 1 {
		t.Errorf("granted %v, over %v: want 4 and 2 in the first window, 1 in the next", granted, over)
	}
}
