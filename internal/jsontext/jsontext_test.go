package jsontext

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/internal/canonjson"
)

func TestParseAccepts(t *testing.T) {
	for _, tc := range []struct {
		name, text      string
		spaced, escaped bool
	}{
		{name: "compact", text: `{"a":[1,-0,2.5,1e3,-1E-2,true,false,null,"x"]}`},
		{name: "spaced", text: " {\"a\" :\t[ 1 ,\r\n2 ] }\n", spaced: true},
		{name: "canonical escapes", text: `"\"\\\b\f\n\r\t\u0001\u001f"`},
		{name: "a solidus escape", text: `"\/"`, escaped: true},
		{name: "an escaped letter", text: `"\u0041"`, escaped: true},
		{name: "an uppercase control escape", text: `"\u001F"`, escaped: true},
		{name: "an escaped short control", text: `"\u000a"`, escaped: true},
		{name: "a surrogate pair", text: `"\ud83d\ude00"`, escaped: true},
		{name: "an escaped key", text: `{"\u0061":1}`, escaped: true},
		{name: "duplicates kept without the option", text: `{"a":1,"a":2}`},
		{name: "as deep as admitted", text: strings.Repeat("[", DefaultMaxNesting) + strings.Repeat("]", DefaultMaxNesting)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, dev, err := Parse(tc.text, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if dev.Spaced != tc.spaced || dev.Escaped != tc.escaped {
				t.Errorf("deviations %+v", dev)
			}
			// Strings decode as encoding/json decodes them.
			if n.Kind == String {
				var want string
				if err := json.Unmarshal([]byte(tc.text), &want); err != nil || n.Text != want {
					t.Errorf("text %q, want %q (%v)", n.Text, want, err)
				}
			}
		})
	}
}

func TestParseKeepsTokensAndOrder(t *testing.T) {
	n, _, err := Parse(`[18446744073709551616,-9223372036854775809,1.50,2e+10,{"a":1,"b":2,"a":3}]`, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		text      string
		frac, exp bool
	}{{"18446744073709551616", false, false}, {"-9223372036854775809", false, false}, {"1.50", true, false}, {"2e+10", false, true}} {
		if e := n.Elems[i]; e.Kind != Number || e.Text != want.text || e.Frac != want.frac || e.Exp != want.exp {
			t.Errorf("element %d: %+v", i, e)
		}
	}
	o := n.Elems[4]
	if len(o.Members) != 3 || o.Members[1].Key != "b" || o.Last("a").Text != "3" || o.Last("z") != nil || o.Members[2].Offset != 67 {
		t.Errorf("object %+v", o)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		text      string
		o         Options
		offset    int
		reason    string
		duplicate bool
	}{
		{text: ``, reason: "unexpected end of input"},
		{text: `{`, offset: 1, reason: "expected a member name"},
		{text: `{"a"}`, offset: 4, reason: "expected ':'"},
		{text: `{"a":}`, offset: 5, reason: "invalid character '}'"},
		{text: `{"a":1,}`, offset: 7, reason: "expected a member name"},
		{text: `[1,]`, offset: 3, reason: "invalid character ']'"},
		{text: `[1 2]`, offset: 3, reason: "expected ',' or ']'"},
		{text: `01`, offset: 1, reason: "unexpected data after the top-level value"},
		{text: `1.`, offset: 2, reason: "invalid number: no digits after '.'"},
		{text: `1e`, offset: 2, reason: "invalid number: no digits in the exponent"},
		{text: `-`, offset: 1, reason: "invalid number"},
		{text: `+1`, reason: "invalid character '+'"},
		{text: `.5`, reason: "invalid character '.'"},
		{text: `"\x"`, offset: 2, reason: "invalid escape character 'x'"},
		{text: `"\u12"`, offset: 3, reason: `invalid \u escape`},
		{text: `"\ud800"`, offset: 7, reason: `lone high surrogate in a \u escape`},
		{text: `"\udc00"`, offset: 7, reason: `lone low surrogate in a \u escape`},
		{text: `"\ud800\u0041"`, offset: 13, reason: `lone high surrogate in a \u escape`},
		{text: "\"a\x01\"", offset: 2, reason: "unescaped control character in a string"},
		{text: `"abc`, offset: 4, reason: "unterminated string"},
		{text: `"\`, offset: 2, reason: "unterminated string"},
		{text: `tru`, reason: "invalid character 't'"},
		{text: `{} {}`, offset: 3, reason: "unexpected data after the top-level value"},
		{text: `{'a':1}`, offset: 1, reason: "expected a member name"},
		{text: `[1`, offset: 2, reason: "unexpected end of input in an array"},
		{text: `{"a":1`, offset: 6, reason: "unexpected end of input in an object"},
		{text: strings.Repeat("[", DefaultMaxNesting+1), offset: DefaultMaxNesting, reason: "nesting deeper than 128"},
		{text: `[[[]]]`, o: Options{MaxNesting: 2}, offset: 2, reason: "nesting deeper than 2"},
		{text: `{"a":1,"b":2,"a":3}`, o: Options{RejectDuplicates: true}, offset: 13, reason: `the member "a" occurs twice`, duplicate: true},
		{text: `{"a":{"b":1,"b":1}}`, o: Options{RejectDuplicates: true}, offset: 12, reason: `the member "b" occurs twice`, duplicate: true},
		{text: `{"a":1,"\u0061":2}`, o: Options{RejectDuplicates: true}, offset: 7, reason: `the member "a" occurs twice`, duplicate: true},
	} {
		t.Run(tc.text, func(t *testing.T) {
			n, _, err := Parse(tc.text, tc.o)
			se, ok := err.(*SyntaxError)
			if !ok {
				t.Fatalf("parsed as %+v (%v)", n, err)
			}
			if se.Offset != tc.offset || se.Reason != tc.reason || se.Duplicate != tc.duplicate {
				t.Errorf("got %+v", se)
			}
		})
	}
}

// TestDuplicatesBeyondTheScan: an object with more members than the scan covers still finds
// a duplicate (through the set).
func TestDuplicatesBeyondTheScan(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 3*dupLimit; i++ {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	b.WriteString(`"k1":0}`)
	if _, _, err := Parse(b.String(), Options{RejectDuplicates: true}); err == nil || !err.(*SyntaxError).Duplicate {
		t.Fatalf("got %v", err)
	}
	if _, _, err := Parse(strings.Replace(b.String(), `"k1":0`, `"kx":0`, 1), Options{RejectDuplicates: true}); err != nil {
		t.Fatal(err)
	}
}

// TestCanonicalWriterReadsBackCanonically: canonjson escapes exactly what this reader takes as
// canonical, and its output reads back as the same text.
func TestCanonicalWriterReadsBackCanonically(t *testing.T) {
	for c := 0; c < 0x80; c++ {
		s := string(rune(c))
		got := string(canonjson.AppendString(nil, s))
		var want string
		switch {
		case c == '"' || c == '\\':
			want = `"\` + s + `"`
		case c == '\b':
			want = `"\b"`
		case c == '\t':
			want = `"\t"`
		case c == '\n':
			want = `"\n"`
		case c == '\f':
			want = `"\f"`
		case c == '\r':
			want = `"\r"`
		case c < 0x20:
			want = fmt.Sprintf(`"\u%04x"`, c)
		default:
			want = `"` + s + `"`
		}
		if got != want {
			t.Errorf("%#x: %s, want %s", c, got, want)
		}
		if n, dev, err := Parse(got, Options{}); err != nil || n.Text != s || dev.Escaped {
			t.Errorf("%#x does not read back canonically", c)
		}
	}
	if got := string(canonjson.AppendString(nil, "é\u2028😀\u007f")); got != "\"é\u2028😀\u007f\"" {
		t.Errorf("non-ASCII is escaped: %s", got)
	}
}

func TestIsNumber(t *testing.T) {
	for s, want := range map[string]bool{"0": true, "-1.5e+3": true, "1e5": true, "": false, "01": false, "1.": false, "+1": false, "1 ": false, "e5": false} {
		if IsNumber(s) != want {
			t.Errorf("IsNumber(%q) = %v", s, !want)
		}
	}
}
