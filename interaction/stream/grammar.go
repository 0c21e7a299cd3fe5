package stream

import (
	"errors"
	"fmt"
	"sort"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/canonjson"
)

// Bounds of a stream.
const (
	MaxStreamBytes        = 65536 // buffered bytes; equal to interaction.MaxDocumentBytes
	MaxStreamDepth        = 64    // structural container nesting
	MaxStreamStringTokens = 8192  // string literals
	MaxGrammarWork        = MaxStreamBytes * 64
	MaxGrammarStack       = MaxStreamDepth * 4
)

// ErrUnstreamable is returned by Compile for a schema one of whose documents could hold more
// than MaxStreamStringTokens string literals: the token bound would refuse a document the
// whole decoder admits, which a stream must never do.
var ErrUnstreamable = errors.New("stream: a document of this schema can exceed the string-token bound")

// Grammar is the incremental grammar of one compiled schema: the canonical value document
// lowered to literal bytes (envelope, keys, braces) and typed scalar slots, per type, without
// expanding nested types. It is immutable and safe for concurrent use; decoders share it.
type Grammar struct {
	schema   *interaction.Schema
	envelope []op
}

type opKind uint8

const (
	opLit    opKind = iota // exact bytes
	opBool                 // true or false
	opInt                  // a canonical decimal string within bounds
	opStr                  // a canonically escaped string within max UTF-8 bytes
	opBytes                // an array of canonical integers 0..255, at most max elements
	opNested               // the value of another type (a frame of its own)
	opCase                 // a variant's case id; continues with that case's ops
	opEnd                  // the terminal LF
)

type op struct {
	kind  opKind
	start int // the sub-state the op begins in (a string's opening quote may end the literal before it)
	lit   string
	// effects of the whole literal on the scanner, from outside and from inside a string
	outside, inside *litEffect
	// the same for the literal but its last byte: what a fast run of one-byte pushes takes
	// before the byte that ends the op
	headOutside, headInside *litEffect
	field                   *interaction.Field
	max                     int
	ints                    intBounds
	typ                     *[]op      // opNested: the nested type's ops
	cases                   *caseTable // opCase
}

// caseTable holds a variant's case ids sorted bytewise, with each case's continuation:
// `,"fields":{` … `}}` (the id's closing quote belongs to the case op).
type caseTable struct {
	ids []string
	ops [][]op
	// prefix is the longest prefix all ids share. Narrowing the table over it always ends in
	// the same range at the same cost, computed once at compile time, so a run can take the
	// prefix whole with exactly the per-byte outcome and work.
	prefix     string
	prefixLo   int
	prefixHi   int
	prefixWork int
}

// intBounds splits an integer range into what digits seen so far can violate.
type intBounds struct {
	zeroOK         bool
	posOK, negOK   bool
	posMin, posMax uint64 // bounds of a positive value
	negMin, negMax uint64 // bounds of a negative value's magnitude
}

// Compile lowers s's value documents to an incremental grammar.
func Compile(s *interaction.Schema) (*Grammar, error) {
	if tokens(s) > MaxStreamStringTokens {
		return nil, fmt.Errorf("%w: %s", ErrUnstreamable, s.RootTypeID())
	}
	c := &compiler{progs: map[*interaction.Type]*[]op{}}
	prefix := canonjson.AppendValuePrefix(nil, interaction.ValueFormat, s.RootTypeID(), s.Digest())
	env := []op{literal(string(prefix)), {kind: opNested, typ: c.typeOps(s.Root())}, literal("}"), {kind: opEnd}}
	return &Grammar{schema: s, envelope: env}, nil
}

// Schema returns the schema the grammar was compiled from.
func (g *Grammar) Schema() *interaction.Schema { return g.schema }

type compiler struct {
	progs map[*interaction.Type]*[]op
}

// typeOps returns the ops of one type's value, compiled once per type.
func (c *compiler) typeOps(t *interaction.Type) *[]op {
	if p, ok := c.progs[t]; ok {
		return p
	}
	p := new([]op)
	c.progs[t] = p
	if t.Kind() == interaction.Record {
		fields := make([]*interaction.Field, t.NumFields())
		for i := range fields {
			fields[i] = t.Field(i)
		}
		*p = c.fieldOps(`{"fields":`, fields)
		return p
	}
	table := &caseTable{}
	for i := 0; i < t.NumCases(); i++ {
		table.ids = append(table.ids, t.Case(i).StableID())
	}
	sort.Strings(table.ids)
	for _, id := range table.ids {
		cs, _ := t.CaseByID(id)
		fields := make([]*interaction.Field, cs.NumFields())
		for i := range fields {
			fields[i] = cs.Field(i)
		}
		table.ops = append(table.ops, c.fieldOps(`,"fields":`, fields))
	}
	table.narrowPrefix()
	*p = []op{literal(`{"case":"`), {kind: opCase, cases: table}}
	return p
}

// interior reports whether b is plain ASCII text inside a string literal: no quote, backslash,
// control or non-ASCII byte, so the structural scanner has nothing to do for it.
func interior(b byte) bool {
	return b >= 0x20 && b < 0x7F && b != '"' && b != '\\'
}

// narrowPrefix computes the shared prefix of the ids and the state and work of narrowing the
// table over it byte by byte, as machine.caseID does.
func (t *caseTable) narrowPrefix() {
	if len(t.ids) == 0 {
		return
	}
	first, last := t.ids[0], t.ids[len(t.ids)-1] // sorted: their common prefix is everyone's
	n := 0
	// Only bytes the scanner passes over inside a string can be taken whole.
	for n < len(first) && n < len(last) && first[n] == last[n] && interior(first[n]) {
		n++
	}
	m := machine{}
	o := &op{kind: opCase, cases: t}
	for i := 0; i < n; i++ {
		m.work++ // machine.step's unit for the byte
		if m.caseID(o, first[i]) != "" {
			return // cannot happen: every id extends the prefix; no shortcut then
		}
	}
	t.prefix, t.prefixLo, t.prefixHi, t.prefixWork = first[:n], m.lo, m.hi, m.work
}

// fieldOps lowers `<open>{"id":<leaf>,…}}` with adjacent literals merged.
func (c *compiler) fieldOps(open string, fields []*interaction.Field) []op {
	var ops []op
	lit := open + "{"
	for i, f := range fields {
		if i > 0 {
			lit += ","
		}
		lit += string(canonjson.AppendString(nil, f.StableID())) + ":"
		leaf := c.leaf(f)
		// The opening quote of a string or an integer is as fixed as the key before it.
		switch leaf.kind {
		case opStr:
			lit, leaf.start = lit+`"`, strContent
		case opInt:
			lit, leaf.start = lit+`"`, intFirst
		}
		ops = append(ops, literal(lit), leaf)
		lit = ""
	}
	return append(ops, literal(lit+"}}"))
}

func literal(lit string) op {
	o := op{kind: opLit, lit: lit, outside: effectOf(lit, false), inside: effectOf(lit, true)}
	if len(lit) > 1 {
		o.headOutside, o.headInside = effectOf(lit[:len(lit)-1], false), effectOf(lit[:len(lit)-1], true)
	}
	return o
}

func (c *compiler) leaf(f *interaction.Field) op {
	o := op{field: f, max: f.MaxBytes()}
	switch r := f.Representation(); {
	case r == interaction.Bool:
		o.kind = opBool
	case r.IsInteger():
		o.kind, o.ints = opInt, boundsOf(f)
	case r == interaction.String:
		o.kind = opStr
	case r == interaction.Bytes:
		o.kind = opBytes
	default:
		o.kind, o.typ = opNested, c.typeOps(f.Nested())
	}
	return o
}

func boundsOf(f *interaction.Field) intBounds {
	lo, hi := f.Range()
	zero := interaction.IntOf(0)
	b := intBounds{zeroOK: lo.Cmp(zero) <= 0 && hi.Cmp(zero) >= 0}
	if hi.Cmp(zero) > 0 {
		b.posOK, b.posMin = true, 1
		b.posMax, _ = hi.Uint64()
		if lo.Cmp(zero) > 0 {
			b.posMin, _ = lo.Uint64()
		}
	}
	if lo.Cmp(zero) < 0 {
		b.negOK, b.negMin = true, 1
		b.negMax = magnitude(lo)
		if hi.Cmp(zero) < 0 {
			b.negMin = magnitude(hi)
		}
	}
	return b
}

// magnitude returns |v| for a negative v.
func magnitude(v interaction.Int) uint64 {
	i, _ := v.Int64()
	return uint64(-(i + 1)) + 1
}

// tokens returns the most string literals one document of s can hold (saturating).
func tokens(s *interaction.Schema) int {
	memo := map[*interaction.Type]int{}
	return 7 + typeTokens(s.Root(), memo) // the envelope's 4 keys and 3 string values
}

func typeTokens(t *interaction.Type, memo map[*interaction.Type]int) int {
	if n, ok := memo[t]; ok {
		return n
	}
	n := 1 // "fields"
	if t.Kind() == interaction.Record {
		for i := 0; i < t.NumFields(); i++ {
			n = sat(n + 1 + leafTokens(t.Field(i), memo))
		}
	} else {
		most := 0
		for i := 0; i < t.NumCases(); i++ {
			c, m := t.Case(i), 0
			for j := 0; j < c.NumFields(); j++ {
				m = sat(m + 1 + leafTokens(c.Field(j), memo))
			}
			most = max(most, m)
		}
		n = sat(n + 2 + most) // "case" and the case id
	}
	memo[t] = n
	return n
}

func leafTokens(f *interaction.Field, memo map[*interaction.Type]int) int {
	switch r := f.Representation(); {
	case r == interaction.Nested:
		return typeTokens(f.Nested(), memo)
	case r == interaction.String || r.IsInteger():
		return 1
	}
	return 0
}

func sat(n int) int { return min(n, 1<<40) }
