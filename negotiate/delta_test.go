package negotiate_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
	"github.com/beamagents/beamagents/negotiate"
)

func entryStrings(d *negotiate.SchemaDelta) []string {
	var out []string
	for _, e := range d.Entries() {
		out = append(out, e.String())
	}
	return out
}

func TestDeltaKinds(t *testing.T) {
	for _, tc := range []struct {
		name               string
		producer, receiver string
		moves              map[string]string
		want               []string
	}{
		{name: "identical", producer: "Same", receiver: "Same"},
		{
			name:     "widenings are no difference; a case the producer never chooses is missing",
			producer: "WideProducer", receiver: "WideReceiver",
			want: []string{"missing_case wide.one/- -> choice/choice.fax"},
		},
		{
			name: "missing required field", producer: "MissingProducer", receiver: "MissingReceiver",
			want: []string{"missing_field missing.p/- -> missing.r/refund.reason (string max_bytes 4096)"},
		},
		{
			name: "representation mismatch", producer: "CascadeProducer", receiver: "CascadeReceiver",
			want: []string{"type_mismatch(representation) cascade.p/stock.count (i64 [-9223372036854775808, 9223372036854775807]) -> cascade.r/stock.count (string max_bytes 8)"},
		},
		{
			name: "narrowed range and bounds", producer: "NarrowProducer", receiver: "NarrowReceiver",
			want: []string{
				"type_mismatch(max_bytes) narrow.p/item.blob (bytes max_bytes 4096) -> narrow.r/item.blob (bytes max_bytes 4)",
				"type_mismatch(max_bytes) narrow.p/item.note (string max_bytes 4096) -> narrow.r/item.note (string max_bytes 64)",
				"type_mismatch(range) narrow.p/item.quantity (i64 [-9223372036854775808, 9223372036854775807]) -> narrow.r/item.quantity (u32 [0, 255])",
			},
		},
		{
			name: "extra fields", producer: "ChattyProducer", receiver: "StrictReceiver",
			want: []string{
				"extra_field chatty.p/reply.confidence (u32 [0, 100]) -> strict.r/-",
				"extra_field chatty.p/reply.reasoning (string max_bytes 4096) -> strict.r/-",
			},
		},
		{
			name: "nullability conflict", producer: "OptionalPriority", receiver: "PlainPriority",
			want: []string{"nullability_conflict prio/prio.priority (i32 [-2147483648, 2147483647] optional) -> prio/prio.priority (i32 [-2147483648, 2147483647])"},
		},
		{name: "a receiver that may be unset takes a value that always is", producer: "PlainPriority", receiver: "OptionalPriority"},
		{
			name: "unknown case", producer: "PigeonChannel", receiver: "EmailOnly",
			want: []string{"unknown_case cases.p/channel.pigeon -> cases.r/-"},
		},
		{
			name: "missing case", producer: "EmailOnly", receiver: "PigeonChannel",
			want: []string{"missing_case cases.r/- -> cases.p/channel.pigeon"},
		},
		{
			name: "a rename without a mapping is an extra and a missing field", producer: "MoveProducer", receiver: "MoveReceiver",
			want: []string{
				"missing_field move.p/- -> move.r/order.customer_name (string max_bytes 4096)",
				"extra_field move.p/order.customer (string max_bytes 4096) -> move.r/-",
			},
		},
		{
			name: "a rename with a mapping is a move", producer: "MoveProducer", receiver: "MoveReceiver",
			moves: map[string]string{"order.customer": "order.customer_name"},
			want:  []string{"moved move.p/order.customer (string max_bytes 4096) -> move.r/order.customer_name (string max_bytes 4096)"},
		},
		{
			name: "a case moved by the mapping", producer: "PigeonChannel", receiver: "ReceiverChannel",
			moves: map[string]string{"channel.pigeon": "channel.fax"},
			want: []string{
				"missing_field cases.p#channel.pigeon/- -> r.channel#channel.fax/fax.number (string max_bytes 32)",
				"extra_field cases.p#channel.pigeon/pigeon.loft (string max_bytes 4096) -> r.channel#channel.fax/-",
				"moved cases.p/channel.pigeon -> r.channel/channel.fax",
			},
		},
		{
			name: "roots of different kinds", producer: "Same", receiver: "RootVariant",
			want: []string{"type_mismatch(shape) same/- (record) -> root.variant/- (variant)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := negotiate.DeltaOptions{Moves: tc.moves}.Delta(schemaOf(t, tc.producer), schemaOf(t, tc.receiver))
			if err != nil {
				t.Fatal(err)
			}
			if got := entryStrings(d); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if d.Len() != len(tc.want) {
				t.Errorf("Len %d, want %d", d.Len(), len(tc.want))
			}
		})
	}
}

// TestDeltaEveryKind pins the delta of the pair that holds every kind at once, in its
// deterministic order, as a golden file.
func TestDeltaEveryKind(t *testing.T) {
	moves := map[string]string{"order.customer": "order.customer_name"}
	d, err := negotiate.DeltaOptions{Moves: moves}.Delta(schemaOf(t, "ProducerOrder"), schemaOf(t, "ReceiverOrder"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "delta/order.txt", []byte(d.String()+"\n"))
	for k, n := range map[negotiate.EntryKind]int{
		negotiate.MissingField: 1, negotiate.TypeMismatch: 7, negotiate.ExtraField: 1, negotiate.NullabilityConflict: 1,
		negotiate.UnknownCase: 1, negotiate.MissingCase: 1, negotiate.Moved: 1,
	} {
		if got := d.Count(k); got != n {
			t.Errorf("%s: %d entries, want %d", k, got, n)
		}
	}
	if len(d.Blocking()) != d.Len()-1 {
		t.Errorf("blocking %d of %d: only the missing case should not block", len(d.Blocking()), d.Len())
	}
}

func TestDeltaDocumentAndDigest(t *testing.T) {
	p, r := schemaOf(t, "ProducerOrder"), schemaOf(t, "ReceiverOrder")
	moves := map[string]string{"order.customer": "order.customer_name", "channel.pigeon": "channel.fax"}
	first, err := negotiate.DeltaOptions{Moves: moves}.Delta(p, r)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(first.Document())
	for _, want := range []string{`"schema":"beam_agents.negotiate-delta.v1"`, `"producer_digest":"` + p.Digest() + `"`, `"receiver_digest":"` + r.Digest() + `"`,
		`"moves":[{"from":"channel.pigeon","to":"channel.fax"},{"from":"order.customer","to":"order.customer_name"}]`} {
		if !strings.Contains(doc, want) {
			t.Errorf("document lacks %s", want)
		}
	}
	if !strings.HasPrefix(first.Digest(), "sha256:") || len(first.Digest()) != 71 {
		t.Errorf("digest %q", first.Digest())
	}
	// Map iteration order never reaches the document.
	for range 20 {
		again, err := negotiate.DeltaOptions{Moves: moves}.Delta(p, r)
		if err != nil || string(again.Document()) != doc || again.Digest() != first.Digest() {
			t.Fatalf("not deterministic: %v", err)
		}
	}
	other, _ := negotiate.DeltaOptions{Moves: map[string]string{"order.customer": "order.customer_name"}}.Delta(p, r)
	if other.Digest() == first.Digest() {
		t.Error("a different mapping gave the same digest")
	}
	swapped, _ := negotiate.Delta(r, p)
	if swapped.Digest() == first.Digest() {
		t.Error("swapping producer and receiver gave the same digest")
	}
}

func TestDeltaMoveErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		moves map[string]string
		rule  negotiate.Rule
	}{
		{"unknown source", map[string]string{"order.nothing": "order.customer_name"}, negotiate.RuleMoveUnknown},
		{"undeclared target", map[string]string{"order.customer": "order.nobody"}, negotiate.RuleMoveTarget},
		{"two sources, one target", map[string]string{"order.customer": "order.id"}, negotiate.RuleMoveCollision},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := negotiate.DeltaOptions{Moves: tc.moves}.Delta(schemaOf(t, "MoveProducer"), schemaOf(t, "MoveReceiver"))
			if !errors.Is(err, &negotiate.Error{Code: negotiate.CodeInvalid, Rule: tc.rule}) {
				t.Fatalf("got %v, want %s", err, tc.rule)
			}
		})
	}
	if _, err := negotiate.Delta(nil, schemaOf(t, "Same")); !errors.Is(err, negotiate.ErrInvalid) {
		t.Fatalf("nil producer: %v", err)
	}
}

func TestDeltaScopedToACase(t *testing.T) {
	p := proposalSchema(t)
	for _, tc := range []struct {
		name, caseID, args string
		want               []string
		rule               negotiate.Rule
	}{
		{name: "identical fields", caseID: "assist.refund", args: "proposal.v1.RefundArgs"},
		{name: "extra and narrowed", caseID: "assist.lookup", args: "proposal.v1.LookupArgs", want: []string{
			"type_mismatch(range) assist.proposal#assist.lookup/assist.lookup.limit (i64 [-9223372036854775808, 9223372036854775807]) -> tool.lookup_order.args/assist.lookup.limit (u32 [0, 50])",
			"extra_field assist.proposal#assist.lookup/assist.lookup.debug (string max_bytes 4096) -> tool.lookup_order.args/-",
		}},
		{name: "no such case", caseID: "assist.nothing", args: "proposal.v1.RefundArgs", rule: negotiate.RuleBindingCase},
		{name: "variant arguments", caseID: "assist.refund", args: "proposal.v1.VariantArgs", rule: negotiate.RuleBindingArgs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := negotiate.DeltaOptions{Case: tc.caseID}.Delta(p, schemaOf(t, tc.args))
			if tc.rule != "" {
				if !errors.Is(err, &negotiate.Error{Code: negotiate.CodeInvalid, Rule: tc.rule}) {
					t.Fatalf("got %v, want %s", err, tc.rule)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := entryStrings(d); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestDeltaComparesEachTypePairOnce: a type reached along many paths contributes its
// differences once, so a delta stays small however many paths a DAG has.
func TestDeltaComparesEachTypePairOnce(t *testing.T) {
	const src = `syntax = "proto3";
package dag.v1;
import "beam_agents/v1/interaction_options.proto";
message Leaf { option (beam_agents.v1.type_id) = "leaf"; string s = 1 [(beam_agents.v1.field_id) = "leaf.s"]; }
message NarrowLeaf { option (beam_agents.v1.type_id) = "leaf.narrow"; string s = 1 [(beam_agents.v1.field_id) = "leaf.s", (beam_agents.v1.max_bytes) = 8]; }
message Mid { option (beam_agents.v1.type_id) = "mid"; Leaf a = 1 [(beam_agents.v1.field_id) = "mid.a"]; Leaf b = 2 [(beam_agents.v1.field_id) = "mid.b"]; Leaf c = 3 [(beam_agents.v1.field_id) = "mid.c"]; }
message NarrowMid { option (beam_agents.v1.type_id) = "mid.narrow"; NarrowLeaf a = 1 [(beam_agents.v1.field_id) = "mid.a"]; NarrowLeaf b = 2 [(beam_agents.v1.field_id) = "mid.b"]; NarrowLeaf c = 3 [(beam_agents.v1.field_id) = "mid.c"]; }
message Top { option (beam_agents.v1.type_id) = "top"; Mid x = 1 [(beam_agents.v1.field_id) = "top.x"]; Mid y = 2 [(beam_agents.v1.field_id) = "top.y"]; }
message NarrowTop { option (beam_agents.v1.type_id) = "top.narrow"; NarrowMid x = 1 [(beam_agents.v1.field_id) = "top.x"]; NarrowMid y = 2 [(beam_agents.v1.field_id) = "top.y"]; }
`
	files := prototest.CompileSources(t, map[string]string{"dag.proto": src})
	compile := func(name string) *interaction.Schema {
		s, err := interaction.Compile(prototest.Message(t, files, name))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	d, err := negotiate.Delta(compile("dag.v1.Top"), compile("dag.v1.NarrowTop"))
	if err != nil {
		t.Fatal(err)
	}
	want := "type_mismatch(max_bytes) leaf/leaf.s (string max_bytes 4096) -> leaf.narrow/leaf.s (string max_bytes 8)"
	if got := d.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
