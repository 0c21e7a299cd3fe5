package interaction_test

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/corpus"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
)

func message(t testing.TB, name string, set map[string]any) *dynamicpb.Message {
	t.Helper()
	return prototest.NewMessage(t, testFiles(t), name, set)
}

func refundMessage(t testing.TB) *dynamicpb.Message {
	return message(t, "shop.v1.Proposal", map[string]any{
		"refund.order_id": "A-1042", "refund.amount_minor": uint64(1000000), "refund.reason": uint32(255),
		"refund.priority": int32(-5), "refund.ledger_delta": int64(math.MinInt64), "refund.receipt": []byte{0, 255, 10},
		"refund.total.currency": "€", "refund.total.minor_units": int64(math.MaxInt64),
		"refund.fee.currency": "EUR", "refund.notify.sms.number": "+15550100", "refund.note": "line\nbreak \"quoted\"",
	})
}

func TestValueOfDecodeCopyToRoundTrip(t *testing.T) {
	s := mustSchema(t, "shop.proposal")
	for name, m := range map[string]*dynamicpb.Message{
		"refund":   refundMessage(t),
		"reply":    message(t, "shop.v1.Proposal", map[string]any{"reply.text": "héllo\x00\x1f\u2028", "reply.final": true}),
		"escalate": message(t, "shop.v1.Proposal", map[string]any{"escalate": nil}),
		"letter":   letterMessage(t),
	} {
		t.Run(name, func(t *testing.T) {
			v, err := s.ValueOf(m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Decode(v.Canonical())
			if err != nil {
				t.Fatalf("Decode(ValueOf): %v\n%s", err, v.Canonical())
			}
			if string(got.JSON()) != string(v.JSON()) {
				t.Fatalf("decoded %s, want %s", got.JSON(), v.JSON())
			}
			back := dynamicpb.NewMessage(m.Descriptor())
			if err := got.CopyTo(back); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(back, m) {
				t.Fatalf("CopyTo gave %v, want %v", back, m)
			}
		})
	}
}

// letterMessage sets every nested message: a value has every field, so CopyTo sets them all.
func letterMessage(t testing.TB) *dynamicpb.Message {
	set := map[string]any{"letter.subject": "s", "letter.via.none": nil, "letter.attachment": nil}
	for i := 1; i <= 10; i++ {
		set["letter.s"+strconv.Itoa(i)] = nil
	}
	return message(t, "shop.v1.Proposal", set)
}

func TestValueAccessors(t *testing.T) {
	s := mustSchema(t, "shop.proposal")
	v, err := s.ValueOf(refundMessage(t))
	if err != nil {
		t.Fatal(err)
	}
	if v.TypeID() != "shop.proposal" || v.CaseID() != "shop.proposal.refund" || v.Case().StableID() != v.CaseID() || v.NumFields() != 10 {
		t.Fatalf("value %s/%s with %d fields", v.TypeID(), v.CaseID(), v.NumFields())
	}
	get := func(id string) interaction.FieldValue {
		fv, ok := v.Lookup(id)
		if !ok {
			t.Fatalf("no field %s", id)
		}
		return fv
	}
	if got := get("shop.refund.ledger_delta").Int(); got != math.MinInt64 {
		t.Errorf("ledger_delta %d", got)
	}
	if got := get("shop.refund.amount_minor").Uint(); got != 1000000 {
		t.Errorf("amount %d", got)
	}
	if got := get("shop.refund.priority").Integer().String(); got != "-5" {
		t.Errorf("priority %s", got)
	}
	if got := get("shop.refund.receipt").Bytes(); string(got) != "\x00\xff\n" {
		t.Errorf("receipt %v", got)
	}
	total := get("shop.refund.total").Nested()
	if total.TypeID() != "shop.money" || total.CaseID() != "" || total.Field(1).Int() != math.MaxInt64 || total.Canonical() != nil {
		t.Errorf("total %s", total)
	}
	notify := get("shop.refund.notify").Nested()
	if notify.CaseID() != "shop.channel.sms" || notify.Field(0).Text() != "+15550100" {
		t.Errorf("notify %s", notify)
	}
	if _, ok := v.Lookup("shop.reply.text"); ok {
		t.Error("found a field of another case")
	}
	want := `{"shop.refund.order_id":"A-1042","shop.refund.amount_minor":"1000000","shop.refund.reason":"255","shop.refund.priority":"-5","shop.refund.ledger_delta":"-9223372036854775808","shop.refund.receipt":[0,255,10],"shop.refund.total":{"fields":{"shop.money.currency":"€","shop.money.minor_units":"9223372036854775807"}},"shop.refund.fee":{"fields":{"shop.money.currency":"EUR","shop.money.minor_units":"0"}},"shop.refund.notify":{"case":"shop.channel.sms","fields":{"shop.sms.number":"+15550100"}},"shop.refund.note":"line\nbreak \"quoted\""}`
	if got := string(v.FieldsJSON()); got != want {
		t.Errorf("FieldsJSON\n got %s\nwant %s", got, want)
	}
	if got := string(v.JSON()); got != `{"case":"shop.proposal.refund","fields":`+want+`}` {
		t.Errorf("JSON %s", got)
	}
	for id, want := range map[string]any{"shop.refund.reason": uint64(255), "shop.refund.priority": int64(-5), "shop.refund.order_id": "A-1042"} {
		if got := get(id).Interface(); got != want {
			t.Errorf("%s: Interface() = %#v", id, got)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Text on an integer field did not panic")
		}
	}()
	get("shop.refund.reason").Text()
}

func TestValueOfRefusesWhatDecodeRefuses(t *testing.T) {
	s := mustSchema(t, "shop.proposal")
	for _, tc := range []struct {
		name string
		m    proto.Message
		rule interaction.Rule
		path string
	}{
		{"no case", message(t, "shop.v1.Proposal", nil), interaction.RuleCase, "$.value.case"},
		{"no nested case", message(t, "shop.v1.Proposal", map[string]any{"refund.amount_minor": uint64(1)}), interaction.RuleCase, `$.value.fields["shop.refund.notify"].case`},
		{"below minimum", message(t, "shop.v1.Proposal", map[string]any{"refund.notify.none": nil}), interaction.RuleIntegerRange, `$.value.fields["shop.refund.amount_minor"]`},
		{"above maximum", message(t, "shop.v1.Proposal", map[string]any{"refund.amount_minor": uint64(1), "refund.reason": uint32(256), "refund.notify.none": nil}), interaction.RuleIntegerRange, `$.value.fields["shop.refund.reason"]`},
		{"long string", message(t, "shop.v1.Proposal", map[string]any{"reply.text": strings.Repeat("é", 2049)}), interaction.RuleStringBytes, `$.value.fields["shop.reply.text"]`},
		{"invalid UTF-8", message(t, "shop.v1.Proposal", map[string]any{"reply.text": "\xff"}), interaction.RuleUTF8, `$.value.fields["shop.reply.text"]`},
		{"long bytes", message(t, "shop.v1.Proposal", map[string]any{"refund.amount_minor": uint64(1), "refund.receipt": make([]byte, 65), "refund.notify.none": nil}), interaction.RuleBytesLength, `$.value.fields["shop.refund.receipt"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.ValueOf(tc.m)
			var e *interaction.Error
			if !errors.As(err, &e) || e.Code != interaction.CodeNotAdmitted || e.Rule != tc.rule || e.Path != tc.path {
				t.Fatalf("got %v, want SPX-Z206 %s at %s", err, tc.rule, tc.path)
			}
		})
	}
}

func TestCopyToMatchesDescriptorsStructurally(t *testing.T) {
	s := mustSchema(t, "shop.proposal")
	v, err := s.ValueOf(refundMessage(t))
	if err != nil {
		t.Fatal(err)
	}
	// The same source compiled again gives distinct descriptor objects of the same shape.
	again := prototest.CompileDir(t, "testdata/proto", "shop.proto")
	twin := dynamicpb.NewMessage(prototest.Message(t, again, "shop.v1.Proposal"))
	if err := v.CopyTo(twin); err != nil {
		t.Fatalf("structurally equal descriptor: %v", err)
	}
	if got := twin.Get(twin.Descriptor().Fields().ByName("refund")).Message(); got.Get(got.Descriptor().Fields().ByName("order_id")).String() != "A-1042" {
		t.Fatal("CopyTo did not copy")
	}
	changed := prototest.CompileSources(t, map[string]string{"shop.proto": strings.Replace(readFile(t, "testdata/proto/shop.proto"),
		"int32 priority = 4", "sint32 priority = 4", 1)})
	for name, m := range map[string]proto.Message{
		"other message":  dynamicpb.NewMessage(prototest.Message(t, testFiles(t), "shop.v1.Money")),
		"retyped field":  dynamicpb.NewMessage(prototest.Message(t, changed, "shop.v1.Proposal")),
		"nil message":    nil,
		"other variant":  dynamicpb.NewMessage(prototest.Message(t, testFiles(t), "shop.v1.Channel")),
		"record for var": dynamicpb.NewMessage(prototest.Message(t, testFiles(t), "edges.v1.Root")),
	} {
		if err := v.CopyTo(m); !errors.Is(err, interaction.ErrTypeMismatch) {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := s.ValueOf(m); name != "retyped field" && !errors.Is(err, interaction.ErrTypeMismatch) {
			t.Errorf("ValueOf %s: %v", name, err)
		}
	}
}

func TestDocumentBoundIsExact(t *testing.T) {
	s := mustSchema(t, "shop.proposal")
	doc := corpus.LetterOfSize(t, s, testFiles(t), interaction.MaxDocumentBytes)
	if _, err := s.Decode(doc); err != nil {
		t.Fatalf("a %d-byte document: %v", len(doc), err)
	}
	over := corpus.LetterOfSize(t, s, testFiles(t), interaction.MaxDocumentBytes+1)
	if _, err := s.Reference(string(over)); err != nil {
		t.Fatalf("the %d-byte document is not valid but for its size: %v", len(over), err)
	}
	if _, err := s.Decode(over); !errors.Is(err, &interaction.Error{Code: interaction.CodeNotAdmitted, Rule: interaction.RuleDocumentBytes}) {
		t.Fatalf("a %d-byte document: %v", len(over), err)
	}
	big := message(t, "shop.v1.Proposal", nil)
	for i := 1; i <= 10; i++ {
		prototest.SetPath(t, big.ProtoReflect(), "letter.s"+strconv.Itoa(i)+".text", strings.Repeat("\x01", 4096))
	}
	prototest.SetPath(t, big.ProtoReflect(), "letter.via.none", nil)
	if _, err := s.ValueOf(big); !errors.Is(err, &interaction.Error{Code: interaction.CodeNotAdmitted, Rule: interaction.RuleDocumentBytes}) {
		t.Fatalf("ValueOf of an oversized value: %v", err)
	}
}

func TestDecodeIsSafeForConcurrentUse(t *testing.T) {
	docs := loadCorpus(t)
	schemas := map[string]*interaction.Schema{}
	for _, d := range docs {
		schemas[d.Schema] = mustSchema(t, d.Schema)
	}
	want := make([]string, len(docs))
	for i, d := range docs {
		_, err := schemas[d.Schema].Decode(d.Bytes)
		want[i] = errString(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, d := range docs {
				if _, err := schemas[d.Schema].Decode(d.Bytes); errString(err) != want[i] {
					t.Errorf("%s: %v", d.ID(), err)
				}
			}
		}()
	}
	wg.Wait()
}

func TestErrorMatching(t *testing.T) {
	s := mustSchema(t, "shop.proposal")
	_, err := s.Decode([]byte("{}\n"))
	if !errors.Is(err, interaction.ErrNotCanonical) || errors.Is(err, interaction.ErrNotAdmitted) ||
		!errors.Is(err, &interaction.Error{Code: interaction.CodeNotCanonical, Rule: interaction.RuleEnvelope}) ||
		errors.Is(err, &interaction.Error{Code: interaction.CodeNotCanonical, Rule: interaction.RuleJSON}) {
		t.Fatalf("errors.Is on %v", err)
	}
	_, err = s.Decode([]byte("{\"schema\":\"\n\"}\n"))
	if strings.ContainsAny(err.Error(), "\n\r") {
		t.Fatalf("multi-line diagnostic %q", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
