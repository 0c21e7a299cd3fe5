package interaction_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/beamagents/beamagents/interaction"
)

// messageDesc finds a message of the test protos by full name.
func messageDesc(tb testing.TB, name protoreflect.FullName) protoreflect.MessageDescriptor {
	tb.Helper()
	d, err := testFiles(tb).AsResolver().FindDescriptorByName(name)
	md, ok := d.(protoreflect.MessageDescriptor)
	if err != nil || !ok {
		tb.Fatalf("no message %s: %v", name, err)
	}
	return md
}

func presentedEdges(tb testing.TB) *interaction.Schema {
	tb.Helper()
	s, err := interaction.CompilePresented(messageDesc(tb, "edges.v1.Root"))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// A presented schema is the same schema (document, digest, provider projection) with one more
// projection: by property names, integers as JSON integers with exact bounds. The projection
// is valid JSON Schema 2020-12; a variant has no presented form.
func TestCompilePresented(t *testing.T) {
	s := presentedEdges(t)
	plain := mustSchema(t, "edges.root")
	if !s.Presented() || plain.Presented() || plain.PresentedJSONSchema() != nil || plain.PresentedDigest() != "" {
		t.Fatal("Presented is not exactly the schemas CompilePresented compiled")
	}
	if s.Digest() != plain.Digest() || !bytes.Equal(s.ProviderJSONSchema(), plain.ProviderJSONSchema()) {
		t.Fatal("presenting changed the schema")
	}
	if !bytes.Equal(s.ModelJSONSchema(), s.PresentedJSONSchema()) || !bytes.Equal(plain.ModelJSONSchema(), plain.ProviderJSONSchema()) {
		t.Fatal("ModelJSONSchema is not the projection the schema is shown to models by")
	}
	if s.PresentedDigest() == s.Digest() || len(s.PresentedDigest()) != len(s.Digest()) {
		t.Fatalf("presented digest %s", s.PresentedDigest())
	}
	golden(t, "presented_edges.json", s.PresentedJSONSchema())
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s.PresentedJSONSchema()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("urn:presented", doc); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile("urn:presented"); err != nil {
		t.Fatalf("not a valid 2020-12 schema: %v", err)
	}
	if _, err := interaction.CompilePresented(messageDesc(t, "shop.v1.Proposal")); !errors.Is(err, &interaction.Error{Code: interaction.CodeUnsupportedSource, Rule: interaction.RulePresentedVariant}) {
		t.Fatalf("a variant presented: %v", err)
	}
}

// edgesArgs are edges.root's arguments by property names; 2^53+1 and 2^64−1 stay exact.
const edgesArgs = `{"flag":true,"i32":-1,"i64":9007199254740993,"u32":1,"u64":18446744073709551615,"u8":255,"small":-5,"band":10,"s32":0,"sf64":0,"f32":0,"f64":"7","opt":0,"text":"t","short":"s","blob":"AP8=","tiny":"","empty":{}}`

// ReadPresented renames and nests; the admission judges the leaves.
func TestReadPresented(t *testing.T) {
	s := presentedEdges(t)
	for _, tc := range []struct {
		name, in, want string
		rule           interaction.Rule
	}{
		{name: "exact", in: edgesArgs, want: `{"fields":{"edges.flag":true,"edges.i32":-1,"edges.i64":9007199254740993,"edges.u32":1,"edges.u64":18446744073709551615,"edges.u8":255,"edges.small":-5,"edges.band":10,"edges.s32":0,"edges.sf64":0,"edges.f32":0,"edges.f64":"7","edges.opt":0,"edges.text":"t","edges.short":"s","edges.blob":[0,255],"edges.tiny":[],"edges.empty":{"fields":{}}}}`},
		{name: "leaves verbatim", in: ` { "i64" : 1.5e3 , "text" : "a\u0062" } `, want: `{"fields":{"edges.i64":1.5e3,"edges.text":"a\u0062"}}`},
		{name: "unknown", in: `{"edges.flag":true}`, rule: interaction.RuleFieldsUnknown},
		{name: "duplicate", in: `{"flag":true,"flag":false}`, rule: interaction.RuleDuplicateKey},
		{name: "not json", in: `{"flag":`, rule: interaction.RuleJSON},
		{name: "not an object", in: `[1]`, rule: interaction.RuleRepresentation},
		{name: "nested not an object", in: `{"empty":[]}`, rule: interaction.RuleRepresentation},
		{name: "nested unknown", in: `{"empty":{"x":1}}`, rule: interaction.RuleFieldsUnknown},
		{name: "bad base64", in: `{"blob":"A"}`, rule: interaction.RuleRepresentation},
		{name: "not utf8", in: "{\"text\":\"\xff\"}", rule: interaction.RuleUTF8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.ReadPresented([]byte(tc.in))
			if tc.rule != "" {
				if !errors.Is(err, &interaction.Error{Code: codeOf(err), Rule: tc.rule}) {
					t.Fatalf("%v, want rule %s", err, tc.rule)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %s %v\nwant %s", got, err, tc.want)
			}
		})
	}
	// The exact arguments are admitted with their integers intact.
	fields, _ := s.ReadPresented([]byte(edgesArgs))
	doc, _, err := s.ReadProvider(fields)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Decode(doc)
	if err != nil {
		t.Fatal(err)
	}
	if i64, _ := v.Lookup("edges.i64"); i64.Int() != 1<<53+1 {
		t.Fatalf("i64 %d", i64.Int())
	}
}

func codeOf(err error) interaction.Code {
	var e *interaction.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// FuzzReadPresented: ReadPresented never panics and fails only with typed errors; what it
// returns is one JSON object the provider reader judges without panicking, and an admitted
// value's fields read back from their own presentation unchanged.
func FuzzReadPresented(f *testing.F) {
	for _, seed := range []string{edgesArgs, `{}`, `{"flag":true,"flag":true}`, `{"blob":"AP8="}`, `[]`, `{"text":"\u00e9"}`, `{"i64":-0}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		s := presentedEdges(t)
		fields, err := s.ReadPresented(args)
		if err != nil {
			if _, ok := err.(*interaction.Error); !ok {
				t.Fatalf("untyped error %T", err)
			}
			return
		}
		doc, _, err := s.ReadProvider(fields)
		if err != nil {
			return
		}
		v, err := s.Decode(doc)
		if err != nil {
			t.Fatalf("the provider reader admitted %q but Decode refuses it: %v", doc, err)
		}
		again, err := s.ReadPresented(presentFields(v))
		if err != nil {
			t.Fatalf("re-reading %s: %v", presentFields(v), err)
		}
		if doc2, _, err := s.ReadProvider(again); err != nil || !bytes.Equal(doc2, doc) {
			t.Fatalf("round trip %s != %s (%v)", doc2, doc, err)
		}
	})
}

// presentFields renders a record value as a model writes it under the presented projection.
func presentFields(v *interaction.Value) []byte {
	out := []byte{'{'}
	for i := range v.NumFields() {
		fv := v.Field(i)
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, interaction.PropertyName(fv.Field()))
		out = append(out, ':')
		switch r := fv.Representation(); {
		case r == interaction.Bool:
			out = strconv.AppendBool(out, fv.Bool())
		case r.IsInteger():
			out = fv.Integer().Append(out)
		case r == interaction.String:
			b, _ := json.Marshal(fv.Text())
			out = append(out, b...)
		case r == interaction.Bytes:
			out = strconv.AppendQuote(out, base64.StdEncoding.EncodeToString(fv.Bytes()))
		default:
			out = append(out, presentFields(fv.Nested())...)
		}
	}
	return append(out, '}')
}
