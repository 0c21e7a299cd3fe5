package tool

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/canonjson"
)

// Decode copies an admitted record value into a T, a struct whose fields (by `json` name, as
// Struct reads them) hold the record's properties; a nested record fills a struct or a
// pointer to one. A property without a field, a Go type that does not hold the value, or a
// variant is refused with ErrArguments.
func Decode[T any](v *interaction.Value) (T, error) {
	var out T
	if v == nil {
		return out, &Error{Code: CodeArguments, Detail: "no value"}
	}
	if msg := decodeInto(reflect.ValueOf(&out).Elem(), v, v.TypeID()); msg != "" {
		return out, &Error{Code: CodeArguments, Tool: v.TypeID(), Detail: msg}
	}
	return out, nil
}

// decodeInto sets the struct rv from v; it returns "" or what does not fit.
func decodeInto(rv reflect.Value, v *interaction.Value, path string) string {
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			rv.Set(reflect.New(rv.Type().Elem()))
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct || v.Case() != nil {
		return path + ": " + rv.Type().String() + " does not hold a " + v.Type().Kind().String()
	}
	fields := goFields(rv.Type())
	for i := range v.NumFields() {
		fv := v.Field(i)
		name := PropertyName(fv.Field())
		gf, ok := fields[name]
		if !ok {
			return path + ": no field of " + rv.Type().String() + " for property " + name
		}
		if msg := setField(rv.Field(gf.index), fv, path+"."+name); msg != "" {
			return msg
		}
	}
	return ""
}

// setField sets one Go field from a field value.
func setField(dst reflect.Value, fv interaction.FieldValue, path string) string {
	k := dst.Kind()
	switch r := fv.Representation(); {
	case r == interaction.Bool && k == reflect.Bool:
		dst.SetBool(fv.Bool())
		return ""
	case (r == interaction.I32 || r == interaction.I64) && k >= reflect.Int && k <= reflect.Int64 && !dst.OverflowInt(fv.Int()):
		dst.SetInt(fv.Int())
		return ""
	case (r == interaction.U32 || r == interaction.U64) && k >= reflect.Uint && k <= reflect.Uint64 && !dst.OverflowUint(fv.Uint()):
		dst.SetUint(fv.Uint())
		return ""
	case r == interaction.String && k == reflect.String:
		dst.SetString(fv.Text())
		return ""
	case r == interaction.Bytes && k == reflect.Slice && dst.Type().Elem().Kind() == reflect.Uint8:
		dst.SetBytes(fv.Bytes())
		return ""
	case r == interaction.Nested:
		return decodeInto(dst, fv.Nested(), path)
	}
	return fmt.Sprintf("%s: Go type %s does not hold the %s %s", path, dst.Type(), repName(fv.Representation()), fv.Interface())
}

// Encode renders args as a value of the record schema s, which must admit it (every bound
// holds): its FieldsJSON is the canonical arguments a handler passes to Context.Tools. Fields
// are matched by `json` name, as Decode matches them; a nil pointer to a nested struct is its
// zero value.
func Encode[T any](s *interaction.Schema, args T) (*interaction.Value, error) {
	if err := CheckArgs(s.RootTypeID(), s); err != nil {
		return nil, err
	}
	doc := canonjson.AppendValuePrefix(nil, interaction.ValueFormat, s.RootTypeID(), s.Digest())
	doc, msg := appendGoValue(doc, reflect.ValueOf(args), s.Root(), s.RootTypeID())
	if msg != "" {
		return nil, &Error{Code: CodeArguments, Tool: s.RootTypeID(), Detail: msg}
	}
	v, err := s.Decode(append(doc, "}\n"...))
	if err != nil {
		return nil, &Error{Code: CodeArguments, Tool: s.RootTypeID(), Detail: "arguments out of their schema", Err: err}
	}
	return v, nil
}

// appendGoValue appends the canonical record value ({"fields":…}) of the struct rv.
func appendGoValue(dst []byte, rv reflect.Value, t *interaction.Type, path string) ([]byte, string) {
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			rv = reflect.Zero(rv.Type().Elem())
		} else {
			rv = rv.Elem()
		}
	}
	if rv.Kind() != reflect.Struct || t.Kind() != interaction.Record {
		return nil, path + ": " + rv.Type().String() + " is not a struct of a record"
	}
	fields := goFields(rv.Type())
	dst = append(dst, `{"fields":{`...)
	for i := range t.NumFields() {
		f := t.Field(i)
		name := PropertyName(f)
		gf, ok := fields[name]
		if !ok {
			return nil, path + ": no field of " + rv.Type().String() + " for property " + name
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = canonjson.AppendString(dst, f.StableID())
		dst = append(dst, ':')
		var msg string
		if dst, msg = appendGoLeaf(dst, rv.Field(gf.index), f, path+"."+name); msg != "" {
			return nil, msg
		}
	}
	return append(dst, "}}"...), ""
}

func appendGoLeaf(dst []byte, fv reflect.Value, f *interaction.Field, path string) ([]byte, string) {
	k := fv.Kind()
	switch r := f.Representation(); {
	case r == interaction.Bool && k == reflect.Bool:
		return strconv.AppendBool(dst, fv.Bool()), ""
	case r.IsInteger() && k >= reflect.Int && k <= reflect.Int64:
		return strconv.AppendQuote(dst, strconv.FormatInt(fv.Int(), 10)), ""
	case r.IsInteger() && k >= reflect.Uint && k <= reflect.Uint64:
		return strconv.AppendQuote(dst, strconv.FormatUint(fv.Uint(), 10)), ""
	case r == interaction.String && k == reflect.String:
		return canonjson.AppendString(dst, fv.String()), ""
	case r == interaction.Bytes && k == reflect.Slice && fv.Type().Elem().Kind() == reflect.Uint8:
		return canonjson.AppendBytes(dst, fv.Bytes()), ""
	case r == interaction.Nested:
		return appendGoValue(dst, fv, f.Nested(), path)
	}
	return nil, path + ": Go type " + fv.Type().String() + " does not hold a " + repName(f.Representation())
}
