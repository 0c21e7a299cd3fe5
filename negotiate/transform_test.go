package negotiate_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/negotiate"
)

func mustNegotiate(tb testing.TB, producer, receiver string, a negotiate.Agreement) *negotiate.Boundary {
	tb.Helper()
	b, err := negotiate.Negotiate(schemaOf(tb, producer), schemaOf(tb, receiver), a)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestConvey(t *testing.T) {
	transformAll := negotiate.Agreement{Protocol: negotiate.TransformAll}
	bestEffort := negotiate.Agreement{Protocol: negotiate.BestEffort, ReceiverAcceptsBestEffort: true}
	for _, tc := range []struct {
		name               string
		producer, receiver string
		agreement          negotiate.Agreement
		value              string // protojson of the producer's value
		caseID             string // the receiver value's case, when admitted
		fields             string // the receiver value's FieldsJSON, when admitted
		applied, warnings  []string
		rule               negotiate.Rule // the refusal's rule, when refused
	}{
		{name: "narrowed values that fit", producer: "NarrowProducer", receiver: "NarrowReceiver", agreement: transformAll,
			value:   `{"quantity":"255","note":"short","blob":"AQID"}`,
			fields:  `{"item.quantity":"255","item.note":"short","item.blob":[1,2,3]}`,
			applied: []string{"narrow:item.blob", "narrow:item.note", "narrow:item.quantity"}},
		{name: "an integer above the narrowed range", producer: "NarrowProducer", receiver: "NarrowReceiver", agreement: transformAll,
			value: `{"quantity":"256"}`, rule: negotiate.RuleNarrowInteger},
		{name: "an integer below the narrowed range", producer: "NarrowProducer", receiver: "NarrowReceiver", agreement: transformAll,
			value: `{"quantity":"-1"}`, rule: negotiate.RuleNarrowInteger},
		{name: "a string over the narrowed bound", producer: "NarrowProducer", receiver: "NarrowReceiver", agreement: transformAll,
			value: `{"note":"` + strings.Repeat("é", 33) + `"}`, rule: negotiate.RuleNarrowString},
		{name: "bytes over the narrowed bound", producer: "NarrowProducer", receiver: "NarrowReceiver", agreement: transformAll,
			value: `{"blob":"AQIDBAU="}`, rule: negotiate.RuleNarrowBytes},
		{name: "declared drops", producer: "ChattyProducer", receiver: "StrictReceiver",
			agreement: negotiate.Agreement{Protocol: negotiate.TransformAll, Drop: []string{"reply.reasoning", "reply.confidence"}},
			value:     `{"answer":"42","reasoning":"because","confidence":90}`,
			fields:    `{"reply.answer":"42"}`, applied: []string{"drop:reply.confidence", "drop:reply.reasoning"}},
		{name: "a move", producer: "MoveProducer", receiver: "MoveReceiver",
			agreement: negotiate.Agreement{Protocol: negotiate.TransformAll, Moves: map[string]string{"order.customer": "order.customer_name"}},
			value:     `{"customer":"Ada","id":"A1"}`,
			fields:    `{"order.id":"A1","order.customer_name":"Ada"}`, applied: []string{"move:order.customer->order.customer_name"}},
		{name: "a case move", producer: "PigeonChannel", receiver: "MailChannel",
			agreement: negotiate.Agreement{Protocol: negotiate.TransformAll, Moves: map[string]string{"channel.email": "channel.mail"}},
			value:     `{"email":{"address":"a@b"}}`, caseID: "channel.mail", fields: `{"email.address":"a@b"}`,
			applied: []string{"move:channel.email->channel.mail"}},
		{name: "a case the move leaves alone", producer: "PigeonChannel", receiver: "MailChannel",
			agreement: negotiate.Agreement{Protocol: negotiate.TransformAll, Moves: map[string]string{"channel.email": "channel.mail"}},
			value:     `{"pigeon":{"loft":"roof"}}`, caseID: "channel.pigeon", fields: `{"pigeon.loft":"roof"}`},
		{name: "compatible: only a missing case", producer: "WideProducer", receiver: "WideReceiver", agreement: negotiate.Agreement{Protocol: negotiate.FailFast},
			value: `{"n":-7,"s":"x","pick":{"email":{"address":"a@b"}}}`, fields: `{"wide.n":"-7","wide.s":"x","wide.pick":{"case":"choice.email","fields":{"email.address":"a@b"}}}`},
		{name: "best effort never fills a missing field", producer: "MissingProducer", receiver: "MissingReceiver", agreement: bestEffort,
			value: `{"orderId":"A1"}`, rule: negotiate.RuleMissingField},
		{name: "best effort: a known case crosses", producer: "PigeonChannel", receiver: "EmailOnly", agreement: bestEffort,
			value: `{"email":{"address":"a@b"}}`, caseID: "channel.email", fields: `{"email.address":"a@b"}`},
		{name: "best effort: an unknown case is refused", producer: "PigeonChannel", receiver: "EmailOnly", agreement: bestEffort,
			value: `{"pigeon":{"loft":"roof"}}`, rule: negotiate.RuleUnknownCase},
		{name: "best effort: a nullability conflict travels as a warning", producer: "OptionalPriority", receiver: "PlainPriority", agreement: bestEffort,
			value: `{"priority":0}`, fields: `{"prio.priority":"0"}`, warnings: []string{"nullability:prio.priority"}},
		{name: "best effort: an incompatible type is refused", producer: "CascadeProducer", receiver: "CascadeReceiver", agreement: bestEffort,
			value: `{"count":"3"}`, rule: negotiate.RuleTypeMismatch},
		{name: "best effort: an undeclared extra field is refused, not dropped", producer: "ChattyProducer", receiver: "StrictReceiver", agreement: bestEffort,
			value: `{"answer":"42"}`, rule: negotiate.RuleExtraField},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := mustNegotiate(t, tc.producer, tc.receiver, tc.agreement)
			v := valueOf(t, schemaOf(t, tc.producer), tc.value)
			out, err := b.Convey(v)
			rc := out.Receipt
			if rc == nil || rc.InputSHA256 != sha(v.Canonical()) || rc.ManifestDigest != b.Manifest().Digest {
				t.Fatalf("receipt %+v", rc)
			}
			if tc.rule != "" {
				if !errors.Is(err, &negotiate.Error{Code: negotiate.CodeRefused, Rule: tc.rule}) {
					t.Fatalf("got %v, want %s", err, tc.rule)
				}
				if out.Value != nil || out.Document != nil || rc.Conforming || rc.Reason != "conformance_refused "+string(tc.rule) || rc.OutputSHA256 != "" {
					t.Fatalf("a refusal left %+v", out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Value.CaseID() != tc.caseID {
				t.Errorf("case %q, want %q", out.Value.CaseID(), tc.caseID)
			}
			if got := string(out.Value.FieldsJSON()); got != tc.fields {
				t.Errorf("fields %s, want %s", got, tc.fields)
			}
			if !bytes.Equal(out.Document, out.Value.Canonical()) || rc.OutputSHA256 != sha(out.Document) || !rc.Conforming {
				t.Errorf("receipt and document disagree: %+v", rc)
			}
			if _, err := b.Delta().Receiver().Decode(out.Document); err != nil {
				t.Errorf("the receiver refuses the conveyed document: %v", err)
			}
			if strings.Join(rc.Transformations, ",") != strings.Join(tc.applied, ",") || strings.Join(rc.Warnings, ",") != strings.Join(tc.warnings, ",") {
				t.Errorf("transformations %v warnings %v, want %v %v", rc.Transformations, rc.Warnings, tc.applied, tc.warnings)
			}
		})
	}
}

func TestConveyBinding(t *testing.T) {
	p := proposalSchema(t)
	lookup, err := negotiate.CheckBinding(p, "assist.lookup", schemaOf(t, "proposal.v1.LookupArgs"),
		negotiate.Agreement{Protocol: negotiate.TransformAll, Drop: []string{"assist.lookup.debug"}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := lookup.Convey(valueOf(t, p, `{"lookup":{"orderId":"A1","limit":"10","debug":"trace"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out.Value.FieldsJSON()), `{"assist.lookup.order_id":"A1","assist.lookup.limit":"10"}`; got != want {
		t.Errorf("arguments %s, want %s", got, want)
	}
	if out.Receipt.ProducerCase != "assist.lookup" || out.Value.TypeID() != "tool.lookup_order.args" {
		t.Errorf("receipt %+v", out.Receipt)
	}
	if _, err := lookup.Convey(valueOf(t, p, `{"lookup":{"orderId":"A1","limit":"51"}}`)); !errors.Is(err, &negotiate.Error{Code: negotiate.CodeRefused, Rule: negotiate.RuleNarrowInteger}) {
		t.Errorf("limit 51: %v", err)
	}
	// A value of another case, of another schema, or none is a caller's mistake.
	for name, v := range map[string]*interaction.Value{
		"another case":   valueOf(t, p, `{"reply":{"text":"hi"}}`),
		"another schema": valueOf(t, schemaOf(t, "Same"), `{"choice":{"email":{}}}`),
		"no value":       nil,
	} {
		if _, err := lookup.Convey(v); !errors.Is(err, negotiate.ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}

	refund, err := negotiate.CheckBinding(p, "assist.refund", schemaOf(t, "proposal.v1.RefundArgs"), negotiate.Agreement{Protocol: negotiate.FailFast})
	if err != nil {
		t.Fatal(err)
	}
	v := valueOf(t, p, `{"refund":{"orderId":"A1","amountMinor":"5","total":{"currency":"EUR","minorUnits":"5"},"notify":{"none":{}}}}`)
	out, err = refund.Convey(v)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Value.FieldsJSON(), v.FieldsJSON()) || len(out.Receipt.Transformations) != 0 {
		t.Errorf("identical arguments changed: %s vs %s, %v", out.Value.FieldsJSON(), v.FieldsJSON(), out.Receipt.Transformations)
	}
}

// TestConveyRefusesEveryOutputOfAnIncompatibleRoot: under best effort a boundary whose roots
// differ in kind is built, and every output gets its one refusal.
func TestConveyRefusesEveryOutputOfAnIncompatibleRoot(t *testing.T) {
	b := mustNegotiate(t, "Same", "RootVariant", negotiate.Agreement{Protocol: negotiate.BestEffort, ReceiverAcceptsBestEffort: true})
	_, err := b.Convey(valueOf(t, schemaOf(t, "Same"), `{"choice":{"email":{}}}`))
	if !errors.Is(err, &negotiate.Error{Code: negotiate.CodeRefused, Rule: negotiate.RuleTypeMismatch}) {
		t.Fatalf("got %v", err)
	}
}
