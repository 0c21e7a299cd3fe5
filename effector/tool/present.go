package tool

import (
	"encoding/base64"
	"encoding/json"

	"github.com/beamagents/beamagents/interaction"
)

// maxExact is the largest integer magnitude every JSON reader holds exactly (2^53−1).
const maxExact = 1<<53 - 1

// NumberField reports whether an integer field is presented as a JSON number: its whole
// declared range must be exactly representable as a double. Other integer fields are
// presented as decimal strings.
func NumberField(f *interaction.Field) bool {
	lo, hi := f.Range()
	return lo.Cmp(interaction.IntOf(-maxExact)) >= 0 && hi.Cmp(interaction.IntOf(maxExact)) <= 0
}

// PropertyName is the name a tool sees for f: its protobuf field name (order_id), the name
// its declaration uses, never the stable id.
func PropertyName(f *interaction.Field) string { return interaction.PropertyName(f) }

// Present renders v in the tool's own shape: an object of property names in declaration
// order; bools as JSON booleans; integers as numbers or decimal strings (NumberField);
// strings as strings; bytes as standard base64 strings; nested records as objects and nested
// variants as an object with one member named by the chosen case.
func Present(v *interaction.Value) json.RawMessage {
	return appendValue(nil, v)
}

func appendValue(dst []byte, v *interaction.Value) []byte {
	if c := v.Case(); c != nil {
		dst = append(dst, '{')
		dst = appendString(dst, string(c.Descriptor().Name()))
		dst = append(dst, ':')
		dst = appendFields(dst, v)
		return append(dst, '}')
	}
	return appendFields(dst, v)
}

func appendFields(dst []byte, v *interaction.Value) []byte {
	dst = append(dst, '{')
	for i := range v.NumFields() {
		if i > 0 {
			dst = append(dst, ',')
		}
		fv := v.Field(i)
		dst = appendString(dst, PropertyName(fv.Field()))
		dst = append(dst, ':')
		dst = appendField(dst, fv)
	}
	return append(dst, '}')
}

func appendField(dst []byte, fv interaction.FieldValue) []byte {
	switch fv.Representation() {
	case interaction.Bool:
		if fv.Bool() {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case interaction.I32, interaction.I64, interaction.U32, interaction.U64:
		if NumberField(fv.Field()) {
			return fv.Integer().Append(dst)
		}
		dst = append(dst, '"')
		dst = fv.Integer().Append(dst)
		return append(dst, '"')
	case interaction.String:
		return appendString(dst, fv.Text())
	case interaction.Bytes:
		return appendString(dst, base64.StdEncoding.EncodeToString(fv.Bytes()))
	case interaction.Nested:
		return appendValue(dst, fv.Nested())
	}
	return append(dst, "null"...)
}

func appendString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a Go string always marshals
	return append(dst, b...)
}
