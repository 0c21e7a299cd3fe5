package budget

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/beamagents/beamagents/ledger"
)

// CostCode names why a cost budget cannot be enforced at a price table; the codes are stable.
type CostCode string

// Cost budget refusals, at pipeline construction.
const (
	CodeNoPrices        CostCode = "cost_budget_no_prices"        // the pipeline has no price table
	CodeFreeReservation CostCode = "cost_budget_free_reservation" // the table prices every token at 0: a grant reserves nothing
	CodeOverReservation CostCode = "cost_budget_over_reservation" // one grant reserves more than CostMicros: nothing could be granted
)

// ErrCostBudget matches every *CostError (errors.Is).
var ErrCostBudget = errors.New("budget: cost budget cannot be enforced")

// CostError is a cost budget refused at a price table: Code says why.
type CostError struct {
	Code   CostCode
	Detail string
}

func (e *CostError) Error() string {
	return fmt.Sprintf("tenant cost budget: %s (%s)", e.Detail, e.Code)
}

// Is makes every CostError match ErrCostBudget.
func (e *CostError) Is(target error) bool { return target == ErrCostBudget }

// Reservation is the most an activation of maxTokens tokens can cost at table t, in
// micro-units: every token at the table's dearest price per token (input, cached input or
// output, of any model: a fallback model may answer), the product rounded up. The exact
// cost of the activation's calls is at most that; the ledger rounds each call half up, so
// its sum over an activation's calls can be above the exact cost by at most half a
// micro-unit per call. It saturates at math.MaxInt64; it is 0 when the table prices nothing.
func Reservation(t ledger.Table, maxTokens int64) int64 {
	var top int64
	for _, p := range t.Models {
		top = max(top, p.Input, p.CachedInput, p.Output)
	}
	if top <= 0 || maxTokens <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(maxTokens), uint64(top))
	lo, c := bits.Add64(lo, perMillion-1, 0) // rounds the quotient up
	hi += c
	if hi >= perMillion {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, perMillion)
	return int64(min(q, math.MaxInt64))
}

// perMillion is the tokens a price is given for (ledger.Price).
const perMillion = 1_000_000

// NewAdmission is the admission of b (checked by Check) for an agent granting maxTokens per
// activation, at the launch's price table t: a token budget ignores t; a cost budget
// reserves Reservation(t, maxTokens) per grant, and is refused (a *CostError) when t has no
// prices, prices every token at 0, or reserves more per grant than b.CostMicros.
func NewAdmission(b Budget, maxTokens int64, t ledger.Table) (*Admission, error) {
	adm := &Admission{Budget: b, Grant: maxTokens}
	if !b.IsCost() {
		return adm, nil
	}
	if len(t.Models) == 0 {
		return nil, &CostError{Code: CodeNoPrices, Detail: "a cost budget needs the price table of the launch (--prices)"}
	}
	adm.Reserve = Reservation(t, maxTokens)
	switch {
	case adm.Reserve == 0:
		return nil, &CostError{Code: CodeFreeReservation, Detail: "the price table prices every token at 0: a grant would reserve nothing"}
	case adm.Reserve > b.CostMicros:
		return nil, &CostError{Code: CodeOverReservation, Detail: fmt.Sprintf(
			"an activation of %d tokens can cost %d micro-units, above CostMicros (%d): no activation could be granted", maxTokens, adm.Reserve, b.CostMicros)}
	}
	return adm, nil
}
