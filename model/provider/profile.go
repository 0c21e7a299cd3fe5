package provider

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/beamagents/beamagents/internal/canonjson"
	"github.com/beamagents/beamagents/internal/jsontext"
)

// Dialects of JSON Schema the providers are sent.
const (
	// OpenAIStrict is OpenAI's strict structured output (response_format json_schema with
	// strict: true): the root is an object, every property is required, every object closed,
	// and only a subset of keywords is known (no maxLength, no custom keywords; anyOf, not
	// oneOf).
	OpenAIStrict = "openai_strict"
	// AnthropicTool is the input_schema of one tool that Anthropic's tool_choice forces: the
	// root is an object; the rest is JSON Schema, without custom keywords.
	AnthropicTool = "anthropic_tool"
)

// Loss is a constraint of the projection a dialect does not express. The runtime's decoder
// enforces it on every answer.
type Loss struct {
	Path       string // JSON pointer into the profile's schema
	Constraint string // what is not expressed: "max_bytes", "range", "case_fields"
	Value      string // the constraint's value in the projection
}

// Profile is the schema one API is sent for a proposal schema.
type Profile struct {
	Dialect string
	// Name names the schema (OpenAI) or the forced tool (Anthropic): the root type id, with
	// characters outside [A-Za-z0-9_-] replaced by '_'.
	Name string
	// Schema is the JSON Schema document, without the value envelope.
	Schema json.RawMessage
	// Delta lists what the dialect does not express, in document order.
	Delta []Loss
}

// DeltaDocument renders the delta as canonical JSON, for traces and for comparison.
func (p *Profile) DeltaDocument() []byte {
	arr := make(canonjson.Array, len(p.Delta))
	for i, l := range p.Delta {
		arr[i] = canonjson.Object{{Key: "path", Value: l.Path}, {Key: "constraint", Value: l.Constraint}, {Key: "value", Value: l.Value}}
	}
	return canonjson.Append(nil, canonjson.Object{{Key: "dialect", Value: p.Dialect}, {Key: "not_expressed", Value: arr}})
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// NewProfile derives the profile of dialect from a provider projection (the JSON Schema
// interaction.Schema.ProviderJSONSchema returns).
func NewProfile(dialect string, projection []byte) (*Profile, error) {
	if dialect != OpenAIStrict && dialect != AnthropicTool {
		return nil, fmt.Errorf("provider: unknown schema dialect %q", dialect)
	}
	doc, err := parseOrdered(projection)
	if err != nil {
		return nil, fmt.Errorf("provider: the projection is not JSON: %w", err)
	}
	top, ok := doc.(canonjson.Object)
	if !ok {
		return nil, fmt.Errorf("provider: the projection is not an object")
	}
	title, _ := get(top, "title").(string)
	defs, _ := get(top, "$defs").(canonjson.Object)
	rootDef, _ := get(defs, title).(canonjson.Object)
	if title == "" || rootDef == nil {
		return nil, fmt.Errorf("provider: the projection has no root definition")
	}
	p := &Profile{Dialect: dialect, Name: unsafeName.ReplaceAllString(title, "_")}
	if len(p.Name) > 64 {
		p.Name = p.Name[:64]
	}
	root := p.rootObject(rootDef)
	outDefs := make(canonjson.Object, 0, len(defs))
	for _, m := range defs {
		if m.Key == title {
			continue // the root is the profile's root; no type refers to it (types form no cycle)
		}
		outDefs = append(outDefs, canonjson.Member{Key: m.Key, Value: p.node(m.Value, "/$defs/"+pointerEscape(m.Key))})
	}
	root = append(root, canonjson.Member{Key: "$defs", Value: outDefs})
	p.Schema = canonjson.Append(nil, root)
	return p, nil
}

// rootObject is the root's schema. Both APIs want an object at the root, so a variant root
// becomes one object whose case is any of its case ids and whose fields are any of its cases'
// fields: the pairing of a case with its own fields is left to the decoder.
func (p *Profile) rootObject(def canonjson.Object) canonjson.Object {
	alts, _ := get(def, "oneOf").(canonjson.Array)
	if alts == nil {
		return p.node(def, "").(canonjson.Object)
	}
	ids := make(canonjson.Array, 0, len(alts))
	fields := make(canonjson.Array, 0, len(alts))
	for i, a := range alts {
		obj, _ := a.(canonjson.Object)
		props, _ := get(obj, "properties").(canonjson.Object)
		c, _ := get(props, "case").(canonjson.Object)
		ids = append(ids, get(c, "const"))
		fields = append(fields, p.node(get(props, "fields"), fmt.Sprintf("/properties/fields/anyOf/%d", i)))
	}
	p.Delta = append(p.Delta, Loss{Path: "/properties/case", Constraint: "case_fields", Value: "each case takes its own fields"})
	return canonjson.Object{
		{Key: "type", Value: "object"},
		{Key: "properties", Value: canonjson.Object{
			{Key: "case", Value: canonjson.Object{{Key: "type", Value: "string"}, {Key: "enum", Value: ids}}},
			{Key: "fields", Value: canonjson.Object{{Key: "anyOf", Value: fields}}},
		}},
		{Key: "required", Value: canonjson.Array{"case", "fields"}},
		{Key: "additionalProperties", Value: false},
	}
}

// node rewrites one schema node for the dialect.
func (p *Profile) node(v any, path string) any {
	switch v := v.(type) {
	case canonjson.Object:
		out := make(canonjson.Object, 0, len(v))
		for _, m := range v {
			out = p.member(out, v, m, path)
		}
		return out
	case canonjson.Array:
		out := make(canonjson.Array, len(v))
		for i, e := range v {
			out[i] = p.node(e, fmt.Sprintf("%s/%d", path, i))
		}
		return out
	}
	return v
}

func (p *Profile) member(out, node canonjson.Object, m canonjson.Member, path string) canonjson.Object {
	sub := path + "/" + pointerEscape(m.Key)
	switch {
	case m.Key == "$ref":
		return append(out, m)
	case m.Key == "properties":
		props := m.Value.(canonjson.Object)
		o := make(canonjson.Object, len(props))
		for i, pm := range props {
			o[i] = canonjson.Member{Key: pm.Key, Value: p.node(pm.Value, sub+"/"+pointerEscape(pm.Key))}
		}
		return append(out, canonjson.Member{Key: m.Key, Value: o})
	case m.Key == "x-max-bytes":
		p.Delta = append(p.Delta, Loss{Path: path, Constraint: "max_bytes", Value: rawText(m.Value)})
		return out
	case m.Key == "x-minimum":
		p.Delta = append(p.Delta, Loss{Path: path, Constraint: "range", Value: fmt.Sprintf("[%s, %s]", rawText(m.Value), rawText(get(node, "x-maximum")))})
		return out
	case strings.HasPrefix(m.Key, "x-"):
		return out
	case m.Key == "maxLength" && p.Dialect == OpenAIStrict:
		return out // the byte bound (x-max-bytes) is recorded; code points are never the bound
	case m.Key == "oneOf" && p.Dialect == OpenAIStrict:
		// The alternatives differ in their case constant, so any-of is exactly one-of.
		return append(out, canonjson.Member{Key: "anyOf", Value: p.node(m.Value, sub)})
	case m.Key == "const" && p.Dialect == OpenAIStrict:
		return append(out, canonjson.Member{Key: "enum", Value: canonjson.Array{m.Value}})
	}
	return append(out, canonjson.Member{Key: m.Key, Value: p.node(m.Value, sub)})
}

func get(o canonjson.Object, key string) any {
	for _, m := range o {
		if m.Key == key {
			return m.Value
		}
	}
	return nil
}

func rawText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case canonjson.Raw:
		return string(v)
	}
	return fmt.Sprint(v)
}

func pointerEscape(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// parseOrdered reads JSON with the module's one reader (internal/jsontext) into canonjson's
// values: members in document order, numbers as their token text.
func parseOrdered(b []byte) (any, error) {
	n, _, err := jsontext.Parse(string(b), jsontext.Options{})
	if err != nil {
		return nil, err
	}
	return ordered(n), nil
}

func ordered(n *jsontext.Node) any {
	switch n.Kind {
	case jsontext.Object:
		o := make(canonjson.Object, len(n.Members))
		for i, m := range n.Members {
			o[i] = canonjson.Member{Key: m.Key, Value: ordered(m.Value)}
		}
		return o
	case jsontext.Array:
		a := make(canonjson.Array, len(n.Elems))
		for i, e := range n.Elems {
			a[i] = ordered(e)
		}
		return a
	case jsontext.String:
		return n.Text
	case jsontext.Number:
		return canonjson.Raw(n.Text)
	case jsontext.True, jsontext.False:
		return n.Kind == jsontext.True
	}
	return canonjson.Raw("null")
}

// ToolParameters derives a native tool's parameters in dialect from the provider projection
// of its argument schema, a record: the record's fields object (one property per field, by
// stable id, all required, closed), with the definitions of its nested types. The model's
// arguments are that object; the runtime wraps them as the record's value ({"fields":…})
// before the strict decoder admits them.
func ToolParameters(dialect string, projection []byte) (json.RawMessage, error) {
	p, err := NewProfile(dialect, projection)
	if err != nil {
		return nil, err
	}
	doc, err := parseOrdered(p.Schema)
	if err != nil {
		return nil, err
	}
	root, _ := doc.(canonjson.Object)
	props, _ := get(root, "properties").(canonjson.Object)
	fields, _ := get(props, "fields").(canonjson.Object)
	if fields == nil || get(fields, "properties") == nil {
		return nil, fmt.Errorf("provider: tool arguments must be a record")
	}
	if defs, ok := get(root, "$defs").(canonjson.Object); ok && len(defs) > 0 {
		fields = append(fields, canonjson.Member{Key: "$defs", Value: defs})
	}
	return canonjson.Append(nil, fields), nil
}
