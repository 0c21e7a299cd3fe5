package negotiate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/canonjson"
)

// DeltaFormat names the canonical delta document (SchemaDelta.Document).
const DeltaFormat = "beam_agents.negotiate-delta.v1"

// EntryKind classifies one difference between a producer's and a receiver's schema.
type EntryKind uint8

// Entry kinds, in the order a delta lists them.
const (
	// MissingField: the receiver declares a field the producer never produces. Every value
	// reaching that record or case lacks it, and nothing may fill it in.
	MissingField EntryKind = iota + 1
	// TypeMismatch: a field both declare (by stable id) with different types; Mismatch says
	// how, and whether checking each value against the narrower bound can resolve it.
	TypeMismatch
	// ExtraField: the producer declares a field the receiver does not. Every receiver is
	// closed, so the field must be dropped, and only a declared drop may drop it.
	ExtraField
	// NullabilityConflict: the producer's declaration of a scalar field may be unset and the
	// receiver's may not (see the package documentation for what this means on a wire that
	// has no null).
	NullabilityConflict
	// UnknownCase: the producer's variant has a case the receiver's does not know; every
	// value choosing it is refused.
	UnknownCase
	// MissingCase: the receiver's variant has a case the producer never chooses. Harmless to
	// conformance; listed so the delta is complete.
	MissingCase
	// Moved: an explicit stable-id mapping matched a producer member to a receiver member
	// with another id; values move from one to the other.
	Moved
)

var entryKindNames = [...]string{
	MissingField: "missing_field", TypeMismatch: "type_mismatch", ExtraField: "extra_field",
	NullabilityConflict: "nullability_conflict", UnknownCase: "unknown_case", MissingCase: "missing_case",
	Moved: "moved",
}

func (k EntryKind) String() string {
	if int(k) < len(entryKindNames) && entryKindNames[k] != "" {
		return entryKindNames[k]
	}
	return "invalid"
}

// Mismatch says how the two types of a TypeMismatch differ.
type Mismatch uint8

// Mismatches. Range and MaxBytes are narrowings: some producer values fit the receiver,
// so each value can be checked; the others admit no value of the producer's type.
const (
	MismatchShape          Mismatch = iota + 1 // scalar vs nested, or record vs variant
	MismatchRepresentation                     // bool, integer, string and bytes differ
	MismatchDisjoint                           // integer ranges without a common value
	MismatchRange                              // the receiver's integer range is narrower
	MismatchMaxBytes                           // the receiver's string or bytes bound is lower
)

var mismatchNames = [...]string{
	MismatchShape: "shape", MismatchRepresentation: "representation", MismatchDisjoint: "disjoint_range",
	MismatchRange: "range", MismatchMaxBytes: "max_bytes",
}

func (m Mismatch) String() string {
	if int(m) < len(mismatchNames) && mismatchNames[m] != "" {
		return mismatchNames[m]
	}
	return ""
}

// Narrowing reports whether a value-by-value check against the receiver's bound can resolve
// the mismatch (an i64 into a u8, 4,096 bytes into 64).
func (m Mismatch) Narrowing() bool { return m == MismatchRange || m == MismatchMaxBytes }

// Place locates one side of an entry: the record or variant (Type), the case whose fields
// hold the member (Case, for a field of a case), the member's stable id (Member; "" when this
// side lacks it) and its declaration (Decl), for example "u32 [0, 255]", "string max_bytes
// 64", "record shop.money" or "i64 [-5, 5] optional".
type Place struct {
	Type, Case, Member, Decl string
}

func (p Place) String() string {
	var b strings.Builder
	b.WriteString(p.Type)
	if p.Case != "" {
		b.WriteString("#" + p.Case)
	}
	b.WriteString("/")
	if p.Member == "" {
		b.WriteString("-")
	} else {
		b.WriteString(p.Member)
	}
	if p.Decl != "" {
		b.WriteString(" (" + p.Decl + ")")
	}
	return b.String()
}

func (p Place) document() canonjson.Object {
	return canonjson.Object{{Key: "type", Value: p.Type}, {Key: "case", Value: p.Case}, {Key: "member", Value: p.Member}, {Key: "decl", Value: p.Decl}}
}

func comparePlaces(a, b Place) int {
	return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Case, b.Case), cmp.Compare(a.Member, b.Member), cmp.Compare(a.Decl, b.Decl))
}

// Entry is one difference of a delta.
type Entry struct {
	Kind     EntryKind
	Mismatch Mismatch // TypeMismatch only
	Producer Place
	Receiver Place
}

// String renders the entry on one line: kind[(mismatch)] producer -> receiver.
func (e Entry) String() string {
	k := e.Kind.String()
	if e.Kind == TypeMismatch {
		k += "(" + e.Mismatch.String() + ")"
	}
	return k + " " + e.Producer.String() + " -> " + e.Receiver.String()
}

func (e Entry) document() canonjson.Object {
	return canonjson.Object{{Key: "kind", Value: e.Kind.String()}, {Key: "mismatch", Value: e.Mismatch.String()}, {Key: "producer", Value: e.Producer.document()}, {Key: "receiver", Value: e.Receiver.document()}}
}

func compareEntries(a, b Entry) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), comparePlaces(a.Producer, b.Producer), comparePlaces(a.Receiver, b.Receiver), cmp.Compare(a.Mismatch, b.Mismatch))
}

// DeltaOptions select what Delta compares. The zero value compares the two root types with no
// mapping.
type DeltaOptions struct {
	// Case, when set, compares the fields of one case of the producer's root variant (the
	// root type id, for a record root) with the receiver's root record: the shape of a
	// proposal case bound to a tool whose arguments are the receiver.
	Case string
	// Moves maps producer stable ids (fields or cases) to the receiver ids their values move
	// to, wherever the producer id occurs. Every key must name a producer member and every
	// target must be declared by the receiver where the key occurs.
	Moves map[string]string
}

// Delta compares producer and receiver from their roots with no mapping.
func Delta(producer, receiver *interaction.Schema) (*SchemaDelta, error) {
	return DeltaOptions{}.Delta(producer, receiver)
}

// Delta compares producer with receiver by stable id. It fails only on unusable options
// (ErrInvalid); every difference, however severe, is an entry.
func (o DeltaOptions) Delta(producer, receiver *interaction.Schema) (*SchemaDelta, error) {
	if producer == nil || receiver == nil {
		return nil, invalid(RuleSchemaNil, "a delta needs a producer and a receiver schema")
	}
	w := &walker{moves: o.Moves, used: map[string]bool{}, plans: map[typePair]*typePlan{}}
	d := &SchemaDelta{producer: producer, receiver: receiver, scope: o.Case}
	if o.Case == "" {
		d.root = w.root(producer.Root(), receiver.Root())
	} else if err := w.scoped(d, o.Case); err != nil {
		return nil, err
	}
	if w.err != nil {
		return nil, w.err
	}
	if err := w.unusedMoves(); err != nil {
		return nil, err
	}
	d.moves = sortedMoves(o.Moves)
	slices.SortFunc(w.entries, compareEntries)
	d.entries = w.entries
	d.document = d.render()
	d.digest = digestOf(deltaDomain, d.document)
	return d, nil
}

// SchemaDelta is the complete, ordered difference between a producer's and a receiver's
// schema (the seed's schema delta receipt). It is immutable.
type SchemaDelta struct {
	producer, receiver *interaction.Schema
	scope              string
	moves              [][2]string
	entries            []Entry
	document           []byte
	digest             string
	root               *typePlan      // root-to-root
	scoped             *containerPlan // case-to-record
}

// Producer returns the producer's schema.
func (d *SchemaDelta) Producer() *interaction.Schema { return d.producer }

// Receiver returns the receiver's schema.
func (d *SchemaDelta) Receiver() *interaction.Schema { return d.receiver }

// Case returns the producer case the delta is scoped to ("" for root to root).
func (d *SchemaDelta) Case() string { return d.scope }

// Entries returns the entries in their deterministic order: by kind (MissingField first),
// then by producer place, then by receiver place.
func (d *SchemaDelta) Entries() []Entry { return slices.Clone(d.entries) }

// Len returns the number of entries.
func (d *SchemaDelta) Len() int { return len(d.entries) }

// Blocking returns the entries that keep an unchanged producer value from conforming: every
// entry but MissingCase.
func (d *SchemaDelta) Blocking() []Entry {
	var out []Entry
	for _, e := range d.entries {
		if e.Kind != MissingCase {
			out = append(out, e)
		}
	}
	return out
}

// Count returns the number of entries of kind k.
func (d *SchemaDelta) Count(k EntryKind) int {
	n := 0
	for _, e := range d.entries {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// Digest returns "sha256:<hex>" over the canonical delta document.
func (d *SchemaDelta) Digest() string { return d.digest }

// Document returns a copy of the canonical delta document: producer and receiver digests,
// roots and scope, the moves and the entries, as canonical JSON without a line break.
func (d *SchemaDelta) Document() []byte { return slices.Clone(d.document) }

// String renders the entries one per line.
func (d *SchemaDelta) String() string {
	lines := make([]string, len(d.entries))
	for i, e := range d.entries {
		lines[i] = e.String()
	}
	return strings.Join(lines, "\n")
}

func (d *SchemaDelta) render() []byte {
	moves := make(canonjson.Array, len(d.moves))
	for i, m := range d.moves {
		moves[i] = canonjson.Object{{Key: "from", Value: m[0]}, {Key: "to", Value: m[1]}}
	}
	entries := make(canonjson.Array, len(d.entries))
	for i, e := range d.entries {
		entries[i] = e.document()
	}
	return canonjson.Append(nil, canonjson.Object{
		{Key: "schema", Value: DeltaFormat},
		{Key: "producer_digest", Value: d.producer.Digest()},
		{Key: "producer_root", Value: d.producer.RootTypeID()},
		{Key: "producer_case", Value: d.scope},
		{Key: "receiver_digest", Value: d.receiver.Digest()},
		{Key: "receiver_root", Value: d.receiver.RootTypeID()},
		{Key: "moves", Value: moves},
		{Key: "entries", Value: entries},
	})
}

func sortedMoves(m map[string]string) [][2]string {
	out := make([][2]string, 0, len(m))
	for from, to := range m {
		out = append(out, [2]string{from, to})
	}
	slices.SortFunc(out, func(a, b [2]string) int { return cmp.Compare(a[0], b[0]) })
	return out
}

// describe renders a field's declaration for a Place.
func describe(f *interaction.Field) string {
	r := f.Representation()
	var s string
	switch {
	case r == interaction.Nested:
		s = f.Nested().Kind().String() + " " + f.Nested().StableID()
	case r.IsInteger():
		lo, hi := f.Range()
		s = fmt.Sprintf("%s [%s, %s]", r, lo, hi)
	case r == interaction.String || r == interaction.Bytes:
		s = fmt.Sprintf("%s max_bytes %d", r, f.MaxBytes())
	default:
		s = r.String()
	}
	if nullable(f) {
		s += " optional"
	}
	return s
}

// nullable reports whether the field's source declaration may be unset: a scalar with
// explicit presence (proto3 `optional`, proto2 `optional`). Message fields have presence at
// both ends of every boundary, so they never differ in it.
func nullable(f *interaction.Field) bool {
	return f.Representation() != interaction.Nested && f.Descriptor().HasPresence()
}
