package interaction

import (
	"fmt"

	"github.com/beamagents/beamagents/interaction/internal/canon"
)

// Integer patterns of the projection: exactly the canonical decimal forms Decode admits.
const (
	signedPattern   = "^(0|-?[1-9][0-9]*)$"
	unsignedPattern = "^(0|[1-9][0-9]*)$"
)

// renderProvider projects the value document onto JSON Schema draft 2020-12. It reads only
// the type graph; Decode never reads the projection.
func (s *Schema) renderProvider() error {
	defs := make(canon.Object, len(s.types))
	for i, t := range s.types {
		defs[i] = canon.Member{Key: t.id, Value: typeSchema(t)}
	}
	doc := canon.Append(nil, canon.Object{
		{Key: "$schema", Value: "https://json-schema.org/draft/2020-12/schema"},
		{Key: "title", Value: s.root.id},
		{Key: "type", Value: "object"},
		{Key: "properties", Value: canon.Object{
			{Key: "schema", Value: canon.Object{{Key: "const", Value: ValueFormat}}},
			{Key: "root_type_id", Value: canon.Object{{Key: "const", Value: s.root.id}}},
			{Key: "schema_digest", Value: canon.Object{{Key: "const", Value: s.digest}}},
			{Key: "value", Value: ref(s.root)},
		}},
		{Key: "required", Value: canon.Array{"schema", "root_type_id", "schema_digest", "value"}},
		{Key: "additionalProperties", Value: false},
		{Key: "$defs", Value: defs},
	})
	doc = append(doc, '\n')
	if len(doc) > MaxSchemaBytes {
		return &Error{Code: CodeZ203, Rule: RuleProviderSchemaBytes, Element: string(s.root.desc.FullName()),
			Message: fmt.Sprintf("the provider projection would be %d bytes; the budget is %d", len(doc), MaxSchemaBytes)}
	}
	s.provider = doc
	return nil
}

func ref(t *Type) canon.Object {
	return canon.Object{{Key: "$ref", Value: "#/$defs/" + t.id}}
}

func typeSchema(t *Type) canon.Object {
	if t.kind == Record {
		return closedObject(canon.Object{{Key: "fields", Value: fieldsSchema(t.fields.list)}})
	}
	alts := make(canon.Array, len(t.cases))
	for i, c := range t.cases {
		alts[i] = closedObject(canon.Object{
			{Key: "case", Value: canon.Object{{Key: "const", Value: c.id}}},
			{Key: "fields", Value: fieldsSchema(c.fields.list)},
		})
	}
	return canon.Object{{Key: "oneOf", Value: alts}}
}

// closedObject requires exactly the given properties.
func closedObject(props canon.Object) canon.Object {
	req := make(canon.Array, len(props))
	for i, p := range props {
		req[i] = p.Key
	}
	return canon.Object{
		{Key: "type", Value: "object"},
		{Key: "properties", Value: props},
		{Key: "required", Value: req},
		{Key: "additionalProperties", Value: false},
	}
}

func fieldsSchema(fs []*Field) canon.Object {
	props := make(canon.Object, len(fs))
	for i, f := range fs {
		props[i] = canon.Member{Key: f.id, Value: leafSchema(f)}
	}
	return closedObject(props)
}

func leafSchema(f *Field) canon.Object {
	switch f.rep {
	case Bool:
		return canon.Object{{Key: "type", Value: "boolean"}}
	case String:
		// maxLength counts code points, which never exceed UTF-8 bytes: a sound, looser bound.
		return canon.Object{{Key: "type", Value: "string"}, {Key: "maxLength", Value: f.maxBytes}, {Key: "x-max-bytes", Value: f.maxBytes}}
	case Bytes:
		return canon.Object{
			{Key: "type", Value: "array"},
			{Key: "items", Value: canon.Object{{Key: "type", Value: "integer"}, {Key: "minimum", Value: 0}, {Key: "maximum", Value: 255}}},
			{Key: "maxItems", Value: f.maxBytes},
		}
	case Nested:
		return ref(f.nested)
	}
	pattern := signedPattern
	if f.rep == U32 || f.rep == U64 {
		pattern = unsignedPattern
	}
	return canon.Object{
		{Key: "type", Value: "string"},
		{Key: "pattern", Value: pattern},
		{Key: "x-representation", Value: f.rep.String()},
		{Key: "x-minimum", Value: f.min.String()},
		{Key: "x-maximum", Value: f.max.String()},
	}
}
