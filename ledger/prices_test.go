package ledger_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/ledger"
)

func TestDecodePrices(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want ledger.Table // checked when code is empty
		code ledger.Code
	}{
		{name: "full", in: `{"currency":"USD","models":{"gpt-4o":{"input":2.5,"output":10,"cached_input":1.25},"mini":{"input":0.15,"output":0.6}}}`,
			want: ledger.Table{Currency: "USD", Models: map[string]ledger.Price{
				"gpt-4o": {Input: 2_500_000, Output: 10_000_000, CachedInput: 1_250_000},
				"mini":   {Input: 150_000, Output: 600_000, CachedInput: 150_000}}}},
		{name: "smallest amount", in: `{"models":{"m":{"input":0.000001}}}`,
			want: ledger.Table{Models: map[string]ledger.Price{"m": {Input: 1, CachedInput: 1}}}},
		{name: "empty", in: `{}`, want: ledger.Table{Models: map[string]ledger.Price{}}},
		{name: "not an object", in: `[]`, code: ledger.CodeSyntax},
		{name: "empty input", in: ``, code: ledger.CodeSyntax},
		{name: "trailing", in: `{} {}`, code: ledger.CodeSyntax},
		{name: "unknown top field", in: `{"model":{}}`, code: ledger.CodeUnknownField},
		{name: "unknown price field", in: `{"models":{"m":{"inputs":1}}}`, code: ledger.CodeUnknownField},
		{name: "duplicate model", in: `{"models":{"m":{"input":1},"m":{"input":2}}}`, code: ledger.CodeDuplicateModel},
		{name: "duplicate amount", in: `{"models":{"m":{"input":1,"input":2}}}`, code: ledger.CodeSyntax},
		{name: "empty model id", in: `{"models":{"":{"input":1}}}`, code: ledger.CodeBadModel},
		{name: "negative", in: `{"models":{"m":{"input":-1}}}`, code: ledger.CodeBadAmount},
		{name: "exponent", in: `{"models":{"m":{"input":1e3}}}`, code: ledger.CodeBadAmount},
		{name: "seven fraction digits", in: `{"models":{"m":{"input":0.0000001}}}`, code: ledger.CodeBadAmount},
		{name: "string amount", in: `{"models":{"m":{"input":"1"}}}`, code: ledger.CodeBadAmount},
		{name: "over the bound", in: `{"models":{"m":{"output":1000001}}}`, code: ledger.CodeBadAmount},
		{name: "currency not a string", in: `{"currency":1}`, code: ledger.CodeBadCurrency},
		{name: "too large", in: `{"currency":"` + strings.Repeat(" ", ledger.MaxPriceFileBytes) + `"}`, code: ledger.CodeTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ledger.DecodePrices([]byte(tc.in))
			if tc.code != "" {
				var pe *ledger.PriceError
				if !errors.As(err, &pe) || pe.Code != tc.code || !errors.Is(err, ledger.ErrPrices) {
					t.Fatalf("err = %v; want code %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Currency != tc.want.Currency || len(got.Models) != len(tc.want.Models) {
				t.Fatalf("got %+v; want %+v", got, tc.want)
			}
			for m, p := range tc.want.Models {
				if got.Models[m] != p {
					t.Fatalf("%s: got %+v; want %+v", m, got.Models[m], p)
				}
			}
		})
	}
}

func TestMicros(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1": 1_000_000, "2.5": 2_500_000, "0.000001": 1, "123.456789": 123_456_789} {
		if got, ok := ledger.Micros(in); !ok || got != want {
			t.Errorf("Micros(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", ".", "1.", ".5", "01", "-1", "+1", "1e3", "1.0000001", "1,5", "1234567890123"} {
		if _, ok := ledger.Micros(in); ok {
			t.Errorf("Micros(%q) accepted", in)
		}
	}
}

// FuzzDecodePrices: any input decodes to a table or a *PriceError, never a panic; a decoded
// table's amounts are within the bound.
func FuzzDecodePrices(f *testing.F) {
	for _, s := range []string{`{}`, `{"currency":"EUR","models":{"a":{"input":1.5,"output":2,"cached_input":0.5}}}`,
		`{"models":{"a":{"input":1},"a":{}}}`, `{"models":{"a":{"input":1e2}}}`, `[`, `{"models":{"":{}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := ledger.DecodePrices(data)
		if err != nil {
			var pe *ledger.PriceError
			if !errors.As(err, &pe) || pe.Code == "" {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		for m, p := range tab.Models {
			for _, v := range []int64{p.Input, p.Output, p.CachedInput} {
				if v < 0 || v > ledger.MaxPrice {
					t.Fatalf("%s: amount %d out of bounds", m, v)
				}
			}
		}
	})
}
