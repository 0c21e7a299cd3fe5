package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// doc has a field of every kind Decode fills.
type doc struct {
	S    string            `json:"s"`
	I    int8              `json:"i"`
	U    uint16            // by its Go name
	F    float64           `json:"f,omitempty"`
	B    bool              `json:"b"`
	P    *int64            `json:"p"`
	L    []string          `json:"l"`
	M    map[string]int    `json:"m"`
	A    any               `json:"a"`
	R    json.RawMessage   `json:"r"`
	N    json.Number       `json:"n"`
	Sub  *sub              `json:"sub"`
	Subs []sub             `json:"subs"`
	MS   map[string]string `json:"ms"`
	Skip string            `json:"-"`
	//lint:ignore U1000 an unexported field is never filled: the tests name it in a text
	priv string
}

type sub struct {
	X string `json:"x"`
}

func TestDecode(t *testing.T) {
	seven := int64(7)
	for _, tc := range []struct {
		name, text string
		strict     bool
		want       doc
		unknown    bool // want an unknown-field DecodeError
		decodeErr  bool // want another DecodeError
		syntaxErr  bool
	}{
		{name: "every kind", text: `{"s":"a\u00e9","i":-8,"U":65535,"f":2.5e1,"b":true,"p":7,"l":["x","y"],"m":{"k":1},` +
			`"a":{"z":[1,"w",null,false]},"r": [1, 2] ,"n":-0.5,"sub":{"x":"q"},"subs":[{"x":"1"}],"ms":{"a":"b"}}`,
			want: doc{S: "aé", I: -8, U: 65535, F: 25, B: true, P: &seven, L: []string{"x", "y"}, M: map[string]int{"k": 1},
				A: map[string]any{"z": []any{1.0, "w", nil, false}}, R: json.RawMessage(`[1, 2]`), N: "-0.5", Sub: &sub{X: "q"},
				Subs: []sub{{X: "1"}}, MS: map[string]string{"a": "b"}}},
		{name: "names without regard to case", text: `{"S":"a","u":1,"SUB":{"X":"y"}}`, want: doc{S: "a", U: 1, Sub: &sub{X: "y"}}},
		{name: "the exact name first", text: `{"s":"exact","S":"folded"}`, want: doc{S: "folded"}},
		{name: "a later duplicate wins", text: `{"s":"1","s":"2","m":{"k":1,"k":2}}`, want: doc{S: "2", M: map[string]int{"k": 2}}},
		{name: "null", text: `{"s":null,"p":null,"l":null,"a":null,"sub":null}`, want: doc{}},
		{name: "a number in a string for json.Number", text: `{"n":"12"}`, want: doc{N: "12"}},
		{name: "unknown member kept out", text: `{"zz":1,"s":"a"}`, want: doc{S: "a"}},
		{name: "unknown member refused", text: `{"s":"a","zz":1}`, strict: true, unknown: true},
		{name: "a skipped field is unknown", text: `{"Skip":"x"}`, strict: true, unknown: true},
		{name: "unexported field is unknown", text: `{"priv":"x"}`, strict: true, unknown: true},
		{name: "string for an int", text: `{"i":"1"}`, decodeErr: true},
		{name: "overflow", text: `{"i":128}`, decodeErr: true},
		{name: "fraction for an int", text: `{"i":1.0}`, decodeErr: true},
		{name: "negative for a uint", text: `{"U":-1}`, decodeErr: true},
		{name: "float out of range", text: `{"f":1e400}`, decodeErr: true},
		{name: "float out of range in an any", text: `{"a":[1e400]}`, decodeErr: true},
		{name: "number for a string", text: `{"s":1}`, decodeErr: true},
		{name: "string for a bool", text: `{"b":"true"}`, decodeErr: true},
		{name: "object for a list", text: `{"l":{}}`, decodeErr: true},
		{name: "list for an object", text: `[]`, decodeErr: true},
		{name: "a non-number string for json.Number", text: `{"n":"x"}`, decodeErr: true},
		{name: "an element of the wrong type", text: `{"l":["a",1]}`, decodeErr: true},
		{name: "trailing data", text: `{} {}`, syntaxErr: true},
		{name: "lone surrogate", text: `{"s":"\ud800"}`, syntaxErr: true},
		{name: "empty", text: ``, syntaxErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got doc
			err := Decode(tc.text, &got, DecodeOptions{DisallowUnknownFields: tc.strict})
			var de *DecodeError
			var se *SyntaxError
			switch {
			case tc.unknown:
				if !errors.As(err, &de) || !de.Unknown {
					t.Fatalf("Decode = %v, want an unknown field", err)
				}
			case tc.decodeErr:
				if !errors.As(err, &de) || de.Unknown {
					t.Fatalf("Decode = %v, want a DecodeError", err)
				}
			case tc.syntaxErr:
				if !errors.As(err, &se) {
					t.Fatalf("Decode = %v, want a SyntaxError", err)
				}
			case err != nil:
				t.Fatal(err)
			case !reflect.DeepEqual(got, tc.want):
				t.Fatalf("Decode = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// UseNumber keeps a number's token in an any, as encoding/json's Decoder.UseNumber does.
func TestDecodeUseNumber(t *testing.T) {
	var got map[string]any
	if err := Decode(`{"n":9007199254740993,"l":[1e400,-0.0],"o":{"z":null}}`, &got, DecodeOptions{UseNumber: true}); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"n": json.Number("9007199254740993"), "l": []any{json.Number("1e400"), json.Number("-0.0")}, "o": map[string]any{"z": nil}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode = %#v, want %#v", got, want)
	}
}

// Types Decode cannot fill as encoding/json would are refused, never half-filled silently.
func TestDecodeRefusesTypes(t *testing.T) {
	type embedded struct{ sub }
	type stringOpt struct {
		N int `json:"n,string"`
	}
	for _, tc := range []struct {
		name string
		v    any
	}{
		{"not a pointer", doc{}},
		{"nil pointer", (*doc)(nil)},
		{"embedded struct", &embedded{}},
		{"the string option", &stringOpt{}},
		{"its own decoding", &struct{ T time.Time }{}},
		{"a channel", &struct{ C chan int }{}},
		{"int map keys", &map[int]string{}},
		{"an interface with methods", &struct{ E error }{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var de *DecodeError
			if err := Decode(`{"n":"1","T":"2020-01-01T00:00:00Z","C":1,"E":1,"1":"a","x":"y"}`, tc.v, DecodeOptions{}); !errors.As(err, &de) {
				t.Fatalf("Decode = %v, want a DecodeError", err)
			}
		})
	}
}

// FuzzDecode holds Decode to encoding/json (a Decoder with DisallowUnknownFields, and
// Unmarshal) on every valid UTF-8 text Parse admits: both refuse, or both fill the same
// value. A text Parse refuses is a SyntaxError.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"s":"a","i":1,"U":2,"f":1.5,"b":false,"p":3,"l":["x"],"m":{"a":1},"a":[{}],"r":{"q":[1]},"n":"1e3","sub":{"x":""},"subs":[{}],"ms":{}}`,
		`{"S":"a","ſ":"b","K":1,"k":2}`, `{"i":-129}`, `{"U":1e2}`, `{"p":null,"zz":[]}`, `{"n":"-"}`, `null`, `[1]`, `{"l":[null]}`,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, text string, strict bool) {
		var got doc
		err := Decode(text, &got, DecodeOptions{DisallowUnknownFields: strict})
		if _, _, perr := Parse(text, Options{}); perr != nil {
			if !errors.As(err, new(*SyntaxError)) {
				t.Fatalf("Decode = %v on a text Parse refuses", err)
			}
			return
		}
		if !utf8.ValidString(text) {
			return // encoding/json replaces invalid UTF-8; this reader keeps the bytes
		}
		var want doc
		dec := json.NewDecoder(strings.NewReader(text))
		if strict {
			dec.DisallowUnknownFields()
		}
		werr := dec.Decode(&want)
		if (err == nil) != (werr == nil) {
			t.Fatalf("Decode(%q) = %v, encoding/json %v", text, err, werr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("Decode(%q) = %+v, encoding/json %+v", text, got, want)
		}
		if err == nil && got.R != nil && !bytes.Equal(got.R, want.R) {
			t.Fatalf("raw %q, encoding/json %q", got.R, want.R)
		}
		var gotAny, wantAny any
		err = Decode(text, &gotAny, DecodeOptions{UseNumber: strict})
		dec = json.NewDecoder(strings.NewReader(text))
		if strict {
			dec.UseNumber()
		}
		werr = dec.Decode(&wantAny)
		if (err == nil) != (werr == nil) || err == nil && !reflect.DeepEqual(gotAny, wantAny) {
			t.Fatalf("Decode(%q) into any = %#v, %v; encoding/json %#v, %v", text, gotAny, err, wantAny, werr)
		}
	})
}
