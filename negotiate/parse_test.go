package negotiate

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseJSON(t *testing.T) {
	for _, tc := range []struct {
		name, text      string
		rule            Rule // "" when it parses
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
		{name: "a duplicate key", text: `{"a":1,"b":2,"a":3}`, rule: RuleDuplicateKey},
		{name: "a duplicate key in a nested object", text: `{"a":{"b":1,"b":1}}`, rule: RuleDuplicateKey},
		{name: "keys equal after unescaping", text: `{"a":1,"\u0061":2}`, rule: RuleDuplicateKey},
		{name: "a leading zero", text: `01`, rule: RuleJSON},
		{name: "a plus sign", text: `+1`, rule: RuleJSON},
		{name: "a bare fraction point", text: `1.`, rule: RuleJSON},
		{name: "an empty exponent", text: `1e`, rule: RuleJSON},
		{name: "a lone high surrogate", text: `"\ud83d"`, rule: RuleJSON},
		{name: "a high surrogate and a letter", text: `"\ud83d\u0041"`, rule: RuleJSON},
		{name: "a lone low surrogate", text: `"\ude00"`, rule: RuleJSON},
		{name: "a bad escape", text: `"\x"`, rule: RuleJSON},
		{name: "a raw tab", text: "\"a\tb\"", rule: RuleJSON},
		{name: "an unterminated string", text: `"abc`, rule: RuleJSON},
		{name: "a trailing comma", text: `[1,]`, rule: RuleJSON},
		{name: "two values", text: `1 2`, rule: RuleJSON},
		{name: "empty", text: ``, rule: RuleJSON},
		{name: "too deep", text: strings.Repeat("[", maxNesting+1) + strings.Repeat("]", maxNesting+1), rule: RuleJSON},
		{name: "as deep as admitted", text: strings.Repeat("[", maxNesting) + strings.Repeat("]", maxNesting)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, p, err := parseJSON(tc.text)
			if tc.rule != "" {
				if err == nil || err.rule != tc.rule {
					t.Fatalf("got %v, want %s", err, tc.rule)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s at %d", err.reason, err.off)
			}
			if p.spaced != tc.spaced || p.escaped != tc.escaped {
				t.Errorf("spaced %v escaped %v", p.spaced, p.escaped)
			}
			// Strings decode as encoding/json decodes them.
			if n.kind == jString {
				var want string
				if err := json.Unmarshal([]byte(tc.text), &want); err != nil || n.text != want {
					t.Errorf("text %q, want %q (%v)", n.text, want, err)
				}
			}
		})
	}
}

func TestParseKeepsNumberTokens(t *testing.T) {
	n, _, err := parseJSON(`[18446744073709551616,-9223372036854775809,1.50,2e+10]`)
	if err != nil {
		t.Fatal(err.reason)
	}
	for i, want := range []struct {
		text      string
		frac, exp bool
	}{{"18446744073709551616", false, false}, {"-9223372036854775809", false, false}, {"1.50", true, false}, {"2e+10", false, true}} {
		if e := n.elems[i]; e.text != want.text || e.frac != want.frac || e.exp != want.exp {
			t.Errorf("element %d: %+v", i, e)
		}
	}
}
