package negotiate

import (
	"bytes"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/interaction/stream"
	"github.com/beamagents/beamagents/internal/canonjson"
)

// Admitter is the model boundary: the producer is a provider writing JSON in its own dialect
// of the schema's provider projection, the receiver is the schema's strict decoder. It admits
// a whole text (Admit) or a streamed one chunk by chunk (NewStream), with one Outcome. It is
// immutable and safe for concurrent use.
//
// Each output runs the gates on its own: a text that already is the canonical document needs
// nothing (gate 2, SCHEMA_COMPATIBLE, under every protocol); any other text is refused without
// a protocol (gate 3, NEGOTIATION_REQUIRED) and under FAIL_FAST, and is canonicalized under
// TRANSFORM_ALL and BEST_EFFORT (gate 5, or gate 4 with the receiver's consent — the strict
// decoder admits nothing more under best effort, so the two differ only in the verdict).
type Admitter struct {
	schema     *interaction.Schema
	dialect    string
	compatible Manifest // an output that needs nothing
	transform  Manifest // an output that needs canonicalization
	grammar    *stream.Grammar
	streamErr  error // why texts cannot be admitted push-style
}

// NewAdmitter returns the model boundary of s under a. Moves and drops do not apply to it:
// provider text is read by stable id, and an undeclared member is refused, never dropped.
func NewAdmitter(s *interaction.Schema, a Agreement) (*Admitter, error) {
	if s == nil {
		return nil, invalid(RuleSchemaNil, "an admitter needs a schema")
	}
	if len(a.Moves) > 0 || len(a.Drop) > 0 {
		return nil, invalid(RuleModelAgreement, "moves and drops do not apply at the model boundary")
	}
	m := &Admitter{schema: s, dialect: dialectDigest(s)}
	in := gateInput{producerDigest: m.dialect, receiverDigest: s.Digest(), agreement: a}
	m.compatible = evaluate(in)
	in.blockingNote = "the output is not its canonical document"
	m.transform = evaluate(in)
	m.grammar, m.streamErr = stream.Compile(s)
	return m, nil
}

// canonicalizes reports whether a text that is not its canonical document is canonicalized
// (TRANSFORM_ALL, BEST_EFFORT) rather than refused (FAIL_FAST, no protocol).
func (m *Admitter) canonicalizes() bool {
	return m.transform.Verdict != NegotiationRequired && m.transform.Protocol != FailFast
}

// dialectDigest identifies the provider dialect of s: "sha256:<hex>" over s's provider
// projection under a domain that names this package's canonicalization rules. It is the
// producer digest of every receipt at s's model boundary.
func dialectDigest(s *interaction.Schema) string {
	return canonjson.Digest(dialectDomain, s.ProviderJSONSchema())
}

// Schema returns the receiver's schema.
func (m *Admitter) Schema() *interaction.Schema { return m.schema }

// Manifests returns the manifest of an output that needs nothing and of one that needs
// canonicalization.
func (m *Admitter) Manifests() (compatible, transform Manifest) { return m.compatible, m.transform }

// Admit admits one provider text, returning the admitted value, its canonical document (the
// output bytes) and the receipt; on a refusal the Outcome holds only the non-conforming
// receipt. Refusals: ErrNegotiationRequired or ErrFailFast (rule not_canonical, wrapping the
// strict decoder's *interaction.Error) for a text that is not exactly canonical when no
// protocol allows canonicalization, ErrCanonicalize for a text canonicalization refuses.
func (m *Admitter) Admit(text []byte) (Outcome, error) {
	input := canonjson.Digest(outputDomain, text)
	if !m.canonicalizes() {
		v, err := m.schema.Decode(text)
		if err == nil {
			return m.unchanged(v, input), nil
		}
		code, msg := CodeFailFast, "FAIL_FAST admits only the exact canonical document"
		if m.transform.Verdict == NegotiationRequired {
			code, msg = CodeNegotiationRequired, "the text is not its canonical document and no protocol allows canonicalizing it"
		}
		return m.receipt(input, m.transform).refused(&Error{Code: code, Rule: RuleNotCanonical, Path: "$", Message: msg, Err: err})
	}
	// Text that is already the canonical document (a model answering exactly, or a replayed
	// answer) needs no canonicalization: the strict decoder admitting it proves that
	// canonicalizing it would change nothing, and it is several times cheaper.
	if v, err := m.schema.Decode(text); err == nil {
		return m.unchanged(v, input), nil
	}
	c, err := Canonicalize(m.schema, text)
	if err != nil {
		return m.receipt(input, m.transform).refused(err)
	}
	mf := m.transform
	if bytes.Equal(c.Document, text) {
		mf = m.compatible
	}
	rc := m.receipt(input, mf)
	rc.Transformations = c.Applied
	return rc.conforming(c.Value, c.Document)
}

// unchanged admits v, which the strict decoder read from a text whose digest is input. The
// decoder admits only the exact canonical document, so the output is the input byte for
// byte and its digest is the input's: no second hash.
func (m *Admitter) unchanged(v *interaction.Value, input string) Outcome {
	rc := m.receipt(input, m.compatible)
	rc.Conforming, rc.OutputSHA256 = true, input
	return Outcome{Value: v, Document: v.Canonical(), Receipt: rc}
}

func (m *Admitter) receipt(input string, mf Manifest) *Receipt {
	return &Receipt{
		ProducerDigest: mf.ProducerDigest, ReceiverDigest: mf.ReceiverDigest, Protocol: mf.Protocol,
		Verdict: mf.Verdict, ManifestDigest: mf.Digest, InputSHA256: input,
	}
}
