package interaction

import (
	"strings"
	"unicode/utf8"

	"github.com/beamagents/beamagents/internal/canonjson"
	"github.com/beamagents/beamagents/internal/jsontext"
)

// MaxProviderBytes bounds provider text: whitespace and number tokens may make it longer than
// its canonical document (at most MaxDocumentBytes), but not without limit.
const MaxProviderBytes = 4 * MaxDocumentBytes

// providerNesting bounds container nesting in provider text: the deepest value document of
// any schema nests 2*MaxDepth+1 containers inside the envelope's one.
const providerNesting = 2*MaxDepth + 2

// Canonicalizations provider text may need, as ReadProvider reports them. None of them
// changes a value.
const (
	AppliedEnvelope      = "envelope"       // the envelope was absent; the schema's own was added
	AppliedFinalLF       = "final_lf"       // the terminal LF was absent
	AppliedWhitespace    = "whitespace"     // insignificant whitespace was removed
	AppliedKeyOrder      = "key_order"      // members were put in declaration order
	AppliedIntegerNumber = "integer_number" // integers written as JSON numbers became decimal strings
	AppliedNegativeZero  = "negative_zero"  // an integer written "-0" became "0"
	AppliedStringEscape  = "string_escape"  // strings or keys were re-escaped canonically
)

// appliedNames in sorted order, so a reading's list is sorted by construction.
var appliedNames = [...]string{AppliedEnvelope, AppliedFinalLF, AppliedIntegerNumber, AppliedKeyOrder, AppliedNegativeZero, AppliedStringEscape, AppliedWhitespace}

// applied is a set of canonicalizations: bit i is appliedNames[i].
type applied uint8

func (a *applied) note(name string) {
	for i, n := range appliedNames {
		if n == name {
			*a |= 1 << i
		}
	}
}

func (a applied) names() []string {
	var out []string
	for i, n := range appliedNames {
		if a&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// ReadProvider reads the JSON text a provider returned under s's provider projection and
// returns the canonical value document of the same value (terminal LF included) with the
// canonicalizations the text needed, sorted; or it refuses with SPX-Z205 (the text is not
// JSON, or names a member twice) or SPX-Z206.
//
// Admitted beyond the canonical form: insignificant whitespace, members in any order, the
// value without its envelope (the envelope, if present, must name exactly this schema), no
// terminal LF, any valid string escaping, and integers written as JSON number tokens or as
// decimal strings ("-0" reads as 0). Refused, never repaired: invalid JSON or UTF-8, a
// duplicate key anywhere, null, a missing or undeclared field or member (nothing is filled
// in, nothing dropped), an integer with a fraction or an exponent (even 1.0 or 1e0) or outside
// its bounds (never rounded or clamped), a string or bytes over its bound (never cut), and any
// JSON type the field's representation does not take. Integers are read from their token
// text, never through float64.
func (s *Schema) ReadProvider(text []byte) (doc []byte, applied []string, err error) {
	if len(text) > MaxProviderBytes {
		return nil, nil, decodeErr(CodeNotAdmitted, RuleInputBytes, "$", "the text is longer than %d bytes", MaxProviderBytes)
	}
	if !utf8.Valid(text) {
		return nil, nil, decodeErr(CodeNotAdmitted, RuleUTF8, "$", "the text is not UTF-8")
	}
	w := &walker{provider: true}
	body := string(text)
	if strings.HasSuffix(body, "\n") {
		body = body[:len(body)-1]
	} else {
		w.applied.note(AppliedFinalLF)
	}
	root, dev, err := jsontext.Parse(body, jsontext.Options{MaxNesting: providerNesting, RejectDuplicates: true})
	if err != nil {
		se := err.(*jsontext.SyntaxError)
		rule := RuleJSON
		if se.Duplicate {
			rule = RuleDuplicateKey
		}
		return nil, nil, decodeErr(CodeNotCanonical, rule, "$", "at byte %d: %s", se.Offset, se.Reason)
	}
	if dev.Spaced {
		w.applied.note(AppliedWhitespace)
	}
	if dev.Escaped {
		w.applied.note(AppliedStringEscape)
	}
	v, err := s.providerDocument(w, root)
	if err != nil {
		return nil, nil, err
	}
	doc = appendDocument(make([]byte, 0, len(s.valuePrefix)+len(text)+2), s, v)
	if len(doc) > MaxDocumentBytes {
		return nil, nil, decodeErr(CodeNotAdmitted, RuleDocumentBytes, "$", "the canonical document would be %d bytes; at most %d are admitted", len(doc), MaxDocumentBytes)
	}
	return doc, w.applied.names(), nil
}

// providerDocument reads the top-level object: an envelope naming this schema, or the value
// alone.
func (s *Schema) providerDocument(w *walker, n *jsontext.Node) (*Value, error) {
	if n.Kind != jsontext.Object {
		return nil, w.fail(RuleRepresentation, "the text must be a JSON object, not %s", n.Kind)
	}
	value := n
	if n.Last("value") != nil {
		if err := s.providerEnvelope(w, n); err != nil {
			return nil, err
		}
		value = n.Last("value")
	} else {
		w.applied.note(AppliedEnvelope)
	}
	w.push(".value")
	return w.value(s.root, value)
}

// providerEnvelope checks a present envelope: exactly its four members, naming exactly this
// schema.
func (s *Schema) providerEnvelope(w *walker, n *jsontext.Node) error {
	bindings := s.envelopeBindings()
	for i, m := range n.Members {
		if i >= len(canonjson.EnvelopeMembers) || m.Key != canonjson.EnvelopeMembers[i] {
			w.applied.note(AppliedKeyOrder)
		}
		if m.Key == "value" {
			continue
		}
		j := indexOf(canonjson.EnvelopeMembers[:3], m.Key)
		if j < 0 {
			return w.fail(RuleEnvelope, "unknown envelope member %s", canonjson.Quote(m.Key, 64))
		}
		if want := bindings[j].want; m.Value.Kind != jsontext.String || m.Value.Text != want {
			return w.fail(RuleEnvelope, "%s must be %s", m.Key, canonjson.Quote(want, 96))
		}
	}
	if len(n.Members) != len(canonjson.EnvelopeMembers) {
		return w.fail(RuleEnvelope, "an envelope has exactly the members schema, root_type_id, schema_digest and value")
	}
	return nil
}
