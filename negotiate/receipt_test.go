package negotiate_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/negotiate"
)

// receipts returns one receipt of each disposition.
func receipts(t *testing.T) (accept, warn, reject negotiate.Outcome) {
	t.Helper()
	s := proposalSchema(t)
	m, err := negotiate.NewAdmitter(s, negotiate.Agreement{Protocol: negotiate.TransformAll})
	if err != nil {
		t.Fatal(err)
	}
	if accept, err = m.Admit([]byte(providerRefund)); err != nil {
		t.Fatal(err)
	}
	b := mustNegotiate(t, "OptionalPriority", "PlainPriority", negotiate.Agreement{Protocol: negotiate.BestEffort, ReceiverAcceptsBestEffort: true})
	if warn, err = b.Convey(valueOf(t, schemaOf(t, "OptionalPriority"), `{}`)); err != nil {
		t.Fatal(err)
	}
	if reject, err = m.Admit([]byte(`{"case":"assist.reply","fields":{"assist.reply.text":"hi"}}`)); err == nil {
		t.Fatal("admitted a value without one of its fields")
	}
	return accept, warn, reject
}

func TestReceiptAttributes(t *testing.T) {
	accept, warn, reject := receipts(t)
	for name, tc := range map[string]struct {
		out         negotiate.Outcome
		disposition negotiate.Disposition
	}{
		"accept": {accept, negotiate.Accept},
		"warn":   {warn, negotiate.Warn},
		"reject": {reject, negotiate.Reject},
	} {
		t.Run(name, func(t *testing.T) {
			rc := tc.out.Receipt
			attrs := rc.Attributes()
			if len(attrs) != 14 {
				t.Errorf("%d attributes", len(attrs))
			}
			for k := range attrs {
				if !strings.HasPrefix(k, "beam_agents.conformance.") {
					t.Errorf("key %s", k)
				}
			}
			if !reflect.DeepEqual(attrs, rc.Attributes()) || attrs[negotiate.AttrReceiptDigest] != rc.Digest() {
				t.Error("attributes are not deterministic")
			}
			back, err := negotiate.ReceiptFromAttributes(attrs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, rc) {
				t.Errorf("round trip:\n got %+v\nwant %+v", back, rc)
			}
			if got := back.Disposition(); got != tc.disposition {
				t.Errorf("disposition %s, want %s", got, tc.disposition)
			}
		})
	}
	if got := warn.Receipt.Attributes()[negotiate.AttrWarnings]; got != "nullability:prio.priority" {
		t.Errorf("warnings attribute %q", got)
	}
	if got := accept.Receipt.Attributes()[negotiate.AttrTransformations]; got != "envelope,final_lf,integer_number,key_order,whitespace" {
		t.Errorf("transformations attribute %q", got)
	}
	if got := reject.Receipt.Attributes()[negotiate.AttrReason]; got != "canonicalization_refused value.fields.missing" {
		t.Errorf("reason attribute %q", got)
	}
}

func TestReceiptFromAttributesRefuses(t *testing.T) {
	accept, _, _ := receipts(t)
	for _, tc := range []struct {
		name   string
		change func(map[string]string)
		rule   negotiate.Rule
	}{
		{"a flipped conformance", func(a map[string]string) { a[negotiate.AttrConforming] = "false" }, negotiate.RuleReceiptDigest},
		{"another output hash", func(a map[string]string) { a[negotiate.AttrOutputSHA256] = sha(nil) }, negotiate.RuleReceiptDigest},
		{"a transformation hidden", func(a map[string]string) { a[negotiate.AttrTransformations] = "" }, negotiate.RuleReceiptDigest},
		{"a missing key", func(a map[string]string) { delete(a, negotiate.AttrVerdict) }, negotiate.RuleReceiptAttributes},
		{"an unknown protocol", func(a map[string]string) { a[negotiate.AttrProtocol] = "SOMETIMES" }, negotiate.RuleReceiptAttributes},
		{"an unknown verdict", func(a map[string]string) { a[negotiate.AttrVerdict] = "FINE" }, negotiate.RuleReceiptAttributes},
		{"a malformed flag", func(a map[string]string) { a[negotiate.AttrConforming] = "yes" }, negotiate.RuleReceiptAttributes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			attrs := accept.Receipt.Attributes()
			tc.change(attrs)
			if _, err := negotiate.ReceiptFromAttributes(attrs); !errors.Is(err, &negotiate.Error{Code: negotiate.CodeInvalid, Rule: tc.rule}) {
				t.Fatalf("got %v, want %s", err, tc.rule)
			}
		})
	}
	// Other attributes on the same trace event are none of the receipt's business.
	attrs := accept.Receipt.Attributes()
	attrs["gen_ai.request.model"] = "m"
	if _, err := negotiate.ReceiptFromAttributes(attrs); err != nil {
		t.Fatal(err)
	}
}

func TestReceiptCheck(t *testing.T) {
	accept, _, reject := receipts(t)
	if err := accept.Receipt.Check(accept.Document); err != nil {
		t.Fatal(err)
	}
	other := append([]byte(nil), accept.Document...)
	other[len(other)-3] ^= 1
	if err := accept.Receipt.Check(other); !errors.Is(err, &negotiate.Error{Code: negotiate.CodeInvalid, Rule: negotiate.RuleReceiptOutput}) {
		t.Errorf("altered output: %v", err)
	}
	if err := reject.Receipt.Check(nil); !errors.Is(err, &negotiate.Error{Code: negotiate.CodeRefused, Rule: negotiate.RuleNonConforming}) {
		t.Errorf("non-conforming: %v", err)
	}
}

func TestReceiptDocument(t *testing.T) {
	accept, _, _ := receipts(t)
	doc := string(accept.Receipt.Document())
	if !strings.HasPrefix(doc, `{"schema":"beam_agents.negotiate-receipt.v1","producer_digest":"sha256:`) || strings.ContainsAny(doc, " \n") {
		t.Errorf("document %s", doc)
	}
	if !strings.Contains(doc, `"transformations":["envelope","final_lf","integer_number","key_order","whitespace"]`) {
		t.Errorf("document %s", doc)
	}
}
