package negotiate_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/negotiate"
)

// TestGates walks the seed's decision boundary in order: each case is decided by the gate it
// names, and the cases around each gate show that the earlier gates come first.
func TestGates(t *testing.T) {
	bestEffort := negotiate.Agreement{Protocol: negotiate.BestEffort, ReceiverAcceptsBestEffort: true}
	for _, tc := range []struct {
		name               string
		producer, receiver string
		agreement          negotiate.Agreement
		gate               int
		verdict            negotiate.Verdict
		protocol           negotiate.Protocol
		directive          string
	}{
		{"1 identical, nothing agreed", "Same", "Same", negotiate.Agreement{}, 1, negotiate.Compatible, negotiate.NoProtocol, "PROCEED: schemas identical"},
		{"1 identical before FAIL_FAST", "Same", "Same", negotiate.Agreement{Protocol: negotiate.FailFast}, 1, negotiate.Compatible, negotiate.FailFast, "PROCEED: schemas identical"},
		{"2 only a missing case, nothing agreed", "WideProducer", "WideReceiver", negotiate.Agreement{}, 2, negotiate.Compatible, negotiate.NoProtocol, "PROCEED: no blocking delta"},
		{"2 before FAIL_FAST", "WideProducer", "WideReceiver", negotiate.Agreement{Protocol: negotiate.FailFast}, 2, negotiate.Compatible, negotiate.FailFast, "PROCEED: no blocking delta"},
		{"3 equal digests do not hide a nullability conflict", "OptionalPriority", "PlainPriority", negotiate.Agreement{}, 3, negotiate.NegotiationRequired, negotiate.NoProtocol, "HALT: 1 blocking delta entries: nullability_conflict 1 and no negotiation protocol"},
		{"3 a missing field, nothing agreed", "MissingProducer", "MissingReceiver", negotiate.Agreement{ReceiverAcceptsBestEffort: true}, 3, negotiate.NegotiationRequired, negotiate.NoProtocol, "HALT: 1 blocking delta entries: missing_field 1"},
		{"4 best effort with consent", "MissingProducer", "MissingReceiver", bestEffort, 4, negotiate.BestEffortAllowed, negotiate.BestEffort, "PROCEED: best effort allowed with warnings"},
		{"5 best effort without consent", "MissingProducer", "MissingReceiver", negotiate.Agreement{Protocol: negotiate.BestEffort}, 5, negotiate.TransformationRequired, negotiate.BestEffort, "ACTION: transform output per BEST_EFFORT"},
		{"5 transform all", "NarrowProducer", "NarrowReceiver", negotiate.Agreement{Protocol: negotiate.TransformAll}, 5, negotiate.TransformationRequired, negotiate.TransformAll, "ACTION: transform output per TRANSFORM_ALL (3 blocking delta entries: type_mismatch 3)"},
		{"5 implicit transform all", "NarrowProducer", "NarrowReceiver", negotiate.Agreement{AllowImplicit: true}, 5, negotiate.TransformationRequired, negotiate.TransformAll, "ACTION: transform output per TRANSFORM_ALL"},
		{"5 fail fast", "NarrowProducer", "NarrowReceiver", negotiate.Agreement{Protocol: negotiate.FailFast}, 5, negotiate.TransformationRequired, negotiate.FailFast, "HALT: FAIL_FAST transforms nothing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, r := schemaOf(t, tc.producer), schemaOf(t, tc.receiver)
			d, err := negotiate.Delta(p, r)
			if err != nil {
				t.Fatal(err)
			}
			m := negotiate.Evaluate(d, tc.agreement)
			if m.Gate != tc.gate || m.Verdict != tc.verdict || m.Protocol != tc.protocol {
				t.Fatalf("gate %d %s %s, want gate %d %s %s", m.Gate, m.Verdict, m.Protocol, tc.gate, tc.verdict, tc.protocol)
			}
			if !strings.HasPrefix(m.Directive, tc.directive) {
				t.Errorf("directive %q, want prefix %q", m.Directive, tc.directive)
			}
			if m.ProducerDigest != p.Digest() || m.ReceiverDigest != r.Digest() || m.DeltaDigest != d.Digest() {
				t.Errorf("the manifest does not name both schema digests and the delta digest: %+v", m)
			}
		})
	}
}

func TestEqualDigestsCanConflict(t *testing.T) {
	p, r := schemaOf(t, "OptionalPriority"), schemaOf(t, "PlainPriority")
	if p.Digest() != r.Digest() {
		t.Fatal("the fixture should give equal digests: presence is not part of a schema document")
	}
}

// TestManifestDigest: the digest covers every input of the decision, both schema digests
// included, and nothing else.
func TestManifestDigest(t *testing.T) {
	d, _ := negotiate.Delta(schemaOf(t, "NarrowProducer"), schemaOf(t, "NarrowReceiver"))
	dm, _ := negotiate.DeltaOptions{}.Delta(schemaOf(t, "MissingProducer"), schemaOf(t, "MissingReceiver"))
	base := negotiate.Agreement{Protocol: negotiate.TransformAll}
	m := negotiate.Evaluate(d, base)
	if again := negotiate.Evaluate(d, base); again != m {
		t.Fatal("not deterministic")
	}
	for name, other := range map[string]negotiate.Manifest{
		"protocol":    negotiate.Evaluate(d, negotiate.Agreement{Protocol: negotiate.FailFast}),
		"consent":     negotiate.Evaluate(d, negotiate.Agreement{Protocol: negotiate.TransformAll, ReceiverAcceptsBestEffort: true}),
		"implicit":    negotiate.Evaluate(d, negotiate.Agreement{Protocol: negotiate.TransformAll, AllowImplicit: true}),
		"drops":       negotiate.Evaluate(d, negotiate.Agreement{Protocol: negotiate.TransformAll, Drop: []string{"x"}}),
		"other delta": negotiate.Evaluate(dm, base),
	} {
		if other.Digest == m.Digest {
			t.Errorf("%s: same manifest digest", name)
		}
	}
	// The gate-3 digest still names the schemas (the seed's sketch hashes a constant there).
	halt1 := negotiate.Evaluate(d, negotiate.Agreement{})
	halt2 := negotiate.Evaluate(dm, negotiate.Agreement{})
	if halt1.Verdict != negotiate.NegotiationRequired || halt1.Digest == halt2.Digest {
		t.Errorf("gate 3 digests: %s %s", halt1.Digest, halt2.Digest)
	}
}

func TestParseProtocolAndVerdict(t *testing.T) {
	for _, p := range append(negotiate.Protocols(), negotiate.NoProtocol) {
		got, err := negotiate.ParseProtocol(p.String())
		if err != nil || got != p {
			t.Errorf("ParseProtocol(%q) = %v, %v", p, got, err)
		}
	}
	if _, err := negotiate.ParseProtocol("transform_all"); !errors.Is(err, &negotiate.Error{Code: negotiate.CodeInvalid, Rule: negotiate.RuleProtocolName}) {
		t.Errorf("lower case: %v", err)
	}
	for _, v := range []negotiate.Verdict{negotiate.Compatible, negotiate.TransformationRequired, negotiate.NegotiationRequired, negotiate.BestEffortAllowed} {
		if got, ok := negotiate.ParseVerdict(v.String()); !ok || got != v {
			t.Errorf("ParseVerdict(%q)", v)
		}
	}
	if _, ok := negotiate.ParseVerdict(""); ok {
		t.Error("ParseVerdict(\"\") succeeded")
	}
}
