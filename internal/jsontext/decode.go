package jsontext

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// DecodeOptions select how Decode fills a Go value.
type DecodeOptions struct {
	Options
	// DisallowUnknownFields refuses an object member that names no field of the struct it
	// fills (as encoding/json's Decoder.DisallowUnknownFields does).
	DisallowUnknownFields bool
	// UseNumber stores a number in an any as a json.Number with its exact token, not a
	// float64 (as encoding/json's Decoder.UseNumber does).
	UseNumber bool
}

// A DecodeError reports a JSON text that parses but does not fit the Go value: a member of
// the wrong JSON type, a number out of the field's range, an unknown member.
type DecodeError struct {
	Offset  int    // byte offset of the value (or the member name) refused
	Field   string // the dotted path of the struct field, map key or element refused
	Reason  string
	Unknown bool // an unknown member, with DisallowUnknownFields
}

func (e *DecodeError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("byte %d: %s", e.Offset, e.Reason)
	}
	return fmt.Sprintf("byte %d: %s: %s", e.Offset, e.Field, e.Reason)
}

// Decode parses text as exactly one JSON value (Parse) and stores it in the value v points
// to, with the rules of encoding/json's Unmarshal for the types configuration documents
// use: structs (fields by their json tag or name, matched exactly, else without regard to
// case; a later duplicate member wins), strings, booleans, integers and floats (a number
// that does not fit is refused), slices, maps with string keys, pointers, any (maps,
// slices, float64, string, bool, nil), json.RawMessage (the value's exact bytes) and
// json.Number. A type with its own UnmarshalJSON or UnmarshalText is refused. null leaves a scalar as it is and sets a pointer, slice, map or any to nil.
// Any other type is refused with a DecodeError, never panicking. Errors are *SyntaxError
// or *DecodeError.
func Decode(text string, v any, o DecodeOptions) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &DecodeError{Reason: fmt.Sprintf("Decode needs a non-nil pointer, not %T", v)}
	}
	n, _, err := Parse(text, o.Options)
	if err != nil {
		return err
	}
	d := &decoder{text: text, strict: o.DisallowUnknownFields, numbers: o.UseNumber}
	return d.value(n, rv.Elem(), "")
}

type decoder struct {
	text    string
	strict  bool
	numbers bool // UseNumber
}

var (
	rawType         = reflect.TypeFor[json.RawMessage]()
	numberType      = reflect.TypeFor[json.Number]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textType        = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// custom reports whether encoding/json would hand t's values to their own method, which
// Decode does not call.
func custom(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t != rawType && (p.Implements(unmarshalerType) || p.Implements(textType))
}

func (d *decoder) fail(n *Node, path, format string, args ...any) *DecodeError {
	return &DecodeError{Offset: n.Offset, Field: path, Reason: fmt.Sprintf(format, args...)}
}

func (d *decoder) value(n *Node, v reflect.Value, path string) error {
	switch {
	case v.Type() == rawType:
		v.SetBytes([]byte(d.text[n.Offset:n.End]))
		return nil
	case n.Kind == Null:
		switch v.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			v.SetZero()
		}
		return nil
	case custom(v.Type()):
		return d.fail(n, path, "cannot hold a value of Go type %s (it decodes itself)", v.Type())
	case v.Type() == numberType:
		// encoding/json also takes a string holding a number token.
		if n.Kind != Number && (n.Kind != String || !IsNumber(n.Text)) {
			return d.fail(n, path, "a %s, want a number", n.Kind)
		}
		v.SetString(n.Text)
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return d.value(n, v.Elem(), path)
	case reflect.Interface:
		if v.NumMethod() != 0 {
			break
		}
		g, err := d.generic(n, path)
		if err == nil {
			v.Set(reflect.ValueOf(g))
		}
		return err
	case reflect.Struct:
		return d.object(n, v, path)
	case reflect.Map:
		return d.mapping(n, v, path)
	case reflect.Slice:
		return d.slice(n, v, path)
	case reflect.String:
		if n.Kind != String {
			return d.fail(n, path, "a %s, want a string", n.Kind)
		}
		v.SetString(n.Text)
		return nil
	case reflect.Bool:
		if n.Kind != True && n.Kind != False {
			return d.fail(n, path, "a %s, want a boolean", n.Kind)
		}
		v.SetBool(n.Kind == True)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return d.number(n, v, path)
	}
	return d.fail(n, path, "cannot hold a value of Go type %s", v.Type())
}

func (d *decoder) number(n *Node, v reflect.Value, path string) error {
	if n.Kind != Number {
		return d.fail(n, path, "a %s, want a number", n.Kind)
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(n.Text, v.Type().Bits())
		if err != nil || v.OverflowFloat(f) {
			return d.fail(n, path, "number %s does not fit %s", n.Text, v.Type())
		}
		v.SetFloat(f)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(n.Text, 10, 64)
		if err != nil || v.OverflowInt(i) {
			return d.fail(n, path, "number %s does not fit %s", n.Text, v.Type())
		}
		v.SetInt(i)
	default:
		u, err := strconv.ParseUint(n.Text, 10, 64)
		if err != nil || v.OverflowUint(u) {
			return d.fail(n, path, "number %s does not fit %s", n.Text, v.Type())
		}
		v.SetUint(u)
	}
	return nil
}

func (d *decoder) object(n *Node, v reflect.Value, path string) error {
	if n.Kind != Object {
		return d.fail(n, path, "a %s, want an object", n.Kind)
	}
	fields, err := fieldsOf(v.Type())
	if err != nil {
		return d.fail(n, path, "%v", err)
	}
	for _, m := range n.Members {
		f := fields.lookup(m.Key)
		if f == nil {
			if d.strict {
				return &DecodeError{Offset: m.Offset, Field: path, Reason: "unknown field " + strconv.Quote(m.Key), Unknown: true}
			}
			continue
		}
		if err := d.value(m.Value, v.Field(f.index), join(path, f.name)); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) mapping(n *Node, v reflect.Value, path string) error {
	if v.Type().Key().Kind() != reflect.String {
		return d.fail(n, path, "cannot hold a value of Go type %s", v.Type())
	}
	if n.Kind != Object {
		return d.fail(n, path, "a %s, want an object", n.Kind)
	}
	if v.IsNil() {
		v.Set(reflect.MakeMapWithSize(v.Type(), len(n.Members)))
	}
	for _, m := range n.Members {
		e := reflect.New(v.Type().Elem()).Elem()
		if err := d.value(m.Value, e, join(path, m.Key)); err != nil {
			return err
		}
		v.SetMapIndex(reflect.ValueOf(m.Key).Convert(v.Type().Key()), e)
	}
	return nil
}

func (d *decoder) slice(n *Node, v reflect.Value, path string) error {
	if n.Kind != Array {
		return d.fail(n, path, "a %s, want an array", n.Kind)
	}
	s := reflect.MakeSlice(v.Type(), len(n.Elems), len(n.Elems))
	for i, e := range n.Elems {
		if err := d.value(e, s.Index(i), path+"["+strconv.Itoa(i)+"]"); err != nil {
			return err
		}
	}
	v.Set(s)
	return nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// generic is n as encoding/json stores it in an any (n is not null).
func (d *decoder) generic(n *Node, path string) (any, error) {
	switch n.Kind {
	case Object:
		m := make(map[string]any, len(n.Members))
		for _, mem := range n.Members {
			var err error
			if m[mem.Key], err = d.member(mem.Value, join(path, mem.Key)); err != nil {
				return nil, err
			}
		}
		return m, nil
	case Array:
		a := make([]any, len(n.Elems))
		for i, e := range n.Elems {
			var err error
			if a[i], err = d.member(e, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return nil, err
			}
		}
		return a, nil
	case String:
		return n.Text, nil
	case Number:
		if d.numbers {
			return json.Number(n.Text), nil
		}
		f, err := strconv.ParseFloat(n.Text, 64)
		if err != nil {
			return nil, d.fail(n, path, "number %s does not fit float64", n.Text)
		}
		return f, nil
	}
	return n.Kind == True, nil
}

// member is a value inside an any: nil for null.
func (d *decoder) member(n *Node, path string) (any, error) {
	if n.Kind == Null {
		return nil, nil
	}
	return d.generic(n, path)
}

// A field is one settable struct field and the member name that fills it.
type field struct {
	name  string
	index int
}

type fieldSet []field

// lookup returns the field named key exactly, else the first named key without regard to
// case, as encoding/json matches.
func (fs fieldSet) lookup(key string) *field {
	for i := range fs {
		if fs[i].name == key {
			return &fs[i]
		}
	}
	for i := range fs {
		if strings.EqualFold(fs[i].name, key) {
			return &fs[i]
		}
	}
	return nil
}

var fieldCache sync.Map // reflect.Type -> fieldSet or error

// fieldsOf lists t's exported fields by member name. Embedded structs, which encoding/json
// flattens, are refused: no document read with Decode uses them.
func fieldsOf(t reflect.Type) (fieldSet, error) {
	if c, ok := fieldCache.Load(t); ok {
		if err, bad := c.(error); bad {
			return nil, err
		}
		return c.(fieldSet), nil
	}
	var fs fieldSet
	var err error
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case tag == "-":
			continue
		case sf.Anonymous && name == "":
			// encoding/json promotes an embedded struct's fields, even an unexported one's.
			err = fmt.Errorf("cannot hold a value of Go type %s (embedded %s)", t, sf.Type)
		case !sf.IsExported():
			continue
		case opts != "" && opts != "omitempty":
			err = fmt.Errorf("cannot hold a value of Go type %s (field %s)", t, sf.Name)
		}
		if err != nil {
			err = fmt.Errorf("cannot hold a value of Go type %s (field %s)", t, sf.Name)
			break
		}
		if name == "" {
			name = sf.Name
		}
		fs = append(fs, field{name: name, index: i})
	}
	if err != nil {
		fieldCache.Store(t, err)
		return nil, err
	}
	fieldCache.Store(t, fs)
	return fs, nil
}
