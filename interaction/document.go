package interaction

import (
	"fmt"

	"github.com/beamagents/beamagents/internal/canonjson"
)

// Digest domains. A digest is "sha256:" + hex(SHA-256(domain || body)); distinct domains keep
// a revision from ever being mistaken for a digest of some other body.
const (
	revisionDomain = SchemaFormat + " root_type_revision\x00"
	digestDomain   = SchemaFormat + " schema_digest\x00"
)

// nonclaims are stated in every schema document so no reader mistakes admission for more.
var nonclaims = []string{
	"a decoded value is data: it carries no authority and authorizes no tool call, intent or effect",
	"compiling a schema and decoding a value perform no provider, tool, filesystem, process, network or approval effect",
	"the provider JSON Schema projection never broadens admission: the decoder enforces every rule and bound itself",
	"protobuf display names, comments, field numbers and wire encodings are not part of this schema",
}

func (s *Schema) renderDocument() error {
	types := make(canonjson.Array, len(s.types))
	for i, t := range s.types {
		types[i] = typeEntry(t)
	}
	typesJSON := canonjson.Raw(canonjson.Append(nil, types))
	body := canonjson.Append(nil, canonjson.Object{{Key: "root_type_id", Value: s.root.id}, {Key: "types", Value: typesJSON}})
	s.revision = canonjson.Digest(revisionDomain, body)
	doc := canonjson.Append(nil, canonjson.Object{
		{Key: "schema", Value: SchemaFormat},
		{Key: "root_type_id", Value: s.root.id},
		{Key: "root_type_revision", Value: s.revision},
		{Key: "types", Value: typesJSON},
		{Key: "wire", Value: wireEntry()},
		{Key: "nonclaims", Value: canonjson.Strings(nonclaims)},
	})
	doc = append(doc, '\n')
	if len(doc) > MaxSchemaBytes {
		return &Error{Code: CodeDocumentTooLarge, Rule: RuleSchemaDocumentBytes, Element: string(s.root.desc.FullName()),
			Message: fmt.Sprintf("the schema document would be %d bytes; the budget is %d", len(doc), MaxSchemaBytes)}
	}
	s.document = doc
	s.digest = canonjson.Digest(digestDomain, doc)
	return nil
}

func typeEntry(t *Type) canonjson.Object {
	o := canonjson.Object{{Key: "stable_id", Value: t.id}, {Key: "kind", Value: t.kind.String()}}
	if t.kind == Record {
		return append(o, canonjson.Member{Key: "fields", Value: fieldEntries(t.fields.list)})
	}
	cases := make(canonjson.Array, len(t.cases))
	for i, c := range t.cases {
		cases[i] = canonjson.Object{{Key: "stable_id", Value: c.id}, {Key: "fields", Value: fieldEntries(c.fields.list)}}
	}
	return append(o, canonjson.Member{Key: "cases", Value: cases})
}

func fieldEntries(fs []*Field) canonjson.Array {
	a := make(canonjson.Array, len(fs))
	for i, f := range fs {
		a[i] = canonjson.Object{{Key: "stable_id", Value: f.id}, {Key: "type", Value: fieldTypeEntry(f)}}
	}
	return a
}

func fieldTypeEntry(f *Field) canonjson.Object {
	if f.rep == Nested {
		return canonjson.Object{{Key: "kind", Value: "nested"}, {Key: "stable_id", Value: f.nested.id}}
	}
	o := canonjson.Object{{Key: "kind", Value: "scalar"}, {Key: "representation", Value: f.rep.String()}}
	switch {
	case f.rep.IsInteger():
		o = append(o, canonjson.Member{Key: "minimum", Value: f.min.String()}, canonjson.Member{Key: "maximum", Value: f.max.String()})
	case f.rep == String || f.rep == Bytes:
		o = append(o, canonjson.Member{Key: "max_bytes", Value: f.maxBytes})
	}
	return o
}

func wireEntry() canonjson.Object {
	return canonjson.Object{
		{Key: "closed_objects", Value: true},
		{Key: "key_order", Value: "declaration_order"},
		{Key: "exact_integer_encoding", Value: "decimal_string"},
		{Key: "bytes_encoding", Value: "byte_array_u8"},
		{Key: "max_document_bytes", Value: MaxDocumentBytes},
		{Key: "max_string_field_bytes", Value: MaxStringBytes},
		{Key: "max_bytes_field_bytes", Value: MaxBytesLength},
		{Key: "max_types", Value: MaxTypes},
		{Key: "max_depth", Value: MaxDepth},
	}
}
