package negotiate

import (
	"slices"
	"strconv"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/canonjson"
)

// Outcome is one output's crossing of a boundary. On success Value is the receiver's admitted
// value and Document its canonical value document (the output bytes); on a refusal both are
// nil. Receipt is always set: conforming, or non-conforming with the refusal's reason.
type Outcome struct {
	Value    *interaction.Value
	Document []byte
	Receipt  *Receipt
}

// Convey carries one producer value (a root value of the producer's schema; of the bound
// case, for a binding) across the boundary. It applies only lossless transformations: it
// drops declared extra fields, moves fields and cases by the agreed mapping, and narrows a
// value only when it fits the receiver's bound. It never fills a missing field. The result is
// rendered as the receiver's canonical document and admitted by the receiver's strict
// decoder; anything else is refused with ErrRefused and a rule naming why.
func (b *Boundary) Convey(v *interaction.Value) (Outcome, error) {
	var input []byte
	if v != nil {
		input = v.Canonical()
	}
	rc := b.receipt(input)
	if err := b.checkValue(v); err != nil {
		return rc.refused(err)
	}
	c := &conveyor{b: b, applied: map[string]bool{}, warned: map[string]bool{}}
	doc := appendEnvelope(nil, b.delta.receiver)
	doc, err := c.root(doc, v)
	if err != nil {
		return rc.refused(err)
	}
	doc = append(doc, '}', '\n')
	out, err := b.delta.receiver.Decode(doc)
	if err != nil {
		return rc.refused(&Error{Code: CodeRefused, Rule: RuleReceiverDecode, Path: "$", Message: "the receiver's decoder refused the conveyed document", Err: err})
	}
	rc.Transformations, rc.Warnings = sortedKeys(c.applied), sortedKeys(c.warned)
	return rc.conforming(out, doc)
}

func (b *Boundary) checkValue(v *interaction.Value) error {
	switch p := b.delta.producer; {
	case v == nil || v.Canonical() == nil:
		return invalid(RuleSchemaNil, "Convey needs a root value of the producer's schema")
	case v.Type() != p.Root():
		return invalid(RuleBindingValue, "the value is of %s, not of the producer's root %s", canonjson.Quote(v.TypeID(), 128), canonjson.Quote(p.RootTypeID(), 128))
	case b.delta.scope != "" && p.Root().Kind() == interaction.Variant && v.CaseID() != b.delta.scope:
		return invalid(RuleBindingValue, "a value of case %s given to the binding of case %s", canonjson.Quote(v.CaseID(), 128), canonjson.Quote(b.delta.scope, 128))
	}
	return nil
}

// conveyor renders one value for the receiver and collects what it applied.
type conveyor struct {
	b       *Boundary
	applied map[string]bool // transformations, as "drop:ID", "move:FROM->TO", "narrow:ID"
	warned  map[string]bool // best-effort warnings, as "nullability:ID"
}

func (c *conveyor) root(dst []byte, v *interaction.Value) ([]byte, error) {
	if c.b.delta.scope != "" {
		dst = append(dst, `{"fields":`...)
		dst, err := c.fields(dst, c.b.delta.scoped, v, "$.value.fields")
		return append(dst, '}'), err
	}
	return c.value(dst, c.b.delta.root, v, "$.value")
}

func (c *conveyor) value(dst []byte, tp *typePlan, v *interaction.Value, path string) ([]byte, error) {
	if tp == nil {
		return dst, newErr(CodeRefused, RuleTypeMismatch, path, "the receiver's root is not a %s", v.Type().Kind())
	}
	dst = append(dst, '{')
	if tp.record != nil {
		dst = append(dst, `"fields":`...)
		dst, err := c.fields(dst, tp.record, v, path+".fields")
		return append(dst, '}'), err
	}
	cp := tp.cases[v.CaseID()]
	if cp.receiver == nil {
		return dst, newErr(CodeRefused, RuleUnknownCase, path+".case", "the receiver's variant has no case %s", canonjson.Quote(v.CaseID(), 128))
	}
	if cp.receiver.StableID() != v.CaseID() {
		c.applied["move:"+v.CaseID()+"->"+cp.receiver.StableID()] = true
	}
	dst = append(dst, `"case":`...)
	dst = canonjson.AppendString(dst, cp.receiver.StableID())
	dst = append(dst, `,"fields":`...)
	dst, err := c.fields(dst, cp.fields, v, path+".fields")
	return append(dst, '}'), err
}

func (c *conveyor) fields(dst []byte, cp *containerPlan, v *interaction.Value, path string) ([]byte, error) {
	for _, f := range cp.extras {
		if !c.b.drop[f.StableID()] {
			return dst, newErr(CodeRefused, RuleExtraField, memberPath(path, f.StableID()), "the receiver does not declare this field and no drop was agreed for it")
		}
		c.applied["drop:"+f.StableID()] = true
	}
	dst = append(dst, '{')
	for i, src := range cp.sources {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = canonjson.AppendString(dst, src.receiver.StableID())
		dst = append(dst, ':')
		var err error
		if dst, err = c.field(dst, src, v, path); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

func (c *conveyor) field(dst []byte, src source, v *interaction.Value, path string) ([]byte, error) {
	rf, pf := src.receiver, src.producer
	if pf == nil {
		return dst, newErr(CodeRefused, RuleMissingField, memberPath(path, rf.StableID()), "the producer never produces this field; nothing is filled in")
	}
	fpath := memberPath(path, pf.StableID())
	if src.incompatible {
		return dst, newErr(CodeRefused, RuleTypeMismatch, fpath, "a %s does not cross into a %s", describe(pf), describe(rf))
	}
	if pf.StableID() != rf.StableID() {
		c.applied["move:"+pf.StableID()+"->"+rf.StableID()] = true
	}
	if src.nullability {
		c.warned["nullability:"+rf.StableID()] = true
	}
	fv := v.Field(pf.Index())
	if src.nested != nil {
		return c.value(dst, src.nested, fv.Nested(), fpath)
	}
	dst, err := leaf(dst, rf, fv, fpath)
	if err == nil && src.narrow {
		c.applied["narrow:"+rf.StableID()] = true
	}
	return dst, err
}

// leaf renders a scalar in the receiver's representation, refusing a value outside the
// receiver's bound rather than clamping or cutting it.
func leaf(dst []byte, rf *interaction.Field, fv interaction.FieldValue, path string) ([]byte, error) {
	switch r := rf.Representation(); {
	case r == interaction.Bool:
		return strconv.AppendBool(dst, fv.Bool()), nil
	case r.IsInteger():
		n := fv.Integer()
		if lo, hi := rf.Range(); n.Cmp(lo) < 0 || n.Cmp(hi) > 0 {
			return dst, newErr(CodeRefused, RuleNarrowInteger, path, "%s is outside the receiver's [%s, %s]", n, lo, hi)
		}
		dst = append(dst, '"')
		return append(n.Append(dst), '"'), nil
	case r == interaction.String:
		if s := fv.Text(); len(s) > rf.MaxBytes() {
			return dst, newErr(CodeRefused, RuleNarrowString, path, "the string is %d UTF-8 bytes; the receiver admits at most %d", len(s), rf.MaxBytes())
		}
		return canonjson.AppendString(dst, fv.Text()), nil
	}
	b := fv.Bytes()
	if len(b) > rf.MaxBytes() {
		return dst, newErr(CodeRefused, RuleNarrowBytes, path, "%d bytes; the receiver admits at most %d", len(b), rf.MaxBytes())
	}
	return appendBytes(dst, b), nil
}

func appendBytes(dst, b []byte) []byte {
	dst = append(dst, '[')
	for i, x := range b {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendUint(dst, uint64(x), 10)
	}
	return append(dst, ']')
}

// appendEnvelope appends the receiver's canonical envelope up to its value.
func appendEnvelope(dst []byte, s *interaction.Schema) []byte {
	dst = append(dst, `{"schema":`...)
	dst = canonjson.AppendString(dst, interaction.ValueFormat)
	dst = append(dst, `,"root_type_id":`...)
	dst = canonjson.AppendString(dst, s.RootTypeID())
	dst = append(dst, `,"schema_digest":`...)
	dst = canonjson.AppendString(dst, s.Digest())
	return append(dst, `,"value":`...)
}

func memberPath(path, id string) string { return path + "[" + canonjson.Quote(id, 128) + "]" }

// sortedKeys returns the keys of m sorted, or nil when there are none.
func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
