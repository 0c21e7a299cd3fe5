package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/negotiate"
)

// Func returns a Go function tool. Its arguments arrive as T, decoded from the presented
// object (unknown members refused); its result R is the payload, marshaled as JSON. T must be
// a struct whose fields, by JSON name, cover the schema's properties with matching kinds; an
// integer property that is presented as a string (NumberField) needs a string-typed field or
// the `json:",string"` option. A mismatch is refused here, when the tool is built.
func Func[T, R any](name string, args *interaction.Schema, fn func(ctx context.Context, c Call, args T) (R, error)) (Tool, error) {
	if err := CheckArgs(name, args); err != nil {
		return nil, err
	}
	if err := checkGoType(reflect.TypeFor[T](), args.Root(), ""); err != "" {
		return nil, declErr(name, nil, "argument type %s: %s", reflect.TypeFor[T](), err)
	}
	return &goTool[T, R]{name: name, args: args, fn: fn}, nil
}

type goTool[T, R any] struct {
	name string
	args *interaction.Schema
	fn   func(context.Context, Call, T) (R, error)
}

func (t *goTool[T, R]) Name() string              { return t.name }
func (t *goTool[T, R]) Args() *interaction.Schema { return t.args }

func (t *goTool[T, R]) Invoke(ctx context.Context, c Call) ([]byte, error) {
	var in T
	dec := json.NewDecoder(bytes.NewReader(c.Args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, &Error{Code: CodeArguments, Tool: t.name, Detail: "decoding arguments", Err: err}
	}
	out, err := t.fn(ctx, c, in)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, &Error{Code: CodeFailed, Tool: t.name, Detail: "encoding result", Err: err}
	}
	return b, nil
}

// WithAgreement returns t accepting arguments under a (moves and drops from the producer's
// schema).
func WithAgreement(t Tool, a negotiate.Agreement) Tool { return &agreed{Tool: t, a: a} }

type agreed struct {
	Tool
	a negotiate.Agreement
}

func (t *agreed) Agreement() negotiate.Agreement { return t.a }

// checkGoType checks a struct type against a record type; it returns "" or the mismatch.
func checkGoType(rt reflect.Type, typ *interaction.Type, path string) string {
	for rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	if rt.Kind() != reflect.Struct {
		return path + ": " + rt.String() + " is not a struct"
	}
	if typ.Kind() != interaction.Record {
		return path + ": nested variants need a custom tool, not Func"
	}
	fields := goFields(rt)
	for i := range typ.NumFields() {
		f := typ.Field(i)
		name := PropertyName(f)
		gf, ok := fields[name]
		if !ok {
			return "no field for property " + path + name
		}
		if msg := checkGoField(gf, f, path+name); msg != "" {
			return msg
		}
	}
	return ""
}

type goField struct {
	index    int
	typ      reflect.Type
	asString bool
}

func goFields(rt reflect.Type) map[string]goField {
	out := map[string]goField{}
	for i := range rt.NumField() {
		sf := rt.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out[name] = goField{index: i, typ: sf.Type, asString: strings.Contains(","+opts+",", ",string,")}
	}
	return out
}

func checkGoField(gf goField, f *interaction.Field, path string) string {
	k := gf.typ.Kind()
	switch f.Representation() {
	case interaction.Bool:
		if k == reflect.Bool {
			return ""
		}
	case interaction.I32, interaction.I64, interaction.U32, interaction.U64:
		isInt := k >= reflect.Int && k <= reflect.Uint64
		if NumberField(f) && isInt && !gf.asString {
			return ""
		}
		if !NumberField(f) && (k == reflect.String || isInt && gf.asString) {
			return ""
		}
		if !NumberField(f) {
			return path + ": the integer's range is not exactly representable as a JSON number; declare a string (or `json:\",string\"`)"
		}
	case interaction.String:
		if k == reflect.String {
			return ""
		}
	case interaction.Bytes:
		if k == reflect.Slice && gf.typ.Elem().Kind() == reflect.Uint8 {
			return ""
		}
	case interaction.Nested:
		return checkGoType(gf.typ, f.Nested(), path+".")
	}
	return path + ": Go type " + gf.typ.String() + " does not hold a " + repName(f.Representation())
}

func repName(r interaction.Representation) string {
	switch r {
	case interaction.Bool:
		return "bool"
	case interaction.String:
		return "string"
	case interaction.Bytes:
		return "bytes"
	case interaction.Nested:
		return "message"
	}
	return "integer"
}
