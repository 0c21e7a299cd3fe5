package negotiate_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/negotiate"
)

// The seed's three failure modes, each driven to its one explicit outcome. Nothing here
// retries: every boundary is decided once from the schemas, and every output gets one outcome.

// TestFailureModeTypeMismatchCascade: a producer of integers meets a receiver of strings.
// Without negotiation the producer oscillates between representations; here the mismatch is
// found from the schemas before any output exists, and at the model boundary both integer
// spellings meet the same canonical form in one pass.
func TestFailureModeTypeMismatchCascade(t *testing.T) {
	p, r := schemaOf(t, "CascadeProducer"), schemaOf(t, "CascadeReceiver")

	// Build time: one refusal naming the mismatch and both declarations.
	_, err := negotiate.Negotiate(p, r, negotiate.Agreement{Protocol: negotiate.TransformAll})
	var e *negotiate.Error
	if !errors.As(err, &e) || e.Code != negotiate.CodeUntransformable || len(e.Entries) != 1 {
		t.Fatalf("got %v", err)
	}
	if got := e.Entries[0]; got.Kind != negotiate.TypeMismatch || got.Mismatch != negotiate.MismatchRepresentation ||
		got.Producer.Decl != "i64 [-9223372036854775808, 9223372036854775807]" || got.Receiver.Decl != "string max_bytes 8" {
		t.Fatalf("entry %s", got)
	}

	// Per output under best effort: the same output gets the same single refusal every time;
	// nothing converts the integer to a string to see whether that passes.
	b := mustNegotiate(t, "CascadeProducer", "CascadeReceiver", negotiate.Agreement{Protocol: negotiate.BestEffort, ReceiverAcceptsBestEffort: true})
	v := valueOf(t, p, `{"count":"42"}`)
	first, err1 := b.Convey(v)
	second, err2 := b.Convey(v)
	if !errors.Is(err1, &negotiate.Error{Code: negotiate.CodeRefused, Rule: negotiate.RuleTypeMismatch}) || err1.Error() != err2.Error() ||
		first.Receipt.Digest() != second.Receipt.Digest() {
		t.Fatalf("outcomes differ or are not the type mismatch: %v / %v", err1, err2)
	}

	// The model boundary: 42 and "42" are the same integer and reach the same document; a
	// spelled-out number is refused once, with the rule that says why.
	admit, err := negotiate.NewAdmitter(p, negotiate.Agreement{Protocol: negotiate.TransformAll})
	if err != nil {
		t.Fatal(err)
	}
	asNumber, err := admit.Admit([]byte(`{"fields":{"stock.count":42}}`))
	if err != nil {
		t.Fatal(err)
	}
	asString, err := admit.Admit([]byte(`{"fields":{"stock.count":"42"}}`))
	if err != nil || string(asString.Document) != string(asNumber.Document) {
		t.Fatalf("two spellings of 42: %v\n%s\n%s", err, asNumber.Document, asString.Document)
	}
	_, err = admit.Admit([]byte(`{"fields":{"stock.count":"forty-two"}}`))
	if !errors.Is(err, &negotiate.Error{Code: negotiate.CodeCanonicalize, Rule: negotiate.RuleIntegerSyntax}) {
		t.Fatalf("spelled out: %v", err)
	}
}

// TestFailureModeRequiredFieldFabrication: the receiver requires a field the producer never
// produces. No protocol fills it in: the boundary is refused, or each output is.
func TestFailureModeRequiredFieldFabrication(t *testing.T) {
	p, r := schemaOf(t, "MissingProducer"), schemaOf(t, "MissingReceiver")
	for _, a := range []negotiate.Agreement{{Protocol: negotiate.TransformAll}, {Protocol: negotiate.FailFast}, {}} {
		_, err := negotiate.Negotiate(p, r, a)
		var e *negotiate.Error
		if !errors.As(err, &e) || len(e.Entries) != 1 || e.Entries[0].Kind != negotiate.MissingField || e.Entries[0].Receiver.Member != "refund.reason" {
			t.Fatalf("%s: got %v", a.Protocol, err)
		}
	}
	b := mustNegotiate(t, "MissingProducer", "MissingReceiver", negotiate.Agreement{Protocol: negotiate.BestEffort, ReceiverAcceptsBestEffort: true})
	out, err := b.Convey(valueOf(t, p, `{"orderId":"A1"}`))
	if !errors.Is(err, &negotiate.Error{Code: negotiate.CodeRefused, Rule: negotiate.RuleMissingField}) || out.Document != nil || out.Receipt.Conforming {
		t.Fatalf("got %v, %+v", err, out)
	}

	// At the model boundary a missing field or a null is refused, never defaulted.
	admit, err := negotiate.NewAdmitter(proposalSchema(t), negotiate.Agreement{Protocol: negotiate.TransformAll})
	if err != nil {
		t.Fatal(err)
	}
	for text, rule := range map[string]negotiate.Rule{
		`{"case":"assist.reply","fields":{"assist.reply.text":"hi"}}`:                                negotiate.RuleFieldsMissing,
		`{"case":"assist.reply","fields":{"assist.reply.text":null,"assist.reply.final":true}}`:      negotiate.RuleNull,
		`{"case":"assist.reply","fields":{"assist.reply.text":"hi","assist.reply.final":null}}`:      negotiate.RuleNull,
		`{"case":"assist.lookup","fields":{"assist.lookup.order_id":"A1","assist.lookup.debug":""}}`: negotiate.RuleFieldsMissing,
	} {
		out, err := admit.Admit([]byte(text))
		if !errors.Is(err, &negotiate.Error{Code: negotiate.CodeCanonicalize, Rule: rule}) || out.Value != nil {
			t.Errorf("%s: got %v, want %s", text, err, rule)
		}
	}
}

// TestFailureModeStrictModeRejection: helpful metadata meets a closed receiver. The delta
// names exactly the fields to remove; once the receiver declares them droppable every output
// conforms, and the receipt says what was dropped.
func TestFailureModeStrictModeRejection(t *testing.T) {
	p, r := schemaOf(t, "ChattyProducer"), schemaOf(t, "StrictReceiver")
	_, err := negotiate.Negotiate(p, r, negotiate.Agreement{Protocol: negotiate.TransformAll})
	var e *negotiate.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v", err)
	}
	var remove []string
	for _, entry := range e.Entries {
		if entry.Kind != negotiate.ExtraField {
			t.Fatalf("entry %s", entry)
		}
		remove = append(remove, entry.Producer.Member)
	}
	if strings.Join(remove, ",") != "reply.confidence,reply.reasoning" {
		t.Fatalf("fields to remove: %v", remove)
	}
	b, err := negotiate.Negotiate(p, r, negotiate.Agreement{Protocol: negotiate.TransformAll, Drop: remove})
	if err != nil {
		t.Fatal(err)
	}
	out, err := b.Convey(valueOf(t, p, `{"answer":"42","reasoning":"I thought hard","confidence":97}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out.Value.FieldsJSON()); got != `{"reply.answer":"42"}` || strings.Join(out.Receipt.Transformations, ",") != "drop:reply.confidence,drop:reply.reasoning" {
		t.Fatalf("conveyed %s with %v", got, out.Receipt.Transformations)
	}

	// A model adding metadata of its own is refused naming the member, never silently
	// trimmed: the provider projection it was given is closed too.
	admit, err := negotiate.NewAdmitter(r, negotiate.Agreement{Protocol: negotiate.TransformAll})
	if err != nil {
		t.Fatal(err)
	}
	_, err = admit.Admit([]byte(`{"fields":{"reply.answer":"42","reply.reasoning":"because"}}`))
	if !errors.As(err, &e) || e.Rule != negotiate.RuleFieldsUnknown || e.Path != `$.value.fields["reply.reasoning"]` {
		t.Fatalf("got %v", err)
	}
}
