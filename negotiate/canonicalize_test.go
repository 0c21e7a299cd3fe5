package negotiate_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
	"github.com/beamagents/beamagents/negotiate"
)

// canonicalRefund is the value part of the canonical document every providerRefund variant
// below canonicalizes to.
const canonicalRefund = `{"case":"assist.refund","fields":{"assist.refund.order_id":"A1","assist.refund.amount_minor":"100",` +
	`"assist.refund.ledger_delta":"-5","assist.refund.priority":"0","assist.refund.receipt":[0,255],` +
	`"assist.refund.total":{"fields":{"assist.money.currency":"EUR","assist.money.minor_units":"9007199254740993"}},` +
	`"assist.refund.notify":{"case":"assist.channel.none","fields":{}},"assist.refund.note":"ok","assist.refund.reason":"7",` +
	`"assist.refund.big":"18446744073709551615"}}`

// providerRefund is how a provider might write it: indented, no envelope, members out of
// order, integers as JSON numbers (one of them beyond float64's exact range), no final LF.
const providerRefund = `{
  "fields": {
    "assist.refund.order_id": "A1",
    "assist.refund.amount_minor": 100,
    "assist.refund.ledger_delta": -5,
    "assist.refund.priority": 0,
    "assist.refund.receipt": [0, 255],
    "assist.refund.total": {"fields": {"assist.money.minor_units": 9007199254740993, "assist.money.currency": "EUR"}},
    "assist.refund.notify": {"fields": {}, "case": "assist.channel.none"},
    "assist.refund.note": "ok",
    "assist.refund.reason": "7",
    "assist.refund.big": 18446744073709551615
  },
  "case": "assist.refund"
}`

func canonicalDoc(s *interaction.Schema, value string) string {
	return `{"schema":"beam_agents.interaction-value.v1","root_type_id":"` + s.RootTypeID() + `","schema_digest":"` + s.Digest() + `","value":` + value + "}\n"
}

func TestCanonicalizeAdmits(t *testing.T) {
	s := proposalSchema(t)
	canon := canonicalDoc(s, canonicalRefund)
	reply := `{"case":"assist.reply","fields":{"assist.reply.text":"%s","assist.reply.final":true}}`
	withText := func(text string) string { return strings.Replace(reply, "%s", text, 1) }
	for _, tc := range []struct {
		name, text, want string
		applied          []string
	}{
		{name: "the canonical document itself", text: canon, want: canon},
		{name: "without the final LF", text: strings.TrimSuffix(canon, "\n"), want: canon, applied: []string{"final_lf"}},
		{name: "with CRLF", text: strings.TrimSuffix(canon, "\n") + "\r\n", want: canon, applied: []string{"whitespace"}},
		{name: "provider style", text: providerRefund, want: canon,
			applied: []string{"envelope", "final_lf", "integer_number", "key_order", "whitespace"}},
		{name: "envelope members in another order", text: `{"value":` + canonicalRefund + `,"schema_digest":"` + s.Digest() +
			`","root_type_id":"assist.proposal","schema":"beam_agents.interaction-value.v1"}` + "\n", want: canon, applied: []string{"key_order"}},
		{name: "negative zero as a number", text: strings.Replace(providerRefund, `"assist.refund.priority": 0`, `"assist.refund.priority": -0`, 1), want: canon,
			applied: []string{"envelope", "final_lf", "integer_number", "key_order", "negative_zero", "whitespace"}},
		{name: "negative zero as a string", text: strings.Replace(canon, `"assist.refund.priority":"0"`, `"assist.refund.priority":"-0"`, 1), want: canon,
			applied: []string{"negative_zero"}},
		{name: "extreme integers", text: strings.Replace(strings.Replace(canon, `"assist.refund.ledger_delta":"-5"`, `"assist.refund.ledger_delta":-9223372036854775808`, 1),
			`"assist.refund.big":"18446744073709551615"`, `"assist.refund.big":18446744073709551615`, 1),
			want:    strings.Replace(canon, `"assist.refund.ledger_delta":"-5"`, `"assist.refund.ledger_delta":"-9223372036854775808"`, 1),
			applied: []string{"integer_number"}},
		{name: "non-canonical escapes", text: canonicalDoc(s, withText(`\u0041\/\u00e9\ud83d\ude00\u001F`)),
			want: canonicalDoc(s, withText("A/é😀\\u001f")), applied: []string{"string_escape"}},
		{name: "canonical escapes stay", text: canonicalDoc(s, withText(`\"\\\b\t\n\f\r\u0001`+"\u007f")),
			want: canonicalDoc(s, withText(`\"\\\b\t\n\f\r\u0001`+"\u007f"))},
		{name: "an escaped key", text: canonicalDoc(s, `{"case":"assist.reply","fields":{"assist.reply.te\u0078t":"hi","assist.reply.final":true}}`),
			want: canonicalDoc(s, withText("hi")), applied: []string{"string_escape"}},
		{name: "multi-byte text at its bound", text: strings.Replace(providerRefund, `"EUR"`, `"€"`, 1),
			want: strings.Replace(canon, `"EUR"`, `"€"`, 1), applied: []string{"envelope", "final_lf", "integer_number", "key_order", "whitespace"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := negotiate.Canonicalize(s, []byte(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			if string(c.Document) != tc.want {
				t.Fatalf("document\n%s\nwant\n%s", c.Document, tc.want)
			}
			if strings.Join(c.Applied, ",") != strings.Join(tc.applied, ",") {
				t.Errorf("applied %v, want %v", c.Applied, tc.applied)
			}
			if string(c.Value.Canonical()) != tc.want {
				t.Errorf("the value's document differs")
			}
			if (len(c.Applied) == 0) != (tc.text == tc.want) {
				t.Errorf("Applied %v for a text that is canonical: %v", c.Applied, tc.text == tc.want)
			}
		})
	}
}

func TestCanonicalizeRefuses(t *testing.T) {
	s := proposalSchema(t)
	field := func(name, from, to string) string {
		old := `"assist.refund.` + name + `": ` + from
		if !strings.Contains(providerRefund, old) {
			t.Fatalf("fixture lacks %s", old)
		}
		return strings.Replace(providerRefund, old, `"assist.refund.`+name+`": `+to, 1)
	}
	for _, tc := range []struct {
		name, text string
		rule       negotiate.Rule
		path       string
	}{
		{"a fraction", field("amount_minor", "100", "100.0"), negotiate.RuleIntegerFraction, `$.value.fields["assist.refund.amount_minor"]`},
		{"an exponent", field("amount_minor", "100", "1e2"), negotiate.RuleIntegerExponent, ""},
		{"a capital exponent with a sign", field("amount_minor", "100", "1E+2"), negotiate.RuleIntegerExponent, ""},
		{"a fraction in a string", field("amount_minor", "100", `"1.5"`), negotiate.RuleIntegerFraction, ""},
		{"an exponent in a string", field("amount_minor", "100", `"1e2"`), negotiate.RuleIntegerExponent, ""},
		{"a leading zero in a string", field("amount_minor", "100", `"0100"`), negotiate.RuleIntegerSyntax, ""},
		{"a plus sign in a string", field("amount_minor", "100", `"+100"`), negotiate.RuleIntegerSyntax, ""},
		{"a space in a string", field("amount_minor", "100", `" 100"`), negotiate.RuleIntegerSyntax, ""},
		{"an empty string", field("amount_minor", "100", `""`), negotiate.RuleIntegerSyntax, ""},
		{"below a declared minimum", field("amount_minor", "100", "0"), negotiate.RuleIntegerRange, ""},
		{"above a declared maximum", field("amount_minor", "100", "1000001"), negotiate.RuleIntegerRange, ""},
		{"above a u8", field("reason", `"7"`, "256"), negotiate.RuleIntegerRange, ""},
		{"a negative u64", field("big", "18446744073709551615", "-1"), negotiate.RuleIntegerRange, ""},
		{"above u64", field("big", "18446744073709551615", "18446744073709551616"), negotiate.RuleIntegerRange, ""},
		{"below i64", field("ledger_delta", "-5", "-9223372036854775809"), negotiate.RuleIntegerRange, ""},
		{"above i64", field("ledger_delta", "-5", "9223372036854775808"), negotiate.RuleIntegerRange, ""},
		{"a bool for an integer", field("priority", "0", "false"), negotiate.RuleRepresentation, ""},
		{"null for an integer", field("priority", "0", "null"), negotiate.RuleNull, `$.value.fields["assist.refund.priority"]`},
		{"null for a string", field("note", `"ok"`, "null"), negotiate.RuleNull, ""},
		{"null for a nested record", field("total", `{"fields": {"assist.money.minor_units": 9007199254740993, "assist.money.currency": "EUR"}}`, "null"), negotiate.RuleNull, ""},
		{"an integer for a string", field("note", `"ok"`, "7"), negotiate.RuleRepresentation, ""},
		{"a string over its bound", field("order_id", `"A1"`, `"`+strings.Repeat("x", 33)+`"`), negotiate.RuleStringBytes, ""},
		{"escapes over the bound", strings.Replace(providerRefund, `"EUR"`, `"\u00e9\u00e9"`, 1), negotiate.RuleStringBytes, ""},
		{"a byte above 255", field("receipt", "[0, 255]", "[256]"), negotiate.RuleBytesElement, `$.value.fields["assist.refund.receipt"][0]`},
		{"a negative byte", field("receipt", "[0, 255]", "[0, -1]"), negotiate.RuleBytesElement, ""},
		{"a fractional byte", field("receipt", "[0, 255]", "[1.0]"), negotiate.RuleBytesElement, ""},
		{"a byte as a string", field("receipt", "[0, 255]", `["1"]`), negotiate.RuleBytesElement, ""},
		{"bytes as base64", field("receipt", "[0, 255]", `"AP8="`), negotiate.RuleRepresentation, ""},
		{"too many bytes", field("receipt", "[0, 255]", "["+strings.Repeat("1,", 64)+"1]"), negotiate.RuleBytesLength, ""},
		{"a missing field", strings.Replace(providerRefund, `"assist.refund.note": "ok",`, "", 1), negotiate.RuleFieldsMissing, `$.value.fields["assist.refund.note"]`},
		{"an undeclared field", strings.Replace(providerRefund, `"assist.refund.note": "ok",`, `"assist.refund.note": "ok", "assist.refund.confidence": 9,`, 1), negotiate.RuleFieldsUnknown, `$.value.fields["assist.refund.confidence"]`},
		{"a duplicate field", strings.Replace(providerRefund, `"assist.refund.note": "ok",`, `"assist.refund.note": "ok", "assist.refund.note": "ok",`, 1), negotiate.RuleDuplicateKey, ""},
		{"a duplicate case", strings.Replace(providerRefund, `"case": "assist.refund"`, `"case": "assist.refund", "case": "assist.refund"`, 1), negotiate.RuleDuplicateKey, ""},
		{"an unknown case", strings.Replace(providerRefund, `"case": "assist.refund"`, `"case": "assist.cancel"`, 1), negotiate.RuleCase, "$.value.case"},
		{"a null case", strings.Replace(providerRefund, `"case": "assist.refund"`, `"case": null`, 1), negotiate.RuleNull, ""},
		{"a case that is not a string", strings.Replace(providerRefund, `"case": "assist.refund"`, `"case": 3`, 1), negotiate.RuleCase, ""},
		{"no case", strings.Replace(providerRefund, `,
  "case": "assist.refund"`, "", 1), negotiate.RuleCase, ""},
		{"a nested variant without fields", field("notify", `{"fields": {}, "case": "assist.channel.none"}`, `{"case": "assist.channel.none"}`), negotiate.RuleRepresentation, ""},
		{"metadata beside the value", strings.Replace(providerRefund, `"case": "assist.refund"`, `"case": "assist.refund", "confidence": 0.9`, 1), negotiate.RuleRepresentation, ""},
		{"a top-level array", "[" + providerRefund + "]", negotiate.RuleRepresentation, ""},
		{"an envelope for another schema", `{"schema":"beam_agents.interaction-value.v1","root_type_id":"assist.proposal","schema_digest":"sha256:00","value":` + canonicalRefund + "}", negotiate.RuleEnvelope, ""},
		{"an envelope without root_type_id", `{"schema":"beam_agents.interaction-value.v1","schema_digest":"` + s.Digest() + `","value":` + canonicalRefund + "}", negotiate.RuleEnvelope, ""},
		{"an envelope with metadata", `{"schema":"beam_agents.interaction-value.v1","root_type_id":"assist.proposal","schema_digest":"` + s.Digest() + `","model":"x","value":` + canonicalRefund + "}", negotiate.RuleEnvelope, ""},
		{"invalid JSON", providerRefund[:len(providerRefund)-1], negotiate.RuleJSON, ""},
		{"trailing data", providerRefund + " {}", negotiate.RuleJSON, ""},
		{"a markdown fence", "```json\n" + providerRefund + "\n```", negotiate.RuleJSON, ""},
		{"a lone surrogate", strings.Replace(providerRefund, `"ok"`, `"\ud83d"`, 1), negotiate.RuleJSON, ""},
		{"a lone low surrogate", strings.Replace(providerRefund, `"ok"`, `"\ude00x"`, 1), negotiate.RuleJSON, ""},
		{"a raw control character", strings.Replace(providerRefund, `"ok"`, "\"o\x01k\"", 1), negotiate.RuleJSON, ""},
		{"a byte order mark", "\uFEFF" + providerRefund, negotiate.RuleJSON, ""},
		{"nesting deeper than any schema", strings.Repeat("[", 40) + strings.Repeat("]", 40), negotiate.RuleJSON, ""},
		{"a duplicate among many members", manyMembers(20000, "k5"), negotiate.RuleDuplicateKey, ""},
		{"many members", manyMembers(20000, ""), negotiate.RuleFieldsUnknown, `$.value.fields["k0"]`},
		{"not UTF-8", strings.Replace(providerRefund, "ok", "o\xffk", 1), negotiate.RuleUTF8, ""},
		{"too long", providerRefund + strings.Repeat(" ", negotiate.MaxInputBytes), negotiate.RuleInputBytes, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := negotiate.Canonicalize(s, []byte(tc.text))
			var e *negotiate.Error
			if !errors.As(err, &e) || e.Code != negotiate.CodeCanonicalize || e.Rule != tc.rule || c != nil {
				t.Fatalf("got %v, want %s", err, tc.rule)
			}
			if tc.path != "" && e.Path != tc.path {
				t.Errorf("path %s, want %s", e.Path, tc.path)
			}
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("multi-line error %q", err)
			}
		})
	}
}

// manyMembers is a reply whose fields object has n undeclared members, then dup again if set.
func manyMembers(n int, dup string) string {
	var b strings.Builder
	b.WriteString(`{"case":"assist.reply","fields":{`)
	for i := range n {
		fmt.Fprintf(&b, `"k%d":0,`, i)
	}
	if dup != "" {
		b.WriteString(`"` + dup + `":0,`)
	}
	b.WriteString(`"assist.reply.final":true}}`)
	return b.String()
}

// TestCanonicalizeDocumentBound: a text within MaxInputBytes whose canonical document would
// exceed the decoder's bound is refused by canonicalization itself, never handed over.
func TestCanonicalizeDocumentBound(t *testing.T) {
	var src strings.Builder
	src.WriteString("syntax = \"proto3\";\npackage big.v1;\nimport \"beam_agents/v1/interaction_options.proto\";\n")
	src.WriteString("message Big {\n  option (beam_agents.v1.type_id) = \"big\";\n")
	var text strings.Builder
	text.WriteString(`{"fields":{`)
	for i := range 17 {
		if i > 0 {
			text.WriteString(",")
		}
		id := fmt.Sprintf("big.s%d", i)
		fmt.Fprintf(&src, "  string s%d = %d [(beam_agents.v1.field_id) = %q];\n", i, i+1, id)
		text.WriteString(`"` + id + `":"` + strings.Repeat("x", 4000) + `"`)
	}
	src.WriteString("}\n")
	text.WriteString("}}")
	s, err := interaction.Compile(prototest.Message(t, prototest.CompileSources(t, map[string]string{"big.proto": src.String()}), "big.v1.Big"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = negotiate.Canonicalize(s, []byte(text.String()))
	if !errors.Is(err, &negotiate.Error{Code: negotiate.CodeCanonicalize, Rule: negotiate.RuleDocumentBytes}) {
		t.Fatalf("got %v", err)
	}
}

func TestCanonicalizeNilSchema(t *testing.T) {
	if _, err := negotiate.Canonicalize(nil, []byte("{}")); !errors.Is(err, negotiate.ErrInvalid) {
		t.Fatal(err)
	}
}
