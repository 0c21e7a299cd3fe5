package negotiate_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/negotiate"
)

// valueOf builds a root value of s from protojson text, independently of this package.
func valueOf(tb testing.TB, s *interaction.Schema, pjson string) *interaction.Value {
	tb.Helper()
	m := dynamicpb.NewMessage(s.Root().Descriptor())
	if err := protojson.Unmarshal([]byte(pjson), m); err != nil {
		tb.Fatalf("protojson: %v", err)
	}
	v, err := s.ValueOf(m)
	if err != nil {
		tb.Fatalf("ValueOf: %v", err)
	}
	return v
}

func TestNegotiate(t *testing.T) {
	transformAll := negotiate.Agreement{Protocol: negotiate.TransformAll}
	bestEffort := negotiate.Agreement{Protocol: negotiate.BestEffort, ReceiverAcceptsBestEffort: true}
	for _, tc := range []struct {
		name               string
		producer, receiver string
		agreement          negotiate.Agreement
		code               negotiate.Code // "" when the boundary is built
		kinds              []negotiate.EntryKind
	}{
		{name: "nothing agreed", producer: "MissingProducer", receiver: "MissingReceiver", code: negotiate.CodeNegotiationRequired,
			kinds: []negotiate.EntryKind{negotiate.MissingField}},
		{name: "a missing field is never transformed", producer: "MissingProducer", receiver: "MissingReceiver", agreement: transformAll,
			code: negotiate.CodeUntransformable, kinds: []negotiate.EntryKind{negotiate.MissingField}},
		{name: "best effort with consent builds", producer: "MissingProducer", receiver: "MissingReceiver", agreement: bestEffort},
		{name: "best effort without consent is held to exact transformation", producer: "MissingProducer", receiver: "MissingReceiver",
			agreement: negotiate.Agreement{Protocol: negotiate.BestEffort}, code: negotiate.CodeUntransformable, kinds: []negotiate.EntryKind{negotiate.MissingField}},
		{name: "narrowings are transformed", producer: "NarrowProducer", receiver: "NarrowReceiver", agreement: transformAll},
		{name: "fail fast refuses narrowings", producer: "NarrowProducer", receiver: "NarrowReceiver", agreement: negotiate.Agreement{Protocol: negotiate.FailFast},
			code: negotiate.CodeFailFast, kinds: []negotiate.EntryKind{negotiate.TypeMismatch, negotiate.TypeMismatch, negotiate.TypeMismatch}},
		{name: "fail fast accepts a compatible delta", producer: "WideProducer", receiver: "WideReceiver", agreement: negotiate.Agreement{Protocol: negotiate.FailFast}},
		{name: "undeclared extra fields", producer: "ChattyProducer", receiver: "StrictReceiver", agreement: transformAll,
			code: negotiate.CodeUntransformable, kinds: []negotiate.EntryKind{negotiate.ExtraField, negotiate.ExtraField}},
		{name: "one extra field declared, one not", producer: "ChattyProducer", receiver: "StrictReceiver",
			agreement: negotiate.Agreement{Protocol: negotiate.TransformAll, Drop: []string{"reply.reasoning"}},
			code:      negotiate.CodeUntransformable, kinds: []negotiate.EntryKind{negotiate.ExtraField}},
		{name: "every extra field declared", producer: "ChattyProducer", receiver: "StrictReceiver",
			agreement: negotiate.Agreement{Protocol: negotiate.TransformAll, Drop: []string{"reply.reasoning", "reply.confidence"}}},
		{name: "incompatible representations", producer: "CascadeProducer", receiver: "CascadeReceiver", agreement: transformAll,
			code: negotiate.CodeUntransformable, kinds: []negotiate.EntryKind{negotiate.TypeMismatch}},
		{name: "nullability under transform all", producer: "OptionalPriority", receiver: "PlainPriority", agreement: transformAll,
			code: negotiate.CodeUntransformable, kinds: []negotiate.EntryKind{negotiate.NullabilityConflict}},
		{name: "nullability under best effort", producer: "OptionalPriority", receiver: "PlainPriority", agreement: bestEffort},
		{name: "unknown case under transform all", producer: "PigeonChannel", receiver: "EmailOnly", agreement: transformAll,
			code: negotiate.CodeUntransformable, kinds: []negotiate.EntryKind{negotiate.UnknownCase}},
		{name: "moves are transformed", producer: "MoveProducer", receiver: "MoveReceiver",
			agreement: negotiate.Agreement{Protocol: negotiate.TransformAll, Moves: map[string]string{"order.customer": "order.customer_name"}}},
		{name: "fail fast refuses a move", producer: "MoveProducer", receiver: "MoveReceiver",
			agreement: negotiate.Agreement{Protocol: negotiate.FailFast, Moves: map[string]string{"order.customer": "order.customer_name"}},
			code:      negotiate.CodeFailFast, kinds: []negotiate.EntryKind{negotiate.Moved}},
		{name: "a drop of a declared field", producer: "ChattyProducer", receiver: "StrictReceiver",
			agreement: negotiate.Agreement{Protocol: negotiate.TransformAll, Drop: []string{"reply.answer"}}, code: negotiate.CodeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := negotiate.Negotiate(schemaOf(t, tc.producer), schemaOf(t, tc.receiver), tc.agreement)
			if tc.code == "" {
				if err != nil || b == nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var e *negotiate.Error
			if !errors.As(err, &e) || e.Code != tc.code || b != nil {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
			if e.Manifest == nil || e.Manifest.ProducerDigest != schemaOf(t, tc.producer).Digest() || e.Manifest.ReceiverDigest != schemaOf(t, tc.receiver).Digest() {
				if tc.code != negotiate.CodeInvalid {
					t.Errorf("the refusal does not carry its manifest: %+v", e.Manifest)
				}
			}
			if len(e.Entries) != len(tc.kinds) {
				t.Fatalf("entries %v, want kinds %v", e.Entries, tc.kinds)
			}
			for i, entry := range e.Entries {
				if entry.Kind != tc.kinds[i] {
					t.Errorf("entry %d is %s, want %s", i, entry.Kind, tc.kinds[i])
				}
				if !strings.Contains(err.Error(), entry.String()) {
					t.Errorf("the message does not list %s: %v", entry, err)
				}
			}
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("multi-line error %q", err)
			}
		})
	}
}

func TestCheckBinding(t *testing.T) {
	p := proposalSchema(t)
	for _, tc := range []struct {
		name, caseID, args string
		agreement          negotiate.Agreement
		code               negotiate.Code
		entries            []string
	}{
		{name: "identical arguments pass fail fast", caseID: "assist.refund", args: "proposal.v1.RefundArgs",
			agreement: negotiate.Agreement{Protocol: negotiate.FailFast}},
		{name: "fail fast lists the delta", caseID: "assist.lookup", args: "proposal.v1.LookupArgs",
			agreement: negotiate.Agreement{Protocol: negotiate.FailFast}, code: negotiate.CodeFailFast,
			entries: []string{
				"type_mismatch(range) assist.proposal#assist.lookup/assist.lookup.limit (i64 [-9223372036854775808, 9223372036854775807]) -> tool.lookup_order.args/assist.lookup.limit (u32 [0, 50])",
				"extra_field assist.proposal#assist.lookup/assist.lookup.debug (string max_bytes 4096) -> tool.lookup_order.args/-",
			}},
		{name: "transform all with the extra field declared", caseID: "assist.lookup", args: "proposal.v1.LookupArgs",
			agreement: negotiate.Agreement{Protocol: negotiate.TransformAll, Drop: []string{"assist.lookup.debug"}}},
		{name: "a required argument the case never carries", caseID: "assist.ship", args: "proposal.v1.ShipArgs",
			agreement: negotiate.Agreement{Protocol: negotiate.TransformAll, Moves: map[string]string{"assist.ship.order_id": "ship.order"}},
			code:      negotiate.CodeUntransformable,
			entries: []string{
				"missing_field assist.proposal#assist.ship/- -> tool.ship.args/ship.carrier (string max_bytes 4096)",
				"nullability_conflict assist.proposal#assist.ship/assist.ship.coupon (string max_bytes 16 optional) -> tool.ship.args/assist.ship.coupon (string max_bytes 16)",
			}},
		{name: "no such case", caseID: "assist.cancel", args: "proposal.v1.RefundArgs",
			agreement: negotiate.Agreement{Protocol: negotiate.FailFast}, code: negotiate.CodeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := negotiate.CheckBinding(p, tc.caseID, schemaOf(t, tc.args), tc.agreement)
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				if m := b.Manifest(); m.ProducerCase != tc.caseID || m.ProducerDigest != p.Digest() {
					t.Errorf("manifest %+v", m)
				}
				return
			}
			var e *negotiate.Error
			if !errors.As(err, &e) || e.Code != tc.code {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
			var got []string
			for _, entry := range e.Entries {
				got = append(got, entry.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.entries, "\n") {
				t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.entries, "\n"))
			}
		})
	}
}
