package interaction_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
)

func TestCompileRefusesOutsideTheLanguage(t *testing.T) {
	for _, tc := range []struct {
		root    string
		rule    interaction.Rule
		element string
	}{
		{"refused.repeated", interaction.RuleFieldRepeated, "refused.v1.Repeated.tags"},
		{"refused.map", interaction.RuleFieldMap, "refused.v1.Map.labels"},
		{"refused.float", interaction.RuleFieldFloat, "refused.v1.Float.ratio"},
		{"refused.double", interaction.RuleFieldFloat, "refused.v1.Double.ratio"},
		{"refused.enum", interaction.RuleFieldEnum, "refused.v1.Enum.color"},
		{"refused.well_known", interaction.RuleTypeWellKnown, "google.protobuf.Timestamp"},
		{"refused.no_type_id", interaction.RuleTypeIDMissing, "refused.v1.NoTypeIDInner"},
		{"refused.no_field_id", interaction.RuleFieldIDMissing, "refused.v1.NoFieldID.x"},
		{"refused.bad_type_id", interaction.RuleTypeIDInvalid, "refused.v1.BadTypeID"},
		{"refused.bad_field_id", interaction.RuleFieldIDInvalid, "refused.v1.BadFieldID.x"},
		{"refused.dup_type", interaction.RuleTypeIDDuplicate, "refused.v1.DupTypeB"},
		{"refused.dup_field", interaction.RuleFieldIDDuplicate, "refused.v1.DupField.y"},
		{"refused.dup_case", interaction.RuleCaseIDDuplicate, "refused.v1.DupCase.b"},
		{"refused.self_cycle", interaction.RuleTypeRecursive, "refused.v1.SelfCycle.next"},
		{"refused.cycle", interaction.RuleTypeRecursive, "refused.v1.CycleB.a"},
		{"refused.case_cycle", interaction.RuleTypeRecursive, "refused.v1.CaseCyclePayload.back"},
		{"refused.mixed", interaction.RuleVariantShape, "refused.v1.Mixed.extra"},
		{"refused.two_oneofs", interaction.RuleVariantShape, "refused.v1.TwoOneofs.second"},
		{"refused.optional_in_variant", interaction.RuleVariantShape, "refused.v1.OptionalInVariant.n"},
		{"refused.scalar_case", interaction.RuleCaseNotMessage, "refused.v1.ScalarCase.text"},
		{"refused.no_case_id", interaction.RuleCaseIDMissing, "refused.v1.NoCaseID.a"},
		{"refused.bad_case_id", interaction.RuleCaseIDInvalid, "refused.v1.BadCaseID.a"},
		{"refused.variant_payload", interaction.RuleCasePayload, "refused.v1.VariantPayload.inner"},
		{"refused.bounded_case", interaction.RuleFieldBound, "refused.v1.BoundedCase.a"},
		{"refused.max_bytes_on_int", interaction.RuleFieldBound, "refused.v1.MaxBytesOnInt.n"},
		{"refused.max_bytes_too_big", interaction.RuleFieldBound, "refused.v1.MaxBytesTooBig.s"},
		{"refused.minimum_on_string", interaction.RuleFieldBound, "refused.v1.MinimumOnString.s"},
		{"refused.non_canonical_bound", interaction.RuleFieldBound, "refused.v1.NonCanonicalBound.n"},
		{"refused.bound_out_of_range", interaction.RuleFieldBound, "refused.v1.BoundOutOfRange.n"},
		{"refused.bound_inverted", interaction.RuleFieldBound, "refused.v1.BoundInverted.n"},
		{"refused.ambiguous", interaction.RuleRootAmbiguous, "refused.v1.AmbiguousB"},
		{"refused.no_such_root", interaction.RuleRootNotFound, ""},
		{"refused2.required", interaction.RuleFieldRequired, "refused2.v1.Required.x"},
		{"refused2.default", interaction.RuleFieldDefault, "refused2.v1.Default.n"},
		{"refused2.group", interaction.RuleFieldGroup, "refused2.v1.Group.item"},
		{"refused2.group_case", interaction.RuleFieldGroup, "refused2.v1.GroupCase.item"},
		{"refused2.extensible", interaction.RuleTypeExtensible, "refused2.v1.Extensible"},
	} {
		t.Run(tc.root, func(t *testing.T) {
			_, err := interaction.CompileFileSet(testFileSet(t), tc.root)
			wantDerivation(t, err, tc.rule, tc.element)
		})
	}
}

func wantDerivation(t *testing.T, err error, rule interaction.Rule, element string) {
	t.Helper()
	var e *interaction.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want SPX-Z202 %s", err, rule)
	}
	if !errors.Is(err, interaction.ErrUnsupportedSource) || !errors.Is(err, &interaction.Error{Code: interaction.CodeUnsupportedSource, Rule: rule}) {
		t.Fatalf("got %v, want SPX-Z202 %s", err, rule)
	}
	if e.Element != element {
		t.Fatalf("element %q, want %q (%v)", e.Element, element, err)
	}
	if strings.ContainsAny(err.Error(), "\r\n") {
		t.Fatalf("diagnostic spans lines: %q", err)
	}
}

func TestCompileRefusesDescriptorsThatDoNotBuild(t *testing.T) {
	for _, tc := range []struct {
		name    string
		set     *descriptorpb.FileDescriptorSet
		rule    interaction.Rule
		element string
	}{
		{"missing import", &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{{
			Name: proto.String("a.proto"), Dependency: []string{"missing.proto"},
		}}}, interaction.RuleSourceDescriptor, ""},
		{"empty oneof", &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{{
			Name: proto.String("e.proto"), Package: proto.String("e"), Syntax: proto.String("proto3"),
			MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("V"), OneofDecl: []*descriptorpb.OneofDescriptorProto{{Name: proto.String("o")}}}},
		}}}, interaction.RuleVariantEmpty, "e.V.o"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := interaction.CompileFileSet(tc.set, "x")
			wantDerivation(t, err, tc.rule, tc.element)
		})
	}
	_, err := interaction.UnmarshalFileSet([]byte{0xff, 0xff})
	wantDerivation(t, err, interaction.RuleSourceDescriptor, "")
}

// emptyVariant presents a real variant descriptor as if its oneof had no members, which no
// descriptor builder produces: the rule is a second line of defence for hand-made
// descriptors.
type emptyVariant struct{ protoreflect.MessageDescriptor }

func (m emptyVariant) Fields() protoreflect.FieldDescriptors {
	return emptyFields{m.MessageDescriptor.Fields()}
}
func (m emptyVariant) Oneofs() protoreflect.OneofDescriptors {
	return emptyOneofs{m.MessageDescriptor.Oneofs()}
}

type emptyFields struct{ protoreflect.FieldDescriptors }

func (emptyFields) Len() int { return 0 }

type emptyOneofs struct{ protoreflect.OneofDescriptors }

func (o emptyOneofs) Get(i int) protoreflect.OneofDescriptor {
	return emptyOneof{o.OneofDescriptors.Get(i)}
}

type emptyOneof struct{ protoreflect.OneofDescriptor }

func (emptyOneof) IsSynthetic() bool { return false }
func (o emptyOneof) Fields() protoreflect.FieldDescriptors {
	return emptyFields{o.OneofDescriptor.Fields()}
}

func TestCompileRefusesAnEmptyVariantDescriptor(t *testing.T) {
	md := prototest.Message(t, testFiles(t), "shop.v1.Channel")
	_, err := interaction.Compile(emptyVariant{md})
	wantDerivation(t, err, interaction.RuleVariantEmpty, "shop.v1.Channel.via")
}

func TestCompileRefusesAWellKnownRoot(t *testing.T) {
	_, err := interaction.Compile((&timestamppb.Timestamp{}).ProtoReflect().Descriptor())
	wantDerivation(t, err, interaction.RuleTypeWellKnown, "google.protobuf.Timestamp")
}

func TestCompileAdmitted(t *testing.T) {
	for _, root := range []string{"shop.proposal", "edges.root", "refused2.admitted"} {
		t.Run(root, func(t *testing.T) {
			s := mustSchema(t, root)
			golden(t, "schemas/"+root+".schema.json", s.Document())
			golden(t, "schemas/"+root+".provider.json", s.ProviderJSONSchema())
			if s.RootTypeID() != root || s.Root().StableID() != root {
				t.Fatalf("root %q", s.RootTypeID())
			}
			if !strings.HasPrefix(s.Digest(), "sha256:") || len(s.Digest()) != 71 || !strings.HasPrefix(s.RootTypeRevision(), "sha256:") {
				t.Fatalf("digest %q revision %q", s.Digest(), s.RootTypeRevision())
			}
			if err := s.Verify(s.Document()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestTypeGraph(t *testing.T) {
	s := mustSchema(t, "shop.proposal")
	var ids []string
	for i, typ := range s.Types() {
		ids = append(ids, typ.StableID()+":"+typ.Kind().String())
		if typ.Index() != i || s.Type(i) != typ {
			t.Fatalf("index of %s", typ.StableID())
		}
		// Dependency-first: every referenced type comes earlier.
		forEachField(typ, func(f *interaction.Field) {
			if n := f.Nested(); n != nil && n.Index() >= i {
				t.Errorf("%s references %s, which comes later", typ.StableID(), n.StableID())
			}
		})
	}
	want := "shop.money:record shop.channel:variant shop.section:record shop.attachment:record shop.proposal:variant"
	if got := strings.Join(ids, " "); got != want {
		t.Fatalf("types %s\nwant %s", got, want)
	}
	if s.Root() != s.Type(s.NumTypes()-1) {
		t.Fatal("root is not last")
	}
	refund, ok := s.Root().CaseByID("shop.proposal.refund")
	if !ok || refund.Index() != 1 || refund.Variant() != s.Root() || refund.Descriptor().Message().FullName() != "shop.v1.Refund" {
		t.Fatalf("refund case %+v", refund)
	}
	for _, tc := range []struct {
		id       string
		rep      interaction.Representation
		min, max string
		maxBytes int
		nested   string
	}{
		{"shop.refund.order_id", interaction.String, "0", "0", 32, ""},
		{"shop.refund.amount_minor", interaction.U64, "1", "1000000", 0, ""},
		{"shop.refund.reason", interaction.U32, "0", "255", 0, ""},
		{"shop.refund.priority", interaction.I32, "-5", "5", 0, ""},
		{"shop.refund.ledger_delta", interaction.I64, "-9223372036854775808", "9223372036854775807", 0, ""},
		{"shop.refund.receipt", interaction.Bytes, "0", "0", 64, ""},
		{"shop.refund.total", interaction.Nested, "0", "0", 0, "shop.money"},
		{"shop.refund.notify", interaction.Nested, "0", "0", 0, "shop.channel"},
	} {
		f, ok := refund.FieldByID(tc.id)
		if !ok {
			t.Fatalf("no field %s", tc.id)
		}
		lo, hi := f.Range()
		nested := ""
		if f.Nested() != nil {
			nested = f.Nested().StableID()
		}
		if f.Representation() != tc.rep || lo.String() != tc.min || hi.String() != tc.max || f.MaxBytes() != tc.maxBytes || nested != tc.nested {
			t.Errorf("%s: %s [%s,%s] max_bytes %d nested %q", tc.id, f.Representation(), lo, hi, f.MaxBytes(), nested)
		}
	}
	if s.Root().Height() != 2 {
		t.Errorf("height %d", s.Root().Height())
	}
}

func forEachField(t *interaction.Type, fn func(*interaction.Field)) {
	for i := 0; i < t.NumFields(); i++ {
		fn(t.Field(i))
	}
	for i := 0; i < t.NumCases(); i++ {
		c := t.Case(i)
		for j := 0; j < c.NumFields(); j++ {
			fn(c.Field(j))
		}
	}
}

func TestEdgesRepresentations(t *testing.T) {
	s := mustSchema(t, "edges.root")
	want := map[string]string{
		"edges.flag": "bool", "edges.i32": "i32 [-2147483648,2147483647]", "edges.i64": "i64 [-9223372036854775808,9223372036854775807]",
		"edges.u32": "u32 [0,4294967295]", "edges.u64": "u64 [0,18446744073709551615]", "edges.u8": "u32 [0,255]",
		"edges.small": "i32 [-5,5]", "edges.band": "i64 [10,20]", "edges.s32": "i32 [-2147483648,2147483647]",
		"edges.sf64": "i64 [-9223372036854775808,9223372036854775807]", "edges.f32": "u32 [0,4294967295]",
		"edges.f64": "u64 [0,18446744073709551615]", "edges.opt": "i32 [-2147483648,2147483647]",
		"edges.text": "string 4096", "edges.short": "string 8", "edges.blob": "bytes 4096", "edges.tiny": "bytes 2",
		"edges.empty": "nested edges.empty",
	}
	root := s.Root()
	if root.NumFields() != len(want) {
		t.Fatalf("%d fields", root.NumFields())
	}
	for i := 0; i < root.NumFields(); i++ {
		f := root.Field(i)
		got := f.Representation().String()
		switch r := f.Representation(); {
		case r.IsInteger():
			lo, hi := f.Range()
			got += fmt.Sprintf(" [%s,%s]", lo, hi)
		case r == interaction.String || r == interaction.Bytes:
			got += fmt.Sprintf(" %d", f.MaxBytes())
		case r == interaction.Nested:
			got += " " + f.Nested().StableID()
		}
		if got != want[f.StableID()] {
			t.Errorf("%s: %s, want %s", f.StableID(), got, want[f.StableID()])
		}
	}
}

const revisionBase = `syntax = "proto3";
package rev.v1;
import "beam_agents/v1/interaction_options.proto";
message Outer {
  option (beam_agents.v1.type_id) = "rev.outer";
  Inner inner = 1 [(beam_agents.v1.field_id) = "rev.outer.inner"];
  string note = 2 [(beam_agents.v1.field_id) = "rev.outer.note"];
}
message Inner {
  option (beam_agents.v1.type_id) = "rev.inner";
  int64 x = 1 [(beam_agents.v1.field_id) = "rev.inner.x"];
  bool y = 2 [(beam_agents.v1.field_id) = "rev.inner.y"];
}
`

func compileSource(t *testing.T, src string) *interaction.Schema {
	t.Helper()
	files := prototest.CompileSources(t, map[string]string{"rev.proto": src})
	s, err := interaction.CompileFileSet(prototest.FileSet(files), "rev.outer")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRootTypeRevision(t *testing.T) {
	base := compileSource(t, revisionBase)
	r := strings.NewReplacer
	for _, tc := range []struct {
		name string
		edit *strings.Replacer
		same bool
	}{
		{"rename root", r("Outer", "Envelope"), true},
		{"rename nested type", r("Inner", "Detail"), true},
		{"rename fields", r("inner = 1", "detail = 1", "x = 1", "amount = 1", "note = 2", "remark = 2"), true},
		{"renumber fields", r("x = 1", "x = 7", "y = 2", "y = 9"), true},
		{"change encoding", r("int64 x", "sint64 x"), true},
		{"add field", r("bool y = 2 [(beam_agents.v1.field_id) = \"rev.inner.y\"];", "bool y = 2 [(beam_agents.v1.field_id) = \"rev.inner.y\"];\n  bool z = 3 [(beam_agents.v1.field_id) = \"rev.inner.z\"];"), false},
		{"remove field", r("  string note = 2 [(beam_agents.v1.field_id) = \"rev.outer.note\"];\n", ""), false},
		{"change representation", r("int64 x", "int32 x"), false},
		{"tighten bound", r(`"rev.inner.x"]`, `"rev.inner.x", (beam_agents.v1.maximum) = "9"]`), false},
		{"bound max_bytes", r(`"rev.outer.note"]`, `"rev.outer.note", (beam_agents.v1.max_bytes) = 9]`), false},
		{"change field id", r(`"rev.inner.y"`, `"rev.inner.why"`), false},
		{"change nested type id", r(`"rev.inner";`, `"rev.detail";`), false},
		{"reorder fields", r("int64 x = 1 [(beam_agents.v1.field_id) = \"rev.inner.x\"];\n  bool y = 2 [(beam_agents.v1.field_id) = \"rev.inner.y\"];", "bool y = 2 [(beam_agents.v1.field_id) = \"rev.inner.y\"];\n  int64 x = 1 [(beam_agents.v1.field_id) = \"rev.inner.x\"];"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.edit.Replace(revisionBase)
			if src == revisionBase {
				t.Fatal("the edit changed nothing")
			}
			s := compileSource(t, src)
			if same := s.RootTypeRevision() == base.RootTypeRevision(); same != tc.same {
				t.Fatalf("revision unchanged=%v, want %v", same, tc.same)
			}
			if same := s.Digest() == base.Digest(); same != tc.same {
				t.Fatalf("digest unchanged=%v, want %v", same, tc.same)
			}
		})
	}
}

// chainSource declares n records, each nesting the next: n type levels.
func chainSource(n int) string {
	var b strings.Builder
	b.WriteString("syntax = \"proto3\";\npackage gen.v1;\nimport \"beam_agents/v1/interaction_options.proto\";\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "message T%d {\n  option (beam_agents.v1.type_id) = \"gen.t%d\";\n", i, i)
		if i < n {
			fmt.Fprintf(&b, "  T%d next = 1 [(beam_agents.v1.field_id) = \"gen.t%d.next\"];\n", i+1, i)
		} else {
			fmt.Fprintf(&b, "  string leaf = 1 [(beam_agents.v1.field_id) = \"gen.t%d.leaf\"];\n", i)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// wideSource declares a root with n-1 distinct nested records: n types, 2 levels.
func wideSource(n int) string {
	var b strings.Builder
	b.WriteString("syntax = \"proto3\";\npackage gen.v1;\nimport \"beam_agents/v1/interaction_options.proto\";\n")
	b.WriteString("message T1 {\n  option (beam_agents.v1.type_id) = \"gen.t1\";\n")
	for i := 2; i <= n; i++ {
		fmt.Fprintf(&b, "  T%d f%d = %d [(beam_agents.v1.field_id) = \"gen.t1.f%d\"];\n", i, i, i, i)
	}
	b.WriteString("}\n")
	for i := 2; i <= n; i++ {
		fmt.Fprintf(&b, "message T%d {\n  option (beam_agents.v1.type_id) = \"gen.t%d\";\n  bool b = 1 [(beam_agents.v1.field_id) = \"gen.t%d.b\"];\n}\n", i, i, i)
	}
	return b.String()
}

// bigSource declares one record with n string fields with long ids.
func bigSource(n int) string {
	var b strings.Builder
	b.WriteString("syntax = \"proto3\";\npackage gen.v1;\nimport \"beam_agents/v1/interaction_options.proto\";\n")
	b.WriteString("message T1 {\n  option (beam_agents.v1.type_id) = \"gen.t1\";\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  string f%d = %d [(beam_agents.v1.field_id) = \"gen.t1.a-rather-long-field-identifier-%06d\"];\n", i, i, i)
	}
	b.WriteString("}\n")
	return b.String()
}

func compileGenerated(t *testing.T, src string) (*interaction.Schema, error) {
	t.Helper()
	files := prototest.CompileSources(t, map[string]string{"gen.proto": src})
	return interaction.Compile(prototest.Message(t, files, "gen.v1.T1"))
}

func TestGraphBounds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		src     string
		code    interaction.Code
		rule    interaction.Rule
		element string
	}{
		{"depth at the bound", chainSource(interaction.MaxDepth), "", "", ""},
		{"depth one past", chainSource(interaction.MaxDepth + 1), interaction.CodeUnsupportedSource, interaction.RuleGraphMaxDepth, "gen.v1.T1"},
		{"types at the bound", wideSource(interaction.MaxTypes), "", "", ""},
		{"types one past", wideSource(interaction.MaxTypes + 1), interaction.CodeUnsupportedSource, interaction.RuleGraphMaxTypes, "gen.v1.T65"},
		{"schema within budget", bigSource(1500), "", "", ""},
		{"schema over budget", bigSource(3000), interaction.CodeDocumentTooLarge, interaction.RuleSchemaDocumentBytes, "gen.v1.T1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := compileGenerated(t, tc.src)
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(s.Document()) > interaction.MaxSchemaBytes || len(s.ProviderJSONSchema()) > interaction.MaxSchemaBytes {
					t.Fatal("over budget but admitted")
				}
				return
			}
			var e *interaction.Error
			if !errors.As(err, &e) || e.Code != tc.code || e.Rule != tc.rule || e.Element != tc.element {
				t.Fatalf("got %v, want %s %s at %s", err, tc.code, tc.rule, tc.element)
			}
		})
	}
}

// TestProviderBudgetIsCheckedSeparately: with long ids the projection (which names each id
// twice) outgrows the budget while the schema document still fits; it is refused with its
// own rule, never truncated.
func TestProviderBudgetIsCheckedSeparately(t *testing.T) {
	src := strings.ReplaceAll(bigSource(1000), "a-rather-long-field-identifier-", strings.Repeat("long-", 22))
	_, err := compileGenerated(t, src)
	var e *interaction.Error
	if !errors.As(err, &e) || e.Code != interaction.CodeDocumentTooLarge || e.Rule != interaction.RuleProviderSchemaBytes || e.Element != "gen.v1.T1" {
		t.Fatalf("got %v, want SPX-Z203 provider_schema_bytes", err)
	}
}

func TestVerify(t *testing.T) {
	s := mustSchema(t, "shop.proposal")
	if _, err := interaction.Verify(s.Document(), testFileSet(t), "shop.proposal"); err != nil {
		t.Fatal(err)
	}
	doc := s.Document()
	for name, bad := range map[string][]byte{
		"truncated":    doc[:len(doc)-1],
		"whitespace":   append([]byte(" "), doc...),
		"other schema": mustSchema(t, "edges.root").Document(),
		"edited bound": []byte(strings.Replace(string(doc), `"max_bytes":32`, `"max_bytes":33`, 1)),
	} {
		_, err := interaction.Verify(bad, testFileSet(t), "shop.proposal")
		if !errors.Is(err, &interaction.Error{Code: interaction.CodeReplayMismatch, Rule: interaction.RuleBundleReplay}) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := interaction.Verify(doc, testFileSet(t), "no.such.root"); !errors.Is(err, interaction.ErrUnsupportedSource) {
		t.Errorf("unknown root: %v", err)
	}
}
