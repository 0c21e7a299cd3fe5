package interaction

import (
	"github.com/beamagents/beamagents/internal/canonjson"
	"github.com/beamagents/beamagents/internal/jsontext"
)

// maxValueNesting is the deepest container nesting inside "value" that a value of any
// admitted schema can have: two containers (value object, fields object) per type level plus
// one bytes array.
const maxValueNesting = 2*MaxDepth + 1

// reference runs steps 3 to 6 literally on a generic, order- and duplicate-preserving parse.
// Decode reaches it only when the single-pass recognizer did not admit the document, so
// every diagnostic comes from here.
func (s *Schema) reference(text string) (*Value, error) {
	if err := lineEnding(text); err != nil {
		return nil, err
	}
	root, _, err := jsontext.Parse(text[:len(text)-1], jsontext.Options{})
	if err != nil {
		se := err.(*jsontext.SyntaxError)
		return nil, decodeErr(CodeNotCanonical, RuleJSON, "$", "invalid JSON at byte %d: %s", se.Offset, se.Reason)
	}
	valueNode, err := s.envelope(root)
	if err != nil {
		return nil, err
	}
	if nesting(valueNode) > maxValueNesting {
		return nil, decodeErr(CodeNotAdmitted, RuleMaxDepth, "$.value", "the value nests containers deeper than %d levels (%d type levels)", maxValueNesting, MaxDepth)
	}
	w := &walker{path: []pathSeg{{text: ".value"}}}
	v, err := w.value(s.root, valueNode)
	if err != nil {
		return nil, err
	}
	v.doc = string(appendDocument(nil, s, v))
	if v.doc != text {
		return nil, decodeErr(CodeNotCanonical, RuleCanonical, "$", "the document is not the canonical rendering of its value (first difference at byte %d)", firstDifference(v.doc, text))
	}
	return v, nil
}

// envelope checks step 4 and returns the value node.
func (s *Schema) envelope(root *jsontext.Node) (*jsontext.Node, error) {
	if root.Kind != jsontext.Object {
		return nil, decodeErr(CodeNotCanonical, RuleEnvelope, "$", "the document must be an object with the members schema, root_type_id, schema_digest and value")
	}
	for _, m := range root.Members {
		if indexOf(canonjson.EnvelopeMembers[:], m.Key) < 0 {
			return nil, decodeErr(CodeNotCanonical, RuleEnvelope, "$"+canonjson.MemberPath(m.Key), "unknown envelope member %s", canonjson.Quote(m.Key, 64))
		}
	}
	for _, name := range canonjson.EnvelopeMembers {
		n := root.Last(name)
		if n == nil {
			return nil, decodeErr(CodeNotCanonical, RuleEnvelope, "$", "missing envelope member %q", name)
		}
		if name != "value" && n.Kind != jsontext.String {
			return nil, decodeErr(CodeNotCanonical, RuleEnvelope, "$."+name, "%s must be a string", name)
		}
	}
	for _, b := range s.envelopeBindings() {
		if got := root.Last(b.name).Text; got != b.want {
			return nil, decodeErr(CodeNotAdmitted, b.rule, "$."+b.name, "%s is %s; this schema requires %s", b.name, canonjson.Quote(got, 96), canonjson.Quote(b.want, 96))
		}
	}
	return root.Last("value"), nil
}

// envelopeBinding is an envelope member's required text and the rule that refuses another.
type envelopeBinding struct {
	name, want string
	rule       Rule
}

func (s *Schema) envelopeBindings() [3]envelopeBinding {
	return [...]envelopeBinding{{"schema", ValueFormat, RuleEnvelopeSchema}, {"root_type_id", s.root.id, RuleEnvelopeRootTypeID}, {"schema_digest", s.digest, RuleEnvelopeSchemaDigest}}
}

// nesting returns the container depth of n (0 for a scalar), iteratively.
func nesting(n *jsontext.Node) int {
	type item struct {
		n *jsontext.Node
		d int
	}
	deepest, stack := 0, []item{{n, 1}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.n.Kind != jsontext.Object && it.n.Kind != jsontext.Array {
			continue
		}
		deepest = max(deepest, it.d)
		for _, m := range it.n.Members {
			stack = append(stack, item{m.Value, it.d + 1})
		}
		for _, e := range it.n.Elems {
			stack = append(stack, item{e, it.d + 1})
		}
	}
	return deepest
}
