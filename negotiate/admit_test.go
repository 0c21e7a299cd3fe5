package negotiate_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/negotiate"
)

func TestAdmit(t *testing.T) {
	s := proposalSchema(t)
	canon := canonicalDoc(s, canonicalRefund)
	broken := strings.Replace(providerRefund, "100,", "100.5,", 1)
	for _, tc := range []struct {
		name      string
		agreement negotiate.Agreement
		text      string
		verdict   negotiate.Verdict
		gate      int
		applied   []string
		code      negotiate.Code // of a refusal
		rule      negotiate.Rule
	}{
		{name: "canonical, nothing agreed", text: canon, verdict: negotiate.Compatible, gate: 2},
		{name: "canonical under fail fast", agreement: negotiate.Agreement{Protocol: negotiate.FailFast}, text: canon, verdict: negotiate.Compatible, gate: 2},
		{name: "canonical under transform all", agreement: negotiate.Agreement{Protocol: negotiate.TransformAll}, text: canon, verdict: negotiate.Compatible, gate: 2},
		{name: "provider style, nothing agreed", text: providerRefund, verdict: negotiate.NegotiationRequired, gate: 3,
			code: negotiate.CodeNegotiationRequired, rule: negotiate.RuleNotCanonical},
		{name: "provider style under fail fast", agreement: negotiate.Agreement{Protocol: negotiate.FailFast}, text: providerRefund,
			verdict: negotiate.TransformationRequired, gate: 5, code: negotiate.CodeFailFast, rule: negotiate.RuleNotCanonical},
		{name: "provider style under transform all", agreement: negotiate.Agreement{Protocol: negotiate.TransformAll}, text: providerRefund,
			verdict: negotiate.TransformationRequired, gate: 5, applied: []string{"envelope", "final_lf", "integer_number", "key_order", "whitespace"}},
		{name: "provider style, implicitly", agreement: negotiate.Agreement{AllowImplicit: true}, text: providerRefund,
			verdict: negotiate.TransformationRequired, gate: 5, applied: []string{"envelope", "final_lf", "integer_number", "key_order", "whitespace"}},
		{name: "provider style under best effort", agreement: negotiate.Agreement{Protocol: negotiate.BestEffort, ReceiverAcceptsBestEffort: true}, text: providerRefund,
			verdict: negotiate.BestEffortAllowed, gate: 4, applied: []string{"envelope", "final_lf", "integer_number", "key_order", "whitespace"}},
		{name: "a fraction under transform all", agreement: negotiate.Agreement{Protocol: negotiate.TransformAll}, text: broken,
			verdict: negotiate.TransformationRequired, gate: 5, code: negotiate.CodeCanonicalize, rule: negotiate.RuleIntegerFraction},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := negotiate.NewAdmitter(s, tc.agreement)
			if err != nil {
				t.Fatal(err)
			}
			out, err := m.Admit([]byte(tc.text))
			rc := out.Receipt
			if rc.Verdict != tc.verdict || rc.ProducerDigest != negotiate.DialectDigest(s) || rc.ReceiverDigest != s.Digest() || rc.InputSHA256 != sha([]byte(tc.text)) {
				t.Fatalf("receipt %+v", rc)
			}
			compatible, transform := m.Manifests()
			mf := transform
			if tc.gate == 2 {
				mf = compatible
			}
			if mf.Gate != tc.gate || rc.ManifestDigest != mf.Digest {
				t.Errorf("gate %d (manifest %s), want gate %d", mf.Gate, rc.ManifestDigest, tc.gate)
			}
			if tc.code != "" {
				if !errors.Is(err, &negotiate.Error{Code: tc.code, Rule: tc.rule}) || rc.Conforming || out.Value != nil {
					t.Fatalf("got %v, want %s %s", err, tc.code, tc.rule)
				}
				if rc.Reason != string(tc.code)+" "+string(tc.rule) {
					t.Errorf("reason %q", rc.Reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(out.Document) != canon || rc.OutputSHA256 != sha([]byte(canon)) || !rc.Conforming {
				t.Errorf("admitted %s with %+v", out.Document, rc)
			}
			if strings.Join(rc.Transformations, ",") != strings.Join(tc.applied, ",") {
				t.Errorf("transformations %v, want %v", rc.Transformations, tc.applied)
			}
		})
	}
}

// TestAdmitFailFastKeepsTheDecodersDiagnostic: under FAIL_FAST the refusal wraps the strict
// decoder's own error, so callers that matched interaction codes keep matching them.
func TestAdmitFailFastKeepsTheDecodersDiagnostic(t *testing.T) {
	m, err := negotiate.NewAdmitter(proposalSchema(t), negotiate.Agreement{Protocol: negotiate.FailFast})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Admit([]byte(providerRefund))
	if !errors.Is(err, interaction.ErrNotCanonical) || !errors.Is(err, negotiate.ErrFailFast) {
		t.Fatalf("got %v", err)
	}
}

func TestNewAdmitterRefuses(t *testing.T) {
	s := proposalSchema(t)
	for name, a := range map[string]negotiate.Agreement{
		"moves": {Protocol: negotiate.TransformAll, Moves: map[string]string{"a": "b"}},
		"drops": {Protocol: negotiate.TransformAll, Drop: []string{"a"}},
	} {
		if _, err := negotiate.NewAdmitter(s, a); !errors.Is(err, &negotiate.Error{Code: negotiate.CodeInvalid, Rule: negotiate.RuleModelAgreement}) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := negotiate.NewAdmitter(nil, negotiate.Agreement{}); !errors.Is(err, negotiate.ErrInvalid) {
		t.Errorf("nil schema: %v", err)
	}
}
