package stream_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/interaction/stream"
	"github.com/beamagents/beamagents/internal/testkit/corpus"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
)

// TestAgreesWithTheWholeDecoder: on every corpus document the stream accepts exactly when
// interaction's Decode admits, with the identical value, fed in one piece or one byte at a
// time.
func TestAgreesWithTheWholeDecoder(t *testing.T) {
	for _, d := range loadCorpus(t) {
		g := grammar(t, d.Schema)
		v, err := g.Schema().Decode(d.Bytes)
		for _, sizes := range [][]int{nil, {1}, {7, 1, 300}} {
			o := feed(g, d.Bytes, sizes...)
			if err == nil && (o.State() != stream.Accepted || !bytes.Equal(o.Value().Canonical(), v.Canonical()) || string(o.Value().JSON()) != string(v.JSON())) {
				t.Errorf("%s chunks %v: the whole decoder admits; stream %s", d.ID(), sizes, describe(o))
			}
			if err != nil && o.State() != stream.Refused {
				t.Errorf("%s chunks %v: the whole decoder refuses (%v); stream %s", d.ID(), sizes, err, describe(o))
			}
		}
	}
}

// TestChunkingDoesNotMatter: every split point and one byte at a time give the one-piece
// outcome: state, code, offset and value. With -short, documents over 4 KiB are split only
// near both ends and at every 251st byte.
func TestChunkingDoesNotMatter(t *testing.T) {
	for _, d := range loadCorpus(t) {
		g := grammar(t, d.Schema)
		want := describe(feed(g, d.Bytes))
		if got := describe(feed(g, d.Bytes, 1)); got != want {
			t.Errorf("%s one byte at a time: %.200s\nwant %.200s", d.ID(), got, want)
		}
		for _, at := range splitPoints(len(d.Bytes)) {
			if got := describe(split(g, d.Bytes, at)); got != want {
				t.Errorf("%s split at %d: %.200s\nwant %.200s", d.ID(), at, got, want)
				break
			}
		}
	}
}

func splitPoints(n int) []int {
	var at []int
	for i := 0; i <= n; i++ {
		if !testing.Short() || n <= 4096 || i < 512 || n-i < 512 || i%251 == 0 {
			at = append(at, i)
		}
	}
	return at
}

// TestEveryStrictPrefixIsIncomplete: pushing an admitted document byte by byte is
// Incomplete after every byte, and finishing any strict prefix is STREAM-TRUNCATED; only the
// whole document is accepted.
func TestEveryStrictPrefixIsIncomplete(t *testing.T) {
	for _, d := range loadCorpus(t) {
		if !d.Valid() {
			continue
		}
		g := grammar(t, d.Schema)
		dec := g.NewDecoder()
		for i := range d.Bytes {
			if o := dec.Push(d.Bytes[i : i+1]); o.State() != stream.Incomplete || o.Refusal() != nil || o.Value() != nil {
				t.Fatalf("%s: after %d bytes: %s", d.ID(), i+1, describe(o))
			}
		}
		if o := dec.Finish(); o.State() != stream.Accepted {
			t.Fatalf("%s: %s", d.ID(), describe(o))
		}
		for _, n := range splitPoints(len(d.Bytes) - 1) {
			if n == len(d.Bytes) {
				continue
			}
			pd := g.NewDecoder()
			if o := pd.Push(d.Bytes[:n]); o.State() != stream.Incomplete {
				t.Fatalf("%s: prefix of %d bytes: %s", d.ID(), n, describe(o))
			}
			if o := pd.Finish(); !errors.Is(o.Err(), stream.ErrTruncated) {
				t.Fatalf("%s: finishing a prefix of %d bytes: %s", d.ID(), n, describe(o))
			}
		}
	}
}

// TestEarliestRefusal records, for every hostile corpus document, where the stream refused
// it: the code, the offset, and how many bytes before the end that is.
func TestEarliestRefusal(t *testing.T) {
	var report bytes.Buffer
	for _, d := range loadCorpus(t) {
		if d.Valid() {
			continue
		}
		o := feed(grammar(t, d.Schema), d.Bytes)
		r := o.Refusal()
		if r == nil {
			t.Errorf("%s: %s", d.ID(), describe(o))
			continue
		}
		early := "at Finish"
		if r.Code != stream.CodeSemantic && r.Code != stream.CodeTruncated {
			early = fmt.Sprintf("%d bytes before the end", len(d.Bytes)-r.AtByte)
		}
		fmt.Fprintf(&report, "%s: %s at_byte=%d of %d (%s)\n", d.ID(), r.Code, r.AtByte, len(d.Bytes), early)
	}
	golden(t, "earliest_refusal.golden", report.Bytes())
}

func TestWorkIsLinearAndChunkIndependent(t *testing.T) {
	for _, d := range loadCorpus(t) {
		g := grammar(t, d.Schema)
		// Returns the grammar work and the bytes received up to the terminal outcome.
		work := func(size int) (int, int) {
			dec := g.NewDecoder()
			for i := 0; i < len(d.Bytes); i += size {
				if dec.Push(d.Bytes[i:min(i+size, len(d.Bytes))]).State() != stream.Incomplete {
					break
				}
			}
			return dec.GrammarWork(), dec.Buffered()
		}
		whole, _ := work(len(d.Bytes) + 1)
		one, n := work(1)
		if one != whole {
			t.Errorf("%s: work %d one byte at a time, %d in one push", d.ID(), one, whole)
		}
		if whole > 8*n+8 {
			t.Errorf("%s: work %d for %d bytes", d.ID(), whole, n)
		}
	}
}

func TestByteBoundIsExact(t *testing.T) {
	g := grammar(t, "shop.proposal")
	at := corpus.LetterOfSize(t, g.Schema(), testFiles(t), stream.MaxStreamBytes)
	if o := feed(g, at, 4096); o.State() != stream.Accepted {
		t.Fatalf("a %d-byte document: %s", len(at), describe(o))
	}
	over := corpus.LetterOfSize(t, g.Schema(), testFiles(t), stream.MaxStreamBytes+1)
	for _, sizes := range [][]int{nil, {1}, {stream.MaxStreamBytes}, {stream.MaxStreamBytes - 1, 2}} {
		o := feed(g, over, sizes...)
		if r := o.Refusal(); r == nil || r.Code != stream.CodeBytes || r.AtByte != stream.MaxStreamBytes {
			t.Fatalf("a %d-byte document in chunks %v: %s", len(over), sizes, describe(o))
		}
	}
	d := g.NewDecoder()
	d.Push(over)
	if d.Buffered() != stream.MaxStreamBytes {
		t.Fatalf("buffered %d bytes", d.Buffered())
	}
}

func TestFieldBoundsAreRefusedAtTheFirstByteOver(t *testing.T) {
	g := grammar(t, "edges.root")
	for _, tc := range []struct {
		doc    string // a corpus document
		marker string // the bytes just before the first byte over the bound
		skip   int    // bytes of the value before that byte
	}{
		{"value.string_bytes--text-4097-ascii", `"edges.text":"`, 4096},
		{"value.bytes_length--tiny-3", `"edges.tiny":[`, 4},
		{"value.bytes_element--tiny-256", `"edges.tiny":[`, 6},
		{"value.integer_range--u8-above", `"edges.u8":"`, 2},
		{"value.integer_range--small-below", `"edges.small":"`, 1},
		{"value.integer_range--band-below", `"edges.band":"`, 1},
	} {
		d := findDoc(t, "edges.root", tc.doc)
		o := feed(g, d.Bytes, 1)
		want := strings.Index(string(d.Bytes), tc.marker) + len(tc.marker) + tc.skip
		if r := o.Refusal(); r == nil || r.Code != stream.CodeGrammar || r.AtByte != want {
			t.Errorf("%s: %s, want STREAM-GRAMMAR at_byte=%d", tc.doc, describe(o), want)
		}
	}
}

func findDoc(t *testing.T, schema, name string) corpus.Doc {
	t.Helper()
	for _, d := range loadCorpus(t) {
		if d.Schema == schema && d.Name == name {
			return d
		}
	}
	t.Fatalf("no corpus document %s/%s", schema, name)
	return corpus.Doc{}
}

func TestTerminalOutcomesAreSticky(t *testing.T) {
	g := grammar(t, "shop.proposal")
	valid := findDoc(t, "shop.proposal", "valid--reply").Bytes

	d := g.NewDecoder()
	first := d.Push([]byte("{ "))
	if !errors.Is(first.Err(), stream.ErrWhitespace) {
		t.Fatalf("got %s", describe(first))
	}
	for _, o := range []stream.Outcome{d.Push(valid), d.Push(nil), d.Finish(), d.Cancel("late"), d.Finish()} {
		if o.Refusal() != first.Refusal() {
			t.Fatalf("refusal not sticky: %s", describe(o))
		}
	}

	d = g.NewDecoder()
	d.Push(valid)
	accepted := d.Finish()
	if accepted.State() != stream.Accepted {
		t.Fatal(describe(accepted))
	}
	for _, o := range []stream.Outcome{d.Cancel("too late"), d.Push([]byte("x")), d.Finish()} {
		if o.State() != stream.Accepted || o.Value() != accepted.Value() {
			t.Fatalf("acceptance not sticky: %s", describe(o))
		}
	}
}

func TestCancel(t *testing.T) {
	g := grammar(t, "shop.proposal")
	valid := findDoc(t, "shop.proposal", "valid--reply").Bytes
	d := g.NewDecoder()
	d.Push(valid[:40])
	o := d.Cancel("client went away\nreally")
	r := o.Refusal()
	if r == nil || r.Code != stream.CodeCancelled || r.AtByte != 40 || strings.ContainsAny(r.Error(), "\n\r") {
		t.Fatalf("cancel: %s", describe(o))
	}
	if again := d.Push(valid[40:]); again.Refusal() != r {
		t.Fatalf("push after cancel: %s", describe(again))
	}
	if o := g.NewDecoder().Cancel("before any byte"); !errors.Is(o.Err(), stream.ErrCancelled) || o.Refusal().AtByte != 0 {
		t.Fatalf("cancel at start: %s", describe(o))
	}
}

func TestFramingRefusals(t *testing.T) {
	g := grammar(t, "shop.proposal")
	valid := findDoc(t, "shop.proposal", "valid--reply").Bytes
	n := len(valid)
	for _, tc := range []struct {
		name string
		doc  []byte
		code stream.Code
		at   int
	}{
		{"byte after LF", append(append([]byte(nil), valid...), '\n'), stream.CodeTrailing, n},
		{"no LF after the top-level value", append(append([]byte(nil), valid[:n-1]...), ' ', '\n'), stream.CodeTrailing, n - 1},
		{"CR before LF", append(append([]byte(nil), valid[:n-1]...), '\r', '\n'), stream.CodeTrailing, n - 1},
		{"finish without LF", valid[:n-1], stream.CodeTruncated, n - 1},
		{"empty stream", nil, stream.CodeTruncated, 0},
		{"not an object", []byte("[]\n"), stream.CodeStart, 0},
		{"BOM", append([]byte("\xef\xbb\xbf"), valid...), stream.CodeStart, 0},
		{"closing bracket mismatch", []byte(`{"schema":]`), stream.CodeBracket, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := feed(g, tc.doc)
			if r := o.Refusal(); r == nil || r.Code != tc.code || r.AtByte != tc.at {
				t.Fatalf("got %s, want %s at_byte=%d", describe(o), tc.code, tc.at)
			}
		})
	}
}

func TestCodesAreDistinctAndNeverIncomplete(t *testing.T) {
	seen := map[stream.Code]bool{}
	for _, c := range stream.Codes() {
		if seen[c] || !strings.HasPrefix(string(c), "STREAM-") || strings.Contains(strings.ToLower(string(c)), "incomplete") {
			t.Errorf("code %s", c)
		}
		seen[c] = true
	}
	if len(seen) != 13 {
		t.Errorf("%d codes", len(seen))
	}
	var zero stream.Outcome
	if zero.State() != stream.Incomplete || zero.Refusal() != nil || zero.Value() != nil || zero.Err() != nil {
		t.Error("the zero outcome is not a bare Incomplete")
	}
	if got := stream.Incomplete.String(); got != "incomplete" {
		t.Error(got)
	}
}

func TestExpectedNext(t *testing.T) {
	g := grammar(t, "shop.proposal")
	doc := findDoc(t, "shop.proposal", "valid--refund").Bytes
	d := g.NewDecoder()
	var seq []string
	last := ""
	for i := range doc {
		e := d.Expected()
		s := e.Next.String()
		if e.Field != nil {
			s += " " + e.Field.StableID()
		}
		if s != last {
			seq = append(seq, s)
			last = s
		}
		d.Push(doc[i : i+1])
	}
	if e := d.Expected(); e.Next != stream.ExpectNothing {
		t.Fatalf("after the LF: %v", e.Next)
	}
	got := strings.Join(seq, ", ")
	for _, want := range []string{
		"literal, case, literal, string shop.refund.order_id, literal, integer shop.refund.amount_minor",
		"bytes shop.refund.receipt, literal, string shop.money.currency",
		"case, literal, string shop.sms.number, literal, string shop.refund.note, literal, end",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("expected sequence lacks %q:\n%s", want, got)
		}
	}
}

// TestNextValue: NextValue is Expected but where all that is left of a literal is the opening
// quote of a string or integer field's value, which it names; asking it between one-byte pushes
// changes no outcome.
func TestNextValue(t *testing.T) {
	g := grammar(t, "shop.proposal")
	doc := findDoc(t, "shop.proposal", "valid--refund").Bytes
	d := g.NewDecoder()
	ahead := map[string]bool{}
	for i := range doc {
		e, n := d.Expected(), d.NextValue()
		if e != n {
			if e.Next != stream.ExpectLiteral || doc[i] != '"' || n.Next != stream.ExpectString && n.Next != stream.ExpectInteger {
				t.Fatalf("at byte %d (%q): Expected %v, NextValue %v", i, doc[i], e.Next, n.Next)
			}
			ahead[n.Next.String()+" "+n.Field.StableID()] = true
		}
		if o := d.Push(doc[i : i+1]); o.State() != stream.Incomplete {
			t.Fatalf("at byte %d: %s", i, describe(o))
		}
		if e != n && d.Expected() != n {
			t.Fatalf("after byte %d: Expected %v; NextValue said %v", i, d.Expected().Next, n.Next)
		}
	}
	if o := d.Finish(); o.State() != stream.Accepted {
		t.Fatalf("asking NextValue changed the outcome: %s", describe(o))
	}
	for _, want := range []string{"string shop.refund.order_id", "integer shop.refund.amount_minor", "string shop.money.currency"} {
		if !ahead[want] {
			t.Errorf("NextValue never looked ahead to %s: %v", want, ahead)
		}
	}
}

func TestUnstreamableSchemas(t *testing.T) {
	// 42 records of 100 strings each: a document holds 7 + 1 + 42*(1+1+200) = 8,492 string
	// literals, more than the token bound, so streaming could refuse an admitted document.
	var b strings.Builder
	b.WriteString("syntax = \"proto3\";\npackage wide.v1;\nimport \"beam_agents/v1/interaction_options.proto\";\n")
	b.WriteString("message A {\n  option (beam_agents.v1.type_id) = \"a\";\n")
	for i := 1; i <= 42; i++ {
		fmt.Fprintf(&b, "  B b%d = %d [(beam_agents.v1.field_id) = \"a%d\"];\n", i, i, i)
	}
	b.WriteString("}\nmessage B {\n  option (beam_agents.v1.type_id) = \"b\";\n")
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&b, "  string s%d = %d [(beam_agents.v1.field_id) = \"b%d\"];\n", i, i, i)
	}
	b.WriteString("}\n")
	files := prototest.CompileSources(t, map[string]string{"wide.proto": b.String()})
	s, err := interaction.Compile(prototest.Message(t, files, "wide.v1.A"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Compile(s); !errors.Is(err, stream.ErrUnstreamable) {
		t.Fatalf("got %v", err)
	}
	// One record fewer fits: 7 + 1 + 40*202 = 8,088.
	narrow := strings.Replace(b.String(), "  B b41 = 41 [(beam_agents.v1.field_id) = \"a41\"];\n  B b42 = 42 [(beam_agents.v1.field_id) = \"a42\"];\n", "", 1)
	files = prototest.CompileSources(t, map[string]string{"wide.proto": narrow})
	if s, err = interaction.Compile(prototest.Message(t, files, "wide.v1.A")); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Compile(s); err != nil {
		t.Fatal(err)
	}
}

// TestStateAtEveryChunkBoundaryIsChunkIndependent: wherever a chunk ends, the grammar work and
// the expectation are those of pushing the same bytes one at a time, so the shortcuts a chunk
// enables (runs within a chunk, appends alone within a fast run) leave no trace but speed.
func TestStateAtEveryChunkBoundaryIsChunkIndependent(t *testing.T) {
	type state struct {
		work int
		next stream.Expected
	}
	for _, d := range loadCorpus(t) {
		g := grammar(t, d.Schema)
		ref := map[int]state{}
		dec := g.NewDecoder()
		for i := range d.Bytes {
			if dec.Push(d.Bytes[i:i+1]).State() != stream.Incomplete {
				break
			}
			ref[i+1] = state{dec.GrammarWork(), dec.Expected()}
		}
		for _, sizes := range [][]int{{2}, {3}, {5, 1}, {7, 1, 1}, {13}, {64, 1}} {
			dec := g.NewDecoder()
			for i, k := 0, 0; i < len(d.Bytes); k++ {
				n := min(len(d.Bytes)-i, sizes[k%len(sizes)])
				if dec.Push(d.Bytes[i:i+n]).State() != stream.Incomplete {
					break
				}
				i += n
				if got := (state{dec.GrammarWork(), dec.Expected()}); got != ref[i] {
					t.Fatalf("%s chunks %v: after %d bytes work %d, expected %v; one byte at a time %d, %v",
						d.ID(), sizes, i, got.work, got.next, ref[i].work, ref[i].next)
				}
			}
		}
	}
}
