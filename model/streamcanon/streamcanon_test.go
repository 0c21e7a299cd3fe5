package streamcanon_test

import (
	"bytes"
	"testing"

	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/interaction/stream"
	"github.com/beamagents/beamagents/model/streamcanon"
	"github.com/beamagents/beamagents/negotiate"
)

func schema(tb testing.TB) *interaction.Schema {
	tb.Helper()
	s, err := support.Schema()
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// run pushes text in chunks of n bytes (0: whole) and finishes.
func run(tb testing.TB, s *interaction.Schema, text []byte, n int) (*streamcanon.Writer, stream.Outcome) {
	g, err := stream.Compile(s)
	if err != nil {
		tb.Fatal(err)
	}
	w := streamcanon.New(s, g.NewDecoder())
	if n <= 0 {
		n = len(text) + 1
	}
	for rest := text; len(rest) > 0; {
		c := rest[:min(n, len(rest))]
		rest = rest[len(c):]
		if o := w.Push(c); o.State() == stream.Refused {
			return w, o
		}
	}
	return w, w.Finish()
}

func TestWriter(t *testing.T) {
	s := schema(t)
	cases := []struct {
		name, text string
		want       stream.State
		degraded   bool
	}{
		{"canonical value", `{"case":"support.reply","fields":{"support.reply.text":"hi"}}`, stream.Accepted, false},
		{"whitespace and newline", "{\n  \"case\": \"support.reply\",\n  \"fields\": { \"support.reply.text\": \"hi\" }\n}\n", stream.Accepted, false},
		{"integer as a JSON number", `{"case":"support.refund","fields":{"support.refund.order_id":"A-1","support.refund.amount_cents": 4599,"support.refund.reason":"broken"}}`, stream.Accepted, false},
		{"escapes re-escaped", `{"case":"support.reply","fields":{"support.reply.text":"\u0048i \/ \u00e9 \ud83d\ude00 \u001f"}}`, stream.Accepted, false},
		{"reordered members degrade", `{"fields":{"support.reply.text":"hi"},"case":"support.reply"}`, stream.Incomplete, true},
		{"integer out of range refused", `{"case":"support.refund","fields":{"support.refund.order_id":"A-1","support.refund.amount_cents":100001,"support.refund.reason":"x"}}`, stream.Refused, false},
		{"fraction refused", `{"case":"support.refund","fields":{"support.refund.order_id":"A-1","support.refund.amount_cents":1.5,"support.refund.reason":"x"}}`, stream.Refused, false},
		{"unknown case refused", `{"case":"support.delete_everything","fields":{}}`, stream.Refused, false},
		{"prose refused", `Sure! Here is the JSON you asked for`, stream.Refused, false},
		{"string over its bound refused", `{"case":"support.lookup_order","fields":{"support.lookup_order.order_id":"` + string(bytes.Repeat([]byte("x"), 40)) + `"}}`, stream.Refused, false},
	}
	for _, tc := range cases {
		for _, n := range []int{0, 1, 3, 7} {
			w, o := run(t, s, []byte(tc.text), n)
			if o.State() != tc.want || w.Degraded() != tc.degraded {
				t.Errorf("%s (chunks of %d): %v degraded=%v (%v); want %v degraded=%v", tc.name, n, o.State(), w.Degraded(), o.Err(), tc.want, tc.degraded)
			}
			if o.State() == stream.Accepted {
				c, err := negotiate.Canonicalize(s, []byte(tc.text))
				if err != nil || !bytes.Equal(o.Value().Canonical(), c.Document) {
					t.Errorf("%s: the stream's document differs from Canonicalize's (%v)", tc.name, err)
				}
			}
		}
	}
}

// FuzzWriter: the Writer never refuses a text that canonicalization admits, whatever the
// chunking, and when both accept, the documents are the same. (The Writer may let through
// what canonicalization refuses, such as an integer token where a string is declared: it only
// refuses early; the whole-text admission decides.)
func FuzzWriter(f *testing.F) {
	for _, seed := range []string{
		`{"case":"support.reply","fields":{"support.reply.text":"hi"}}`,
		`{"case":"support.refund","fields":{"support.refund.order_id":"A-1","support.refund.amount_cents": -0,"support.refund.reason":"x"}}`,
		`{"case":"support.refund","fields":{"support.refund.amount_cents":"12","support.refund.order_id":"A-1","support.refund.reason":"x"}}`,
		"{ \"case\" : \"support.remember\" , \"fields\" : {\"support.remember.key\":\"k\\n\",\"support.remember.value\":\"\\u2028\"} }",
		`{"case":"support.reply","fields":{"support.reply.text":"\ud800"}}`,
		`{"case":"support.reply","fields":{"support.reply.text":12}}`,
	} {
		f.Add([]byte(seed), uint8(3))
	}
	s := schema(f)
	f.Fuzz(func(t *testing.T, text []byte, n uint8) {
		c, cerr := negotiate.Canonicalize(s, text)
		_, o := run(t, s, text, int(n))
		if cerr == nil && o.State() == stream.Refused {
			t.Fatalf("canonicalization admits %q; the stream refused it: %v", text, o.Err())
		}
		if cerr == nil && o.State() == stream.Accepted && !bytes.Equal(o.Value().Canonical(), c.Document) {
			t.Fatalf("different documents for %q", text)
		}
	})
}
