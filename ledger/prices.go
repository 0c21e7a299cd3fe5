package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Price is what one model costs, in micro-units of the table's currency per million tokens.
type Price struct {
	Input       int64 `json:"input"`        // per million input tokens not read from a prompt cache
	Output      int64 `json:"output"`       // per million output tokens
	CachedInput int64 `json:"cached_input"` // per million input tokens read from the provider's prompt cache
}

// Table is a price table: the price of each model id (as the agent or a fallback chain names
// it). It is a plain value, safe to copy into a pipeline's steps.
type Table struct {
	Currency string           `json:"currency,omitempty"`
	Models   map[string]Price `json:"models,omitempty"`
}

// Lookup returns the price of model and whether the table has one.
func (t Table) Lookup(model string) (Price, bool) {
	p, ok := t.Models[model]
	return p, ok
}

// Bounds of a price file.
const (
	MaxPriceFileBytes = 1 << 20
	MaxModels         = 10_000
	MaxModelIDBytes   = 256
	MaxCurrencyBytes  = 16
	// MaxPrice bounds one amount: a million currency units per million tokens, in micro-units.
	MaxPrice = 1_000_000 * micro
)

const micro = 1_000_000

// Code names why a price file was refused; the codes are stable.
type Code string

// Price file refusals.
const (
	CodeTooLarge       Code = "prices_too_large"       // the file is over MaxPriceFileBytes
	CodeSyntax         Code = "prices_syntax"          // not one JSON object, or trailing data
	CodeUnknownField   Code = "prices_unknown_field"   // a field the shape does not have
	CodeDuplicateModel Code = "prices_duplicate_model" // a model id given twice
	CodeBadModel       Code = "prices_bad_model"       // an empty, non-UTF-8 or overlong model id, or too many models
	CodeBadAmount      Code = "prices_bad_amount"      // an amount that is not an exact non-negative decimal within MaxPrice
	CodeBadCurrency    Code = "prices_bad_currency"    // a currency that is not a short string
)

// ErrPrices matches every *PriceError (errors.Is).
var ErrPrices = errors.New("ledger: invalid price file")

// PriceError is a refused price file: Code says why, Where names the place ("models.gpt-4o.input").
type PriceError struct {
	Code   Code
	Where  string
	Detail string
}

func (e *PriceError) Error() string {
	where := ""
	if e.Where != "" {
		where = " at " + e.Where
	}
	return fmt.Sprintf("price file%s: %s (%s)", where, e.Detail, e.Code)
}

// Is makes every PriceError match ErrPrices.
func (e *PriceError) Is(target error) bool { return target == ErrPrices }

func priceErr(code Code, where, format string, a ...any) error {
	return &PriceError{Code: code, Where: where, Detail: fmt.Sprintf(format, a...)}
}

// DecodePrices decodes a price file (docs/costs.md):
//
//	{"currency": "USD", "models": {"MODEL": {"input": 2.5, "output": 10, "cached_input": 1.25}}}
//
// Amounts are currency units per million tokens, written as JSON numbers that are exact
// decimals (at most six fractional digits, no exponent); cached_input defaults to input.
// Anything else is refused with a *PriceError.
func DecodePrices(data []byte) (Table, error) {
	if len(data) > MaxPriceFileBytes {
		return Table{}, priceErr(CodeTooLarge, "", "%d bytes; at most %d", len(data), MaxPriceFileBytes)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	t := Table{Models: map[string]Price{}}
	err := object(d, "", func(key string) error {
		switch key {
		case "currency":
			return currency(d, &t)
		case "models":
			return models(d, &t)
		}
		return priceErr(CodeUnknownField, key, "unknown field")
	})
	if err != nil {
		return Table{}, err
	}
	if _, err := d.Token(); err != io.EOF {
		return Table{}, priceErr(CodeSyntax, "", "data after the object")
	}
	return t, nil
}

func currency(d *json.Decoder, t *Table) error {
	tok, err := d.Token()
	s, ok := tok.(string)
	if err != nil || !ok || len(s) > MaxCurrencyBytes || !utf8.ValidString(s) {
		return priceErr(CodeBadCurrency, "currency", "not a string of at most %d bytes", MaxCurrencyBytes)
	}
	t.Currency = s
	return nil
}

func models(d *json.Decoder, t *Table) error {
	return object(d, "models", func(id string) error {
		where := "models." + id
		switch _, dup := t.Models[id]; {
		case dup:
			return priceErr(CodeDuplicateModel, where, "model given twice")
		case id == "" || len(id) > MaxModelIDBytes || !utf8.ValidString(id):
			return priceErr(CodeBadModel, where, "a model id is 1 to %d bytes of UTF-8", MaxModelIDBytes)
		case len(t.Models) == MaxModels:
			return priceErr(CodeBadModel, where, "more than %d models", MaxModels)
		}
		p, err := price(d, where)
		if err != nil {
			return err
		}
		t.Models[id] = p
		return nil
	})
}

func price(d *json.Decoder, where string) (Price, error) {
	var p Price
	cached := false
	seen := map[string]bool{}
	err := object(d, where, func(key string) error {
		w := where + "." + key
		if seen[key] {
			return priceErr(CodeSyntax, w, "field given twice")
		}
		seen[key] = true
		var dst *int64
		switch key {
		case "input":
			dst = &p.Input
		case "output":
			dst = &p.Output
		case "cached_input":
			dst, cached = &p.CachedInput, true
		default:
			return priceErr(CodeUnknownField, w, "unknown field")
		}
		tok, err := d.Token()
		n, ok := tok.(json.Number)
		if err != nil || !ok {
			return priceErr(CodeBadAmount, w, "not a number")
		}
		v, ok := Micros(string(n))
		if !ok || v > MaxPrice {
			return priceErr(CodeBadAmount, w, "%s is not a non-negative decimal of at most 6 fractional digits, at most %d", n, MaxPrice/micro)
		}
		*dst = v
		return nil
	})
	if !cached {
		p.CachedInput = p.Input
	}
	return p, err
}

// object reads one JSON object from d, calling field for each key with the decoder at its
// value; field must consume the value.
func object(d *json.Decoder, where string, field func(key string) error) error {
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return priceErr(CodeSyntax, where, "not a JSON object")
	}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return priceErr(CodeSyntax, where, "%v", err)
		}
		if err := field(tok.(string)); err != nil {
			return err
		}
	}
	if tok, err := d.Token(); err != nil || tok != json.Delim('}') {
		return priceErr(CodeSyntax, where, "unterminated object")
	}
	return nil
}

// Micros parses an exact non-negative decimal ("2.5", "10", "0.000001") into micro-units;
// false when s has a sign, an exponent, more than six fractional digits or too many digits.
func Micros(s string) (int64, bool) {
	whole, frac, dot := cutDot(s)
	if whole == "" || len(whole) > 12 || len(frac) > 6 || (dot && frac == "") || (len(whole) > 1 && whole[0] == '0') {
		return 0, false
	}
	var v int64
	for _, c := range whole + frac {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	for range 6 - len(frac) {
		v *= 10
	}
	return v, true
}

func cutDot(s string) (whole, frac string, dot bool) {
	for i := range len(s) {
		if s[i] == '.' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
