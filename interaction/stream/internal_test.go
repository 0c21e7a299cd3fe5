package stream

import (
	"errors"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/interaction"
)

// The structural bounds are checked on the scanner alone: the typed grammar would refuse
// these deliberately untyped payloads earlier.

func scan(s *scanner, text string) *fail {
	for i := 0; i < len(text); i++ {
		if f := s.step(text[i]); f != nil {
			return f
		}
	}
	return nil
}

func TestScannerDepthBoundIsExact(t *testing.T) {
	var s scanner
	if f := scan(&s, "{"+strings.Repeat(`"k":[`, 0)+strings.Repeat("[", MaxStreamDepth-1)); f != nil {
		t.Fatalf("depth %d refused: %v", MaxStreamDepth, f.msg)
	}
	if f := scan(&s, "["); f == nil || f.code != CodeDepth {
		t.Fatalf("depth %d: %+v", MaxStreamDepth+1, f)
	}
}

func TestScannerTokenBoundIsExact(t *testing.T) {
	var s scanner
	if f := scan(&s, "{"+strings.Repeat(`"":`, MaxStreamStringTokens)); f != nil {
		t.Fatalf("%d tokens refused: %v", MaxStreamStringTokens, f.msg)
	}
	if f := scan(&s, `"`); f == nil || f.code != CodeTokens {
		t.Fatalf("token %d: %+v", MaxStreamStringTokens+1, f)
	}
}

func TestScannerRules(t *testing.T) {
	for _, tc := range []struct {
		text string
		code Code // "" if every byte is accepted
	}{
		{`{"a\u00e9\/\"":[1,{}]}` + "\n", ""},
		{"{\"é😀\"", ""},
		{"x", CodeStart},
		{"\xff", CodeStart},
		{"{\xff", CodeUTF8},
		{"{\"\xc0\xaf", CodeUTF8},
		{"{\"\xe0\x80", CodeUTF8},
		{"{\"\xed\xa0", CodeUTF8},
		{"{\"\xf4\x90", CodeUTF8},
		{"{\"\xe2\x82x", CodeUTF8},
		{"{ ", CodeWhitespace},
		{"{\t", CodeWhitespace},
		{"{\n", CodeWhitespace},
		{"{\x7f", CodeWhitespace},
		{"{\"\x01", CodeString},
		{"{\"\\x", CodeString},
		{"{\"\\u12g", CodeString},
		{"{]", CodeBracket},
		{"{}}", CodeTrailing},
		{"{}\n\n", CodeTrailing},
		{"{}x", CodeTrailing},
	} {
		var s scanner
		f := scan(&s, tc.text)
		if got := Code(""); f != nil {
			got = f.code
			if got != tc.code {
				t.Errorf("%q: %s (%s), want %q", tc.text, got, f.msg, tc.code)
			}
		} else if tc.code != "" {
			t.Errorf("%q accepted, want %s", tc.text, tc.code)
		}
	}
}

func TestGrammarWorkBoundIsExact(t *testing.T) {
	var m machine
	m.reset([]op{{kind: opLit, lit: "{{{"}, {kind: opEnd}})
	m.work = MaxGrammarWork - 1
	if msg := m.step('{'); msg != "" {
		t.Fatalf("the last unit of work refused: %s", msg)
	}
	if msg := m.step('{'); !strings.Contains(msg, "grammar work") {
		t.Fatalf("one unit past the bound: %q", msg)
	}
}

func TestGrammarStackBoundIsExact(t *testing.T) {
	inner := []op{{kind: opLit, lit: "x"}}
	nested := []op{{kind: opLit, lit: "{"}, {kind: opNested, typ: &inner}, {kind: opLit, lit: "}"}}
	var m machine
	m.reset(nested)
	for len(m.frames) < MaxGrammarStack-1 {
		m.frames = append(m.frames, frame{ops: nested})
	}
	if msg := m.step('{'); msg != "" {
		t.Fatalf("entering frame %d: %s", MaxGrammarStack, msg)
	}
	if len(m.frames) != MaxGrammarStack {
		t.Fatalf("%d frames", len(m.frames))
	}
	m.frames = append(m.frames[:MaxGrammarStack-1], frame{ops: nested})
	m.cur, m.pos = &nested[0], 0
	if msg := m.step('{'); !strings.Contains(msg, "grammar stack") {
		t.Fatalf("one frame past the bound: %q", msg)
	}
}

// TestSemanticRefusal wires a grammar to a schema whose decoder disagrees with it, the only
// way to reach STREAM-SEMANTIC: the grammar admits exactly the canonical documents, which the
// whole decoder admits.
func TestSemanticRefusal(t *testing.T) {
	a := compileTestSchema(t, "a.root")
	b := compileTestSchema(t, "b.root")
	ga, err := Compile(a)
	if err != nil {
		t.Fatal(err)
	}
	doc := []byte(`{"schema":"` + interaction.ValueFormat + `","root_type_id":"a.root","schema_digest":"` + a.Digest() + `","value":{"fields":{}}}` + "\n")
	if v, err := a.Decode(doc); err != nil || v == nil {
		t.Fatalf("the document is not admitted by its own schema: %v", err)
	}
	d := (&Grammar{schema: b, envelope: ga.envelope}).NewDecoder()
	if o := d.Push(doc); o.State() != Incomplete {
		t.Fatalf("push: %v", o.Err())
	}
	o := d.Finish()
	r := o.Refusal()
	if r == nil || r.Code != CodeSemantic || r.AtByte != len(doc) || !errors.Is(o.Err(), interaction.ErrNotAdmitted) ||
		!errors.Is(o.Err(), &interaction.Error{Code: interaction.CodeNotAdmitted, Rule: interaction.RuleEnvelopeRootTypeID}) ||
		!strings.HasPrefix(r.Message, "SPX-Z206 envelope.root_type_id: ") {
		t.Fatalf("got %v", o.Err())
	}
}
