package interaction

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/beamagents/beamagents/internal/canonjson"
	"github.com/beamagents/beamagents/internal/jsontext"
)

// presentedDomain keeps the digest of a presented projection apart from every schema digest.
const presentedDomain = SchemaFormat + " presented_projection\x00"

// CompilePresented compiles md exactly as Compile does (same type graph, document and digest)
// and marks the schema presented: a model is shown its values by their protobuf field names,
// as plain nested objects, with integers as JSON numbers bounded by minimum and maximum and
// bytes as standard base64 strings (PresentedJSONSchema), and what it writes is read back by ReadPresented. Every type of the
// graph must be a record (RulePresentedVariant). A field's leading comment, when the
// descriptor keeps its source info, is its description.
func CompilePresented(md protoreflect.MessageDescriptor) (*Schema, error) {
	s, err := Compile(md)
	if err != nil {
		return nil, err
	}
	if err := s.renderPresented(); err != nil {
		return nil, err
	}
	return s, nil
}

// Presented reports whether the schema was compiled by CompilePresented.
func (s *Schema) Presented() bool { return s.presented != nil }

// PresentedJSONSchema returns a copy of the presented projection (terminal LF included), or
// nil when the schema is not presented. It has the shape of ProviderJSONSchema (an envelope
// whose value is the root record's {"fields":…}, and $defs by type id), so a provider derives
// a tool's parameters from it the same way; but the fields object and every nested record are
// keyed by property names, nested records are plain objects, integers are JSON integers
// with exact minimum and maximum, however wide, and bytes are standard base64 strings.
func (s *Schema) PresentedJSONSchema() []byte { return bytes.Clone(s.presented) }

// ModelJSONSchema returns what a model is shown of the schema as a tool's arguments: the
// presented projection when the schema is presented, else the provider projection by stable
// ids. Whatever shows a tool to a model (a provider, a framework adapter) sends this one, so
// the arguments it gets back are in the form their admission reads.
func (s *Schema) ModelJSONSchema() []byte {
	if s.Presented() {
		return s.PresentedJSONSchema()
	}
	return s.ProviderJSONSchema()
}

// PresentedDigest returns "sha256:<hex>" over the presented projection ("" when the schema is
// not presented): what a request names the tool's parameters by, apart from the schema digest
// that a projection by stable ids of the same schema shares.
func (s *Schema) PresentedDigest() string { return s.presentedDigest }

func (s *Schema) renderPresented() error {
	defs := make(canonjson.Object, len(s.types))
	for i, t := range s.types {
		if t.kind != Record {
			return deriveErr(RulePresentedVariant, t.desc, "a presented schema has records only; %s is a variant", canonjson.Quote(t.id, 128))
		}
		obj := presentedObject(t)
		if t == s.root {
			obj = closedObject(canonjson.Object{{Key: "fields", Value: obj}})
		}
		defs[i] = canonjson.Member{Key: t.id, Value: obj}
	}
	doc, err := s.projectionDocument(defs)
	if err != nil {
		return err
	}
	s.presented = doc
	s.presentedDigest = canonjson.Digest(presentedDomain, doc)
	return nil
}

// presentedObject is a record's plain object: one required member per field, by property
// name, closed.
func presentedObject(t *Type) canonjson.Object {
	props := make(canonjson.Object, len(t.fields.list))
	for i, f := range t.fields.list {
		props[i] = canonjson.Member{Key: PropertyName(f), Value: presentedLeaf(f)}
	}
	return closedObject(props)
}

func presentedLeaf(f *Field) canonjson.Object {
	var o canonjson.Object
	switch {
	case f.rep == Nested:
		return ref(f.nested) // no sibling keywords beside a reference
	case f.rep.IsInteger():
		o = canonjson.Object{
			{Key: "type", Value: "integer"},
			{Key: "minimum", Value: canonjson.Raw(f.min.String())},
			{Key: "maximum", Value: canonjson.Raw(f.max.String())},
		}
	case f.rep == Bytes:
		o = canonjson.Object{
			{Key: "type", Value: "string"},
			{Key: "pattern", Value: base64Pattern},
			{Key: "maxLength", Value: base64.StdEncoding.EncodedLen(f.maxBytes)},
		}
	default:
		o = leafSchema(f)
	}
	if d := Description(f); d != "" {
		o = append(o, canonjson.Member{Key: "description", Value: d})
	}
	return o
}

// base64Pattern is standard base64 with padding, how a presented bytes field is written.
const base64Pattern = "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"

// PropertyName is the name a field is presented by: its protobuf field name.
func PropertyName(f *Field) string { return string(f.desc.Name()) }

// Description is the field's leading comment in its descriptor's source info, trimmed; ""
// when there is none.
func Description(f *Field) string {
	loc := f.desc.ParentFile().SourceLocations().ByDescriptor(f.desc)
	return strings.TrimSpace(loc.LeadingComments)
}

// ReadPresented reads a model's arguments written under the presented projection (an object
// by property names, nested records as plain objects, bytes as standard base64) and returns
// the root record's value in the provider dialect the admitters take, {"fields":{…}} by
// stable ids, with a bytes field's base64 as its byte array and every other leaf copied
// verbatim (integers keep their exact token text). It renames and nests only: the leaves, a
// missing field and every bound are left for the admission to judge. Refused here: text over
// MaxProviderBytes or not UTF-8 (SPX-Z206), not JSON or naming a member twice (SPX-Z205), a
// value that is not an object where a record is expected, a property the record does not
// declare or bad base64 (SPX-Z206).
func (s *Schema) ReadPresented(args []byte) ([]byte, error) {
	if len(args) > MaxProviderBytes {
		return nil, decodeErr(CodeNotAdmitted, RuleInputBytes, "$", "the text is longer than %d bytes", MaxProviderBytes)
	}
	if !utf8.Valid(args) {
		return nil, decodeErr(CodeNotAdmitted, RuleUTF8, "$", "the text is not UTF-8")
	}
	text := string(args)
	root, _, err := jsontext.Parse(text, jsontext.Options{MaxNesting: providerNesting, RejectDuplicates: true})
	if err != nil {
		se := err.(*jsontext.SyntaxError)
		rule := RuleJSON
		if se.Duplicate {
			rule = RuleDuplicateKey
		}
		return nil, decodeErr(CodeNotCanonical, rule, "$", "at byte %d: %s", se.Offset, se.Reason)
	}
	return appendPresented(make([]byte, 0, len(args)+64*len(s.types)), text, s.root, root, "$")
}

// appendPresented appends the record value of t read from its plain object n.
func appendPresented(dst []byte, text string, t *Type, n *jsontext.Node, path string) ([]byte, error) {
	if t.kind != Record {
		return nil, decodeErr(CodeNotAdmitted, RuleRepresentation, path, "%s is not a record", canonjson.Quote(t.id, 128))
	}
	if n.Kind != jsontext.Object {
		return nil, decodeErr(CodeNotAdmitted, RuleRepresentation, path, "a record is an object of its properties, not %s", n.Kind)
	}
	dst = append(dst, `{"fields":{`...)
	for i, m := range n.Members {
		f := fieldByName(t, m.Key)
		if f == nil {
			return nil, decodeErr(CodeNotAdmitted, RuleFieldsUnknown, path+canonjson.MemberPath(m.Key), "%s declares no property %s", canonjson.Quote(t.id, 128), canonjson.Quote(m.Key, 64))
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, f.key...)
		if f.rep == Nested {
			var err error
			if dst, err = appendPresented(dst, text, f.nested, m.Value, path+canonjson.MemberPath(m.Key)); err != nil {
				return nil, err
			}
			continue
		}
		if f.rep == Bytes && m.Value.Kind == jsontext.String {
			b, err := base64.StdEncoding.Strict().DecodeString(m.Value.Text)
			if err != nil {
				return nil, decodeErr(CodeNotAdmitted, RuleRepresentation, path+canonjson.MemberPath(m.Key), "a bytes property is standard base64: %v", err)
			}
			dst = canonjson.AppendBytes(dst, b)
			continue
		}
		dst = append(dst, text[m.Value.Offset:m.Value.End]...)
	}
	return append(dst, "}}"...), nil
}

// fieldByName finds a record's field by property name; records are small, so a scan.
func fieldByName(t *Type, name string) *Field {
	for _, f := range t.fields.list {
		if string(f.desc.Name()) == name {
			return f
		}
	}
	return nil
}

// projectionDocument renders a projection: the value-document envelope over the root's
// definition, with defs, within MaxSchemaBytes.
func (s *Schema) projectionDocument(defs canonjson.Object) ([]byte, error) {
	doc := canonjson.Append(nil, canonjson.Object{
		{Key: "$schema", Value: "https://json-schema.org/draft/2020-12/schema"},
		{Key: "title", Value: s.root.id},
		{Key: "type", Value: "object"},
		{Key: "properties", Value: canonjson.Object{
			{Key: "schema", Value: canonjson.Object{{Key: "const", Value: ValueFormat}}},
			{Key: "root_type_id", Value: canonjson.Object{{Key: "const", Value: s.root.id}}},
			{Key: "schema_digest", Value: canonjson.Object{{Key: "const", Value: s.digest}}},
			{Key: "value", Value: ref(s.root)},
		}},
		{Key: "required", Value: canonjson.Strings(canonjson.EnvelopeMembers[:])},
		{Key: "additionalProperties", Value: false},
		{Key: "$defs", Value: defs},
	})
	doc = append(doc, '\n')
	if len(doc) > MaxSchemaBytes {
		return nil, &Error{Code: CodeDocumentTooLarge, Rule: RuleProviderSchemaBytes, Element: string(s.root.desc.FullName()),
			Message: fmt.Sprintf("the provider projection would be %d bytes; the budget is %d", len(doc), MaxSchemaBytes)}
	}
	return doc, nil
}
