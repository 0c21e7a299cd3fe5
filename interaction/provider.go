package interaction

import (
	"github.com/beamagents/beamagents/internal/canonjson"
)

// Integer patterns of the projection: exactly the canonical decimal forms Decode admits.
const (
	signedPattern   = "^(0|-?[1-9][0-9]*)$"
	unsignedPattern = "^(0|[1-9][0-9]*)$"
)

// renderProvider projects the value document onto JSON Schema draft 2020-12. It reads only
// the type graph; Decode never reads the projection.
func (s *Schema) renderProvider() error {
	defs := make(canonjson.Object, len(s.types))
	for i, t := range s.types {
		defs[i] = canonjson.Member{Key: t.id, Value: typeSchema(t)}
	}
	doc, err := s.projectionDocument(defs)
	if err != nil {
		return err
	}
	s.provider = doc
	return nil
}

func ref(t *Type) canonjson.Object {
	return canonjson.Object{{Key: "$ref", Value: "#/$defs/" + t.id}}
}

func typeSchema(t *Type) canonjson.Object {
	if t.kind == Record {
		return closedObject(canonjson.Object{{Key: "fields", Value: fieldsSchema(t.fields.list)}})
	}
	alts := make(canonjson.Array, len(t.cases))
	for i, c := range t.cases {
		alts[i] = closedObject(canonjson.Object{
			{Key: "case", Value: canonjson.Object{{Key: "const", Value: c.id}}},
			{Key: "fields", Value: fieldsSchema(c.fields.list)},
		})
	}
	return canonjson.Object{{Key: "oneOf", Value: alts}}
}

// closedObject requires exactly the given properties.
func closedObject(props canonjson.Object) canonjson.Object {
	req := make(canonjson.Array, len(props))
	for i, p := range props {
		req[i] = p.Key
	}
	return canonjson.Object{
		{Key: "type", Value: "object"},
		{Key: "properties", Value: props},
		{Key: "required", Value: req},
		{Key: "additionalProperties", Value: false},
	}
}

func fieldsSchema(fs []*Field) canonjson.Object {
	props := make(canonjson.Object, len(fs))
	for i, f := range fs {
		props[i] = canonjson.Member{Key: f.id, Value: leafSchema(f)}
	}
	return closedObject(props)
}

func leafSchema(f *Field) canonjson.Object {
	switch f.rep {
	case Bool:
		return canonjson.Object{{Key: "type", Value: "boolean"}}
	case String:
		// maxLength counts code points, which never exceed UTF-8 bytes: a sound, looser bound.
		return canonjson.Object{{Key: "type", Value: "string"}, {Key: "maxLength", Value: f.maxBytes}, {Key: "x-max-bytes", Value: f.maxBytes}}
	case Bytes:
		return canonjson.Object{
			{Key: "type", Value: "array"},
			{Key: "items", Value: canonjson.Object{{Key: "type", Value: "integer"}, {Key: "minimum", Value: 0}, {Key: "maximum", Value: 255}}},
			{Key: "maxItems", Value: f.maxBytes},
		}
	case Nested:
		return ref(f.nested)
	}
	pattern := signedPattern
	if f.rep == U32 || f.rep == U64 {
		pattern = unsignedPattern
	}
	return canonjson.Object{
		{Key: "type", Value: "string"},
		{Key: "pattern", Value: pattern},
		{Key: "x-representation", Value: f.rep.String()},
		{Key: "x-minimum", Value: f.min.String()},
		{Key: "x-maximum", Value: f.max.String()},
	}
}
