package negotiate

import (
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/canonjson"
)

// A delta is computed once per (producer type, receiver type) pair, not per path: a type
// reused along many paths of a DAG is compared once, so the work is bounded by the number of
// pairs (at most MaxTypes squared) times their members, whatever the number of paths. The
// same walk leaves the plan that carries each value across (transform.go).

type typePair struct{ p, r *interaction.Type }

// typePlan carries values of one producer type to one receiver type of the same kind.
type typePlan struct {
	record *containerPlan       // records
	cases  map[string]*casePlan // variants: by producer case id
}

// casePlan carries one producer case; receiver is nil for an UnknownCase.
type casePlan struct {
	receiver *interaction.Case
	fields   *containerPlan
}

// containerPlan carries the fields of one record or case.
type containerPlan struct {
	sources []source             // one per receiver field, in the receiver's declaration order
	extras  []*interaction.Field // producer fields the receiver does not declare
}

// source is where one receiver field's value comes from.
type source struct {
	receiver     *interaction.Field
	producer     *interaction.Field // nil: MissingField
	incompatible bool               // a mismatch no value crosses
	narrow       bool               // check each value against the receiver's bound
	nullability  bool               // a NullabilityConflict
	nested       *typePlan
}

type walker struct {
	moves   map[string]string
	used    map[string]bool
	entries []Entry
	plans   map[typePair]*typePlan
	err     error
}

func (w *walker) add(e Entry) { w.entries = append(w.entries, e) }

func (w *walker) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// target returns the receiver id a producer member's value goes to.
func (w *walker) target(id string) string {
	if to, ok := w.moves[id]; ok {
		w.used[id] = true
		return to
	}
	return id
}

func (w *walker) unusedMoves() error {
	for _, m := range sortedMoves(w.moves) {
		if !w.used[m[0]] {
			return invalid(RuleMoveUnknown, "move %s -> %s: no field or case of the producer has id %s", canonjson.Quote(m[0], 128), canonjson.Quote(m[1], 128), canonjson.Quote(m[0], 128))
		}
	}
	return nil
}

// root compares the two roots; a root of another kind is one shape mismatch and no plan.
func (w *walker) root(pt, rt *interaction.Type) *typePlan {
	if pt.Kind() != rt.Kind() {
		w.add(Entry{Kind: TypeMismatch, Mismatch: MismatchShape,
			Producer: Place{Type: pt.StableID(), Decl: pt.Kind().String()},
			Receiver: Place{Type: rt.StableID(), Decl: rt.Kind().String()}})
		return nil
	}
	return w.types(pt, rt)
}

// scoped compares one producer case (or a record root) with the receiver's root record.
func (w *walker) scoped(d *SchemaDelta, caseID string) error {
	pt, rt := d.producer.Root(), d.receiver.Root()
	if rt.Kind() != interaction.Record {
		return invalid(RuleBindingArgs, "the receiver %s is a variant; a case binds to a record of arguments", canonjson.Quote(rt.StableID(), 128))
	}
	pp, rp := Place{Type: pt.StableID()}, Place{Type: rt.StableID()}
	switch c, ok := pt.CaseByID(caseID); {
	case pt.Kind() == interaction.Record && caseID == pt.StableID():
		d.scoped = w.container(recordFields(pt), recordFields(rt), pp, rp)
	case ok:
		pp.Case = c.StableID()
		d.scoped = w.container(caseFields(c), recordFields(rt), pp, rp)
	default:
		return invalid(RuleBindingCase, "%s is not a case of %s", canonjson.Quote(caseID, 128), canonjson.Quote(pt.StableID(), 128))
	}
	return nil
}

func (w *walker) types(pt, rt *interaction.Type) *typePlan {
	key := typePair{pt, rt}
	if p := w.plans[key]; p != nil {
		return p
	}
	p := &typePlan{}
	w.plans[key] = p
	if pt.Kind() == interaction.Record {
		p.record = w.container(recordFields(pt), recordFields(rt), Place{Type: pt.StableID()}, Place{Type: rt.StableID()})
	} else {
		p.cases = w.cases(pt, rt)
	}
	return p
}

func (w *walker) cases(pt, rt *interaction.Type) map[string]*casePlan {
	plans := make(map[string]*casePlan, pt.NumCases())
	matched := map[string]*interaction.Case{}
	for i := range pt.NumCases() {
		pc := pt.Case(i)
		pp := Place{Type: pt.StableID(), Member: pc.StableID()}
		to := w.target(pc.StableID())
		rc, ok := rt.CaseByID(to)
		if !ok {
			w.unmatched(pp, to, rt.StableID(), "")
			w.add(Entry{Kind: UnknownCase, Producer: pp, Receiver: Place{Type: rt.StableID()}})
			plans[pc.StableID()] = &casePlan{}
			continue
		}
		if prev := matched[to]; prev != nil {
			w.fail(invalid(RuleMoveCollision, "cases %s and %s of %s both reach case %s", canonjson.Quote(prev.StableID(), 128), canonjson.Quote(pc.StableID(), 128), canonjson.Quote(pt.StableID(), 128), canonjson.Quote(to, 128)))
		}
		matched[to] = pc
		if to != pc.StableID() {
			w.add(Entry{Kind: Moved, Producer: pp, Receiver: Place{Type: rt.StableID(), Member: to}})
		}
		fields := w.container(caseFields(pc), caseFields(rc),
			Place{Type: pt.StableID(), Case: pc.StableID()}, Place{Type: rt.StableID(), Case: to})
		plans[pc.StableID()] = &casePlan{receiver: rc, fields: fields}
	}
	for i := range rt.NumCases() {
		if rc := rt.Case(i); matched[rc.StableID()] == nil {
			w.add(Entry{Kind: MissingCase, Producer: Place{Type: pt.StableID()}, Receiver: Place{Type: rt.StableID(), Member: rc.StableID()}})
		}
	}
	return plans
}

// unmatched refuses a move whose target the receiver does not declare where it applies.
func (w *walker) unmatched(pp Place, to, rtype, rcase string) {
	if to == pp.Member {
		return
	}
	where := rtype
	if rcase != "" {
		where += "#" + rcase
	}
	w.fail(invalid(RuleMoveTarget, "move %s -> %s: %s declares no member %s", canonjson.Quote(pp.Member, 128), canonjson.Quote(to, 128), canonjson.Quote(where, 260), canonjson.Quote(to, 128)))
}

func (w *walker) container(pfs, rfs []*interaction.Field, pp, rp Place) *containerPlan {
	cp := &containerPlan{}
	declared := make(map[string]bool, len(rfs))
	for _, rf := range rfs {
		declared[rf.StableID()] = true
	}
	byTarget := map[string]*interaction.Field{}
	for _, pf := range pfs {
		to := w.target(pf.StableID())
		if !declared[to] {
			w.unmatched(Place{Type: pp.Type, Case: pp.Case, Member: pf.StableID()}, to, rp.Type, rp.Case)
			cp.extras = append(cp.extras, pf)
			w.add(Entry{Kind: ExtraField, Producer: at(pp, pf), Receiver: rp})
			continue
		}
		if prev := byTarget[to]; prev != nil {
			w.fail(invalid(RuleMoveCollision, "fields %s and %s of %s both reach field %s", canonjson.Quote(prev.StableID(), 128), canonjson.Quote(pf.StableID(), 128), canonjson.Quote(pp.Type, 128), canonjson.Quote(to, 128)))
		}
		byTarget[to] = pf
	}
	for _, rf := range rfs {
		src := source{receiver: rf, producer: byTarget[rf.StableID()]}
		if src.producer == nil {
			w.add(Entry{Kind: MissingField, Producer: pp, Receiver: at(rp, rf)})
		} else {
			if src.producer.StableID() != rf.StableID() {
				w.add(Entry{Kind: Moved, Producer: at(pp, src.producer), Receiver: at(rp, rf)})
			}
			w.field(&src, pp, rp)
		}
		cp.sources = append(cp.sources, src)
	}
	return cp
}

// field compares the types of one matched pair of fields.
func (w *walker) field(src *source, pp, rp Place) {
	pf, rf := src.producer, src.receiver
	pr, rr := pf.Representation(), rf.Representation()
	mismatch := Mismatch(0)
	switch {
	case pr == interaction.Nested && rr == interaction.Nested:
		if pf.Nested().Kind() != rf.Nested().Kind() {
			mismatch = MismatchShape
		} else {
			src.nested = w.types(pf.Nested(), rf.Nested())
		}
	case pr == interaction.Nested || rr == interaction.Nested:
		mismatch = MismatchShape
	case pr.IsInteger() && rr.IsInteger():
		mismatch = integerMismatch(pf, rf)
	case pr != rr:
		mismatch = MismatchRepresentation
	case (pr == interaction.String || pr == interaction.Bytes) && pf.MaxBytes() > rf.MaxBytes():
		mismatch = MismatchMaxBytes
	}
	if mismatch != 0 {
		src.narrow, src.incompatible = mismatch.Narrowing(), !mismatch.Narrowing()
		w.add(Entry{Kind: TypeMismatch, Mismatch: mismatch, Producer: at(pp, pf), Receiver: at(rp, rf)})
	}
	if pr != interaction.Nested && rr != interaction.Nested && nullable(pf) && !nullable(rf) {
		src.nullability = true
		w.add(Entry{Kind: NullabilityConflict, Producer: at(pp, pf), Receiver: at(rp, rf)})
	}
}

// integerMismatch compares ranges only: every integer representation travels as the same
// decimal string, so i32 into i64 is no mismatch and i64 into u8 is a narrowing.
func integerMismatch(pf, rf *interaction.Field) Mismatch {
	plo, phi := pf.Range()
	rlo, rhi := rf.Range()
	switch {
	case plo.Cmp(rlo) >= 0 && phi.Cmp(rhi) <= 0:
		return 0
	case phi.Cmp(rlo) < 0 || plo.Cmp(rhi) > 0:
		return MismatchDisjoint
	}
	return MismatchRange
}

func at(p Place, f *interaction.Field) Place {
	p.Member, p.Decl = f.StableID(), describe(f)
	return p
}

func recordFields(t *interaction.Type) []*interaction.Field {
	fs := make([]*interaction.Field, t.NumFields())
	for i := range fs {
		fs[i] = t.Field(i)
	}
	return fs
}

func caseFields(c *interaction.Case) []*interaction.Field {
	fs := make([]*interaction.Field, c.NumFields())
	for i := range fs {
		fs[i] = c.Field(i)
	}
	return fs
}
