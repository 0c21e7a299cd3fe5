package interaction

import (
	"strconv"

	"github.com/beamagents/beamagents/internal/canonjson"
)

// appendDocument appends the canonical value document of root value v.
func appendDocument(dst []byte, s *Schema, v *Value) []byte {
	dst = append(dst, s.valuePrefix...)
	dst = appendValue(dst, v)
	return append(dst, '}', '\n')
}

func appendValue(dst []byte, v *Value) []byte {
	dst = append(dst, '{')
	if v.cas != nil {
		dst = append(dst, v.cas.prefix...)
	} else {
		dst = append(dst, `"fields":`...)
	}
	dst = appendFields(dst, v)
	return append(dst, '}')
}

func appendFields(dst []byte, v *Value) []byte {
	dst = append(dst, '{')
	for i := range v.fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		fv := &v.fields[i]
		dst = append(dst, fv.field.key...)
		dst = appendLeaf(dst, fv)
	}
	return append(dst, '}')
}

func appendLeaf(dst []byte, fv *FieldValue) []byte {
	switch fv.field.rep {
	case Bool:
		return strconv.AppendBool(dst, fv.bits == 1)
	case I32, I64:
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, int64(fv.bits), 10)
		return append(dst, '"')
	case U32, U64:
		dst = append(dst, '"')
		dst = strconv.AppendUint(dst, fv.bits, 10)
		return append(dst, '"')
	case String:
		return canonjson.AppendString(dst, fv.text)
	case Bytes:
		return canonjson.AppendBytes(dst, fv.text)
	}
	return appendValue(dst, fv.value)
}
