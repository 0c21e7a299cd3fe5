package negotiate_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/interaction/stream"
	"github.com/beamagents/beamagents/internal/jsontext"
	"github.com/beamagents/beamagents/negotiate"
)

func streamAdmitter(tb testing.TB, s *interaction.Schema, p negotiate.Protocol) *negotiate.Admitter {
	tb.Helper()
	m, err := negotiate.NewAdmitter(s, negotiate.Agreement{Protocol: p})
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// pushAll pushes text in chunks of n bytes (0: whole), stopping at the first refusal, and
// returns the stream and that refusal.
func pushAll(tb testing.TB, m *negotiate.Admitter, text []byte, n int) (*negotiate.Stream, error) {
	tb.Helper()
	st, err := m.NewStream()
	if err != nil {
		tb.Fatal(err)
	}
	if n <= 0 {
		n = len(text) + 1
	}
	for rest := text; len(rest) > 0; {
		c := rest[:min(n, len(rest))]
		rest = rest[len(c):]
		if err := st.Push(c); err != nil {
			return st, err
		}
	}
	return st, nil
}

func TestStreamCanonicalizes(t *testing.T) {
	s := proposalSchema(t)
	m := streamAdmitter(t, s, negotiate.TransformAll)
	reply := func(text string) string {
		return `{"case":"assist.reply","fields":{"assist.reply.text":` + text + `,"assist.reply.final":true}}`
	}
	lookup := func(limit string) string {
		return `{"case":"assist.lookup","fields":{"assist.lookup.order_id":"A1","assist.lookup.limit":` + limit + `,"assist.lookup.debug":""}}`
	}
	cases := []struct {
		name, text string
		want       stream.State // the streaming decoder's own verdict
		degraded   bool
	}{
		{"canonical value", reply(`"hi"`), stream.Accepted, false},
		{"whitespace and newlines", "{\n  \"case\": \"assist.reply\",\n  \"fields\": { \"assist.reply.text\": \"hi\", \"assist.reply.final\" : false }\n}\n", stream.Accepted, false},
		{"every representation, provider style", strings.Replace(providerRefund, `"fields": {}, "case": "assist.channel.none"`, `"case": "assist.channel.none", "fields": {}`, 1), stream.Incomplete, true},
		{"integer as a JSON number", lookup("42"), stream.Accepted, false},
		{"integer as a decimal string", lookup(`"42"`), stream.Accepted, false},
		{"negative zero as a number", lookup("-0"), stream.Accepted, false},
		{"negative zero as a string", lookup(`"-0"`), stream.Accepted, false},
		{"negative zero, escaped", lookup(`"\u002d0"`), stream.Accepted, false},
		{"negative integer", lookup("-17"), stream.Accepted, false},
		{"a string field's text starting with a minus", reply(`"-0"`), stream.Accepted, false},
		{"escapes re-escaped", reply(`"\u0048i \/ \u00e9 \ud83d\ude00 \u001f"`), stream.Accepted, false},
		{"reordered members degrade", `{"fields":{"assist.reply.text":"hi","assist.reply.final":true},"case":"assist.reply"}`, stream.Incomplete, true},
		{"integer out of range", lookup("99999999999999999999"), stream.Refused, false},
		{"fraction", lookup("1.5"), stream.Refused, false},
		{"exponent", lookup("1e3"), stream.Refused, false},
		{"negative zero with a fraction", lookup("-0.0"), stream.Refused, false},
		{"a minus alone", lookup(`"-"`), stream.Refused, false},
		{"unknown case", `{"case":"assist.delete_everything","fields":{}}`, stream.Refused, false},
		{"prose", `Sure! Here is the JSON you asked for`, stream.Refused, false},
		{"a number where a string is declared", reply("12345"), stream.Refused, false},
		{"a number where a bool is declared", `{"case":"assist.reply","fields":{"assist.reply.text":"hi","assist.reply.final":1}}`, stream.Refused, false},
		{"a string over its bound", `{"case":"assist.lookup","fields":{"assist.lookup.order_id":"` + strings.Repeat("x", 40) + `"}}`, stream.Refused, false},
	}
	for _, tc := range cases {
		for _, n := range []int{0, 1, 3, 7} {
			st, err := pushAll(t, m, []byte(tc.text), n)
			o := st.DecoderFinish()
			if err != nil && o.State() != stream.Refused {
				t.Fatalf("%s: a push refused (%v) but the decoder says %v", tc.name, err, o.State())
			}
			if o.State() != tc.want || st.Degraded() != tc.degraded {
				t.Errorf("%s (chunks of %d): %v degraded=%v (%v); want %v degraded=%v", tc.name, n, o.State(), st.Degraded(), o.Err(), tc.want, tc.degraded)
			}
			c, cerr := negotiate.Canonicalize(s, []byte(tc.text))
			if o.State() == stream.Accepted && (cerr != nil || !bytes.Equal(o.Value().Canonical(), c.Document)) {
				t.Errorf("%s: the stream's document differs from Canonicalize's (%v)", tc.name, cerr)
			}
			if o.State() == stream.Refused && cerr == nil {
				t.Errorf("%s: the stream refused what Canonicalize admits: %v", tc.name, o.Err())
			}
		}
	}
}

// TestStreamFinishIsAdmit: Finish is Admit on the text pushed, under every protocol; a push
// refusal comes back from Finish with a non-conforming receipt.
func TestStreamFinishIsAdmit(t *testing.T) {
	s := proposalSchema(t)
	texts := []string{canonicalDoc(s, canonicalRefund), providerRefund, `{"case":"assist.reply","fields":{"assist.reply.text":7}}`}
	for _, p := range []negotiate.Protocol{negotiate.NoProtocol, negotiate.FailFast, negotiate.TransformAll} {
		m := streamAdmitter(t, s, p)
		for _, text := range texts {
			st, perr := pushAll(t, m, []byte(text), 5)
			got, err := st.Finish()
			want, werr := m.Admit([]byte(text))
			if perr != nil {
				var r *stream.Refusal
				if !errors.As(err, &r) || werr == nil || got.Receipt == nil || got.Receipt.Conforming || got.Receipt.Reason != string(r.Code) {
					t.Errorf("%v %.30q: a push refused (%v); Finish gave %v, Admit %v", p, text, perr, err, werr)
				}
				continue
			}
			if (err == nil) != (werr == nil) || !bytes.Equal(got.Document, want.Document) || got.Receipt.Digest() != want.Receipt.Digest() {
				t.Errorf("%v %.30q: Finish %v, Admit %v", p, text, err, werr)
			}
		}
	}
}

// FuzzStream: whatever the text and its chunking, the stream never refuses a text the whole
// reading admits, when both accept the documents are the same, and it refuses no later than
// the whole reading: where the whole reading refuses a value of the wrong JSON type, or an
// integer field's number, the stream (unless a key out of order degraded it before) has
// refused by that value's first byte, or by the end of that number.
func FuzzStream(f *testing.F) {
	s := proposalSchema(f)
	for _, seed := range []string{
		providerRefund, canonicalDoc(s, canonicalRefund), canonicalRefund,
		`{"case":"assist.reply","fields":{"assist.reply.text":"hi","assist.reply.final":false}}`,
		`{"case":"assist.reply","fields":{"assist.reply.text":12345,"assist.reply.final":false}}`,
		`{"case":"assist.reply","fields":{"assist.reply.text":"hi","assist.reply.final":"true"}}`,
		`{"case":"assist.reply","fields":{"assist.reply.text":{"a":1},"assist.reply.final":[]}}`,
		`{"case":"assist.lookup","fields":{"assist.lookup.order_id":"A1","assist.lookup.limit": -0,"assist.lookup.debug":""}}`,
		`{"case":"assist.lookup","fields":{"assist.lookup.order_id":"A1","assist.lookup.limit":"-0","assist.lookup.debug":""}}`,
		`{"case":"assist.lookup","fields":{"assist.lookup.order_id":"A1","assist.lookup.limit":true,"assist.lookup.debug":""}}`,
		`{"case":"assist.lookup","fields":{"assist.lookup.order_id":"A1","assist.lookup.limit":1e3,"assist.lookup.debug":""}}`,
		"{ \"case\" : \"assist.reply\" , \"fields\" : {\"assist.reply.text\":\"k\\n\\u2028\",\"assist.reply.final\":null} }",
		`{"case":"assist.reply","fields":{"assist.reply.text":"\ud800","assist.reply.final":true}}`,
	} {
		f.Add([]byte(seed), uint8(3))
	}
	m := streamAdmitter(f, s, negotiate.TransformAll)
	f.Fuzz(func(t *testing.T, text []byte, n uint8) {
		c, cerr := negotiate.Canonicalize(s, text)
		st, perr := pushAll(t, m, text, int(n))
		o := st.DecoderFinish()
		switch {
		case cerr == nil && o.State() == stream.Refused:
			t.Fatalf("canonicalization admits %q; the stream refused it: %v (push: %v)", text, o.Err(), perr)
		case cerr == nil && o.State() == stream.Accepted && !bytes.Equal(o.Value().Canonical(), c.Document):
			t.Fatalf("different documents for %q", text)
		case cerr != nil && o.State() == stream.Accepted:
			t.Fatalf("the stream accepted %q, which canonicalization refuses: %v", text, cerr)
		}
		if cerr != nil {
			refusesNoLater(t, s, m, text, cerr)
		}
	})
}

// refusesNoLater pushes text byte by byte and checks that where the whole reading refused
// a value for its JSON type (or an integer field's number for its form or range) the stream
// refused by that value's first byte (by the end of the number).
func refusesNoLater(t *testing.T, s *interaction.Schema, m *negotiate.Admitter, text []byte, cerr error) {
	var e *negotiate.Error
	if !errors.As(cerr, &e) {
		t.Fatalf("refusal %v", cerr)
	}
	n, f := nodeAt(s, text, e.Path)
	if n == nil || f == nil {
		return
	}
	deadline := -1 // the offset of the last byte by which the stream must have refused
	switch e.Rule {
	case negotiate.RuleRepresentation, negotiate.RuleNull:
		if !kindFits(f, n.Kind) {
			deadline = n.Offset
		}
	case negotiate.RuleIntegerFraction, negotiate.RuleIntegerExponent, negotiate.RuleIntegerRange:
		if n.Kind == jsontext.Number {
			deadline = n.Offset + len(n.Text) // the byte after the token ends it
		}
	}
	if deadline < 0 {
		return
	}
	st, err := m.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	for i := range text {
		if st.Push(text[i:i+1]) != nil {
			if i > deadline {
				t.Fatalf("the whole reading refuses %q at byte %d (%v); the stream refused only at byte %d", text, deadline, cerr, i)
			}
			return
		}
		if st.Degraded() {
			return
		}
	}
	if o := st.DecoderFinish(); deadline < len(text) || o.State() != stream.Refused {
		t.Fatalf("the whole reading refuses %q at byte %d (%v); the stream refused only at its end (%v)", text, deadline, cerr, o.Err())
	}
}

// nodeAt finds the value a refusal's path names in text, and the declared field whose value
// it is (nil when the path names no field's value).
func nodeAt(s *interaction.Schema, text []byte, path string) (*jsontext.Node, *interaction.Field) {
	n, _, err := jsontext.Parse(strings.TrimSuffix(string(text), "\n"), jsontext.Options{})
	if err != nil || n.Kind != jsontext.Object || !strings.HasPrefix(path, "$.value") {
		return nil, nil
	}
	if v := n.Last("value"); v != nil {
		n = v
	}
	var f *interaction.Field
	for rest := path[len("$.value"):]; rest != "" && n != nil; {
		f = nil
		switch {
		case strings.HasPrefix(rest, ".fields"):
			n, rest = n.Last("fields"), rest[len(".fields"):]
		case strings.HasPrefix(rest, ".case"):
			n, rest = n.Last("case"), rest[len(".case"):]
		case strings.HasPrefix(rest, `["`):
			end := strings.Index(rest, `"]`)
			if end < 0 || n.Kind != jsontext.Object {
				return nil, nil
			}
			key, _, err := jsontext.Parse(rest[1:end+1], jsontext.Options{})
			if err != nil {
				return nil, nil
			}
			n, f, rest = n.Last(key.Text), fieldByID(s, key.Text), rest[end+2:]
		default:
			return nil, nil
		}
	}
	return n, f
}

func fieldByID(s *interaction.Schema, id string) *interaction.Field {
	for _, t := range s.Types() {
		for i := range t.NumFields() {
			if f := t.Field(i); f.StableID() == id {
				return f
			}
		}
		for i := range t.NumCases() {
			c := t.Case(i)
			for j := range c.NumFields() {
				if f := c.Field(j); f.StableID() == id {
					return f
				}
			}
		}
	}
	return nil
}

// kindFits reports whether a JSON value of kind k can be a value of f in provider text.
func kindFits(f *interaction.Field, k jsontext.Kind) bool {
	switch r := f.Representation(); {
	case r == interaction.Bool:
		return k == jsontext.True || k == jsontext.False
	case r.IsInteger():
		return k == jsontext.Number || k == jsontext.String
	case r == interaction.String:
		return k == jsontext.String
	case r == interaction.Bytes:
		return k == jsontext.Array
	}
	return k == jsontext.Object
}

// TestStreamInputBound: provider text over MaxInputBytes is refused at the push that crosses
// the bound, as the whole reading refuses it, even when its canonical form would be short.
func TestStreamInputBound(t *testing.T) {
	s := proposalSchema(t)
	m := streamAdmitter(t, s, negotiate.TransformAll)
	text := []byte(`{"case":"assist.reply","fields":{"assist.reply.text":"hi",` + strings.Repeat(" ", negotiate.MaxInputBytes))
	if _, err := negotiate.Canonicalize(s, text); !errors.Is(err, &negotiate.Error{Code: negotiate.CodeCanonicalize, Rule: negotiate.RuleInputBytes}) {
		t.Fatalf("the whole reading: %v", err)
	}
	st, err := m.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(text); i += 4096 {
		err := st.Push(text[i:min(i+4096, len(text))])
		if crossed := min(i+4096, len(text)) > negotiate.MaxInputBytes; (err != nil) != crossed {
			t.Fatalf("push ending at byte %d: %v", min(i+4096, len(text)), err)
		}
		if err != nil && !errors.Is(err, stream.ErrBytes) {
			t.Fatalf("refused with %v; want STREAM-BYTES", err)
		}
	}
}
