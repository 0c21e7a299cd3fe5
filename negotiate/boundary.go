package negotiate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/canonjson"
)

// Boundary is a negotiated crossing from a producer's schema to a stricter receiver's: its
// delta, its manifest and the plan that carries each output across (Convey). It is
// immutable and safe for concurrent use.
type Boundary struct {
	delta    *SchemaDelta
	manifest Manifest
	drop     map[string]bool // the agreement's drops, copied: the caller's slice may change
}

// Negotiate compares producer with receiver under a, runs the gates and returns the boundary
// if the verdict lets outputs cross. It refuses with
//   - ErrInvalid for unusable arguments (a move or drop naming nothing),
//   - ErrNegotiationRequired when the delta blocks and nothing was agreed (gate 3),
//   - ErrFailFast when FAIL_FAST meets a non-empty blocking delta,
//   - ErrUntransformable when transformation is required and the delta holds entries that no
//     lossless transformation resolves (missing fields, incompatible types, nullability
//     conflicts, unknown cases, extra fields not declared droppable).
//
// Each refusal's Entries are the delta entries behind it (its message lists them) and its
// Manifest the gates' record of the decision.
func Negotiate(producer, receiver *interaction.Schema, a Agreement) (*Boundary, error) {
	return negotiate(DeltaOptions{Moves: a.Moves}, producer, receiver, a)
}

// CheckBinding negotiates the binding of one proposal case (caseID; the root type id for a
// record proposal) to a tool whose declared arguments are the root record of args. Run it when
// an agent or pipeline is built: an error refuses the build and lists the delta. The returned
// boundary carries each admitted proposal of that case to the tool's arguments (Convey); its
// value's FieldsJSON is the tool call's argument document.
func CheckBinding(proposal *interaction.Schema, caseID string, args *interaction.Schema, a Agreement) (*Boundary, error) {
	return negotiate(DeltaOptions{Case: caseID, Moves: a.Moves}, proposal, args, a)
}

func negotiate(o DeltaOptions, producer, receiver *interaction.Schema, a Agreement) (*Boundary, error) {
	d, err := o.Delta(producer, receiver)
	if err != nil {
		return nil, err
	}
	if err := checkDrops(d, a.Drop); err != nil {
		return nil, err
	}
	m := Evaluate(d, a)
	if err := admissible(d, m, a); err != nil {
		return nil, err
	}
	b := &Boundary{delta: d, manifest: m, drop: map[string]bool{}}
	for _, id := range a.Drop {
		b.drop[id] = true
	}
	return b, nil
}

// Delta returns the boundary's schema delta.
func (b *Boundary) Delta() *SchemaDelta { return b.delta }

// Manifest returns the boundary's manifest.
func (b *Boundary) Manifest() Manifest { return b.manifest }

// checkDrops requires every declared drop to name an extra field of the delta: a drop of a
// field the receiver declares would be a missing field in disguise.
func checkDrops(d *SchemaDelta, drops []string) error {
	extra := map[string]bool{}
	for _, e := range d.entries {
		if e.Kind == ExtraField {
			extra[e.Producer.Member] = true
		}
	}
	for _, id := range drops {
		if !extra[id] {
			return invalid(RuleDropNotExtra, "drop %s: the delta reports no extra field with that id", canonjson.Quote(id, 128))
		}
	}
	return nil
}

// admissible turns a verdict into the build-time decision.
func admissible(d *SchemaDelta, m Manifest, a Agreement) error {
	switch {
	case m.Verdict == Compatible || m.Verdict == BestEffortAllowed:
		return nil
	case m.Verdict == NegotiationRequired:
		return refusal(CodeNegotiationRequired, m, d.Blocking(), "no negotiation protocol agreed for")
	case m.Protocol == FailFast:
		return refusal(CodeFailFast, m, d.Blocking(), "FAIL_FAST refuses")
	}
	if un := unresolved(d.entries, a.Drop); len(un) > 0 {
		return refusal(CodeUntransformable, m, un, m.Protocol.String()+" cannot transform losslessly")
	}
	return nil
}

// unresolved returns the entries no lossless transformation resolves: everything but missing
// cases, moves, narrowings and extra fields declared droppable.
func unresolved(entries []Entry, drops []string) []Entry {
	var out []Entry
	for _, e := range entries {
		switch {
		case e.Kind == MissingCase, e.Kind == Moved:
		case e.Kind == TypeMismatch && e.Mismatch.Narrowing():
		case e.Kind == ExtraField && slices.Contains(drops, e.Producer.Member):
		default:
			out = append(out, e)
		}
	}
	return out
}

func refusal(code Code, m Manifest, entries []Entry, what string) *Error {
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = e.String()
	}
	return &Error{Code: code, Rule: RuleDelta, Entries: entries, Manifest: &m,
		Message: fmt.Sprintf("%s a delta of %d entries: %s", what, len(entries), strings.Join(lines, "; "))}
}
