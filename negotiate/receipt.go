package negotiate

import (
	"errors"
	"strconv"
	"strings"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/interaction/stream"
	"github.com/beamagents/beamagents/internal/canonjson"
	"github.com/beamagents/beamagents/tracing"
)

// ReceiptFormat names the canonical receipt document a receipt digest is computed over.
const ReceiptFormat = "beam_agents.negotiate-receipt.v1"

// Trace attribute keys of a receipt, named in package tracing with every other trace
// attribute. Attributes always carries every key, so a reader never has to tell an absent
// key from an empty value.
const (
	AttrProducerDigest  = tracing.AttrConformanceProducerDigest
	AttrProducerCase    = tracing.AttrConformanceProducerCase
	AttrReceiverDigest  = tracing.AttrConformanceReceiverDigest
	AttrProtocol        = tracing.AttrConformanceProtocol
	AttrVerdict         = tracing.AttrConformanceVerdict
	AttrManifestDigest  = tracing.AttrConformanceManifestDigest
	AttrDeltaDigest     = tracing.AttrConformanceDeltaDigest
	AttrConforming      = tracing.AttrConformanceConforming
	AttrTransformations = tracing.AttrConformanceTransformations
	AttrWarnings        = tracing.AttrConformanceWarnings
	AttrInputSHA256     = tracing.AttrConformanceInputSHA256
	AttrOutputSHA256    = tracing.AttrConformanceOutputSHA256
	AttrReason          = tracing.AttrConformanceReason
	AttrReceiptDigest   = tracing.AttrConformanceReceiptDigest
)

// Receipt is the conformance record of one output that crossed (or failed to cross) a
// negotiated boundary: enough for the receiver to
// accept, warn or reject without re-deriving anything. It is deterministic: the same output
// at the same boundary gives the same receipt, byte for byte.
type Receipt struct {
	ProducerDigest string
	ProducerCase   string
	ReceiverDigest string
	Protocol       Protocol // the protocol in force
	Verdict        Verdict
	ManifestDigest string
	DeltaDigest    string
	Conforming     bool
	// Transformations applied to this output, sorted: at a schema boundary "drop:ID",
	// "move:FROM->TO" and "narrow:ID"; at a model boundary the canonicalizations (see
	// Canonical.Applied).
	Transformations []string
	// Warnings the receiver accepted under BEST_EFFORT for this output, sorted:
	// "nullability:ID" for each conflicting field the output carried.
	Warnings []string
	// InputSHA256 is "sha256:<hex>" of the producer's bytes (the provider text, or the
	// producer's canonical document); OutputSHA256 of the admitted output bytes ("" when
	// refused).
	InputSHA256, OutputSHA256 string
	// Reason is "CODE rule" of a refusal ("" when conforming).
	Reason string
}

// Disposition is what a receiver does with an output, read from its receipt.
type Disposition uint8

// Dispositions.
const (
	Reject Disposition = iota + 1 // non-conforming
	Warn                          // conforming under best effort, with warnings
	Accept                        // conforming
)

func (d Disposition) String() string {
	switch d {
	case Reject:
		return "reject"
	case Warn:
		return "warn"
	case Accept:
		return "accept"
	}
	return "invalid"
}

// Disposition tells the receiver what to do without re-deriving anything.
func (r *Receipt) Disposition() Disposition {
	switch {
	case !r.Conforming:
		return Reject
	case r.Verdict == BestEffortAllowed || len(r.Warnings) > 0:
		return Warn
	}
	return Accept
}

// Check verifies that output is the exact output this receipt was issued for and that it
// conforms.
func (r *Receipt) Check(output []byte) error {
	if !r.Conforming {
		return newErr(CodeRefused, RuleNonConforming, "", "the receipt marks the output non-conforming: %s", r.Reason)
	}
	if got := canonjson.Digest(outputDomain, output); got != r.OutputSHA256 {
		return invalid(RuleReceiptOutput, "the output's SHA-256 is %s; the receipt names %s", got, r.OutputSHA256)
	}
	return nil
}

// Digest returns "sha256:<hex>" over the canonical receipt document.
func (r *Receipt) Digest() string {
	// Every receipt of an admitted output is digested for its trace event: a receipt's
	// document (three digests, two hashes, keys) fits the stack buffer, so the digest
	// string is the only allocation.
	var buf [receiptBuffer]byte
	return canonjson.Digest(receiptDomain, r.appendDocument(buf[:0]))
}

// receiptBuffer holds a receipt document without lists or a long reason.
const receiptBuffer = 1024

// Document returns the canonical receipt document (no line break).
func (r *Receipt) Document() []byte { return r.appendDocument(make([]byte, 0, 768)) }

// appendDocument appends the canonical receipt document: the canonjson.Object of its members
// in the order below, written directly rather than through the generic model (boxed values)
// because every admitted output digests one. The receipt tests pin it to the generic
// rendering.
func (r *Receipt) appendDocument(dst []byte) []byte {
	dst = append(dst, `{"schema":`...)
	dst = canonjson.AppendString(dst, ReceiptFormat)
	dst = appendMember(dst, "producer_digest", r.ProducerDigest)
	dst = appendMember(dst, "producer_case", r.ProducerCase)
	dst = appendMember(dst, "receiver_digest", r.ReceiverDigest)
	dst = appendMember(dst, "protocol", r.Protocol.String())
	dst = appendMember(dst, "verdict", r.Verdict.String())
	dst = appendMember(dst, "manifest_digest", r.ManifestDigest)
	dst = appendMember(dst, "delta_digest", r.DeltaDigest)
	dst = strconv.AppendBool(append(dst, `,"conforming":`...), r.Conforming)
	dst = canonjson.AppendStrings(append(dst, `,"transformations":`...), r.Transformations)
	dst = canonjson.AppendStrings(append(dst, `,"warnings":`...), r.Warnings)
	dst = appendMember(dst, "input_sha256", r.InputSHA256)
	dst = appendMember(dst, "output_sha256", r.OutputSHA256)
	dst = appendMember(dst, "reason", r.Reason)
	return append(dst, '}')
}

// appendMember appends ,"key":value for a key that needs no escaping.
func appendMember(dst []byte, key, value string) []byte {
	dst = append(append(append(dst, `,"`...), key...), `":`...)
	return canonjson.AppendString(dst, value)
}

// Attributes renders the receipt as trace attributes under the beam_agents.conformance.*
// keys; lists are comma-separated (stable ids and the names used never contain a comma).
func (r *Receipt) Attributes() map[string]string {
	m := make(map[string]string, len(receiptKeys))
	r.PutAttributes(m)
	return m
}

// PutAttributes writes the receipt's trace attributes into m, as Attributes returns them,
// for a caller that is building an event's attributes anyway.
func (r *Receipt) PutAttributes(m map[string]string) {
	m[AttrProducerDigest] = r.ProducerDigest
	m[AttrProducerCase] = r.ProducerCase
	m[AttrReceiverDigest] = r.ReceiverDigest
	m[AttrProtocol] = r.Protocol.String()
	m[AttrVerdict] = r.Verdict.String()
	m[AttrManifestDigest] = r.ManifestDigest
	m[AttrDeltaDigest] = r.DeltaDigest
	m[AttrConforming] = boolText(r.Conforming)
	m[AttrTransformations] = strings.Join(r.Transformations, ",")
	m[AttrWarnings] = strings.Join(r.Warnings, ",")
	m[AttrInputSHA256] = r.InputSHA256
	m[AttrOutputSHA256] = r.OutputSHA256
	m[AttrReason] = r.Reason
	m[AttrReceiptDigest] = r.Digest()
}

// ReceiptFromAttributes reads a receipt back from trace attributes (other keys are ignored)
// and checks its receipt digest, so a receiver downstream of the trace can rely on it
// without the schemas. The digest makes a receipt tamper-evident, not authentic: sign the
// trace or the intent that carries it for that.
func ReceiptFromAttributes(attrs map[string]string) (*Receipt, error) {
	for _, k := range receiptKeys {
		if _, ok := attrs[k]; !ok {
			return nil, invalid(RuleReceiptAttributes, "missing attribute %s", k)
		}
	}
	r := &Receipt{
		ProducerDigest: attrs[AttrProducerDigest], ProducerCase: attrs[AttrProducerCase],
		ReceiverDigest: attrs[AttrReceiverDigest], ManifestDigest: attrs[AttrManifestDigest],
		DeltaDigest: attrs[AttrDeltaDigest], Conforming: attrs[AttrConforming] == "true",
		Transformations: splitList(attrs[AttrTransformations]), Warnings: splitList(attrs[AttrWarnings]),
		InputSHA256: attrs[AttrInputSHA256], OutputSHA256: attrs[AttrOutputSHA256], Reason: attrs[AttrReason],
	}
	var err error
	var ok bool
	if r.Protocol, err = ParseProtocol(attrs[AttrProtocol]); err != nil {
		return nil, invalid(RuleReceiptAttributes, "%s: %s is not a protocol", AttrProtocol, canonjson.Quote(attrs[AttrProtocol], 64))
	}
	if r.Verdict, ok = ParseVerdict(attrs[AttrVerdict]); !ok {
		return nil, invalid(RuleReceiptAttributes, "%s: %s is not a verdict", AttrVerdict, canonjson.Quote(attrs[AttrVerdict], 64))
	}
	if c := attrs[AttrConforming]; c != "true" && c != "false" {
		return nil, invalid(RuleReceiptAttributes, "%s: %s is not true or false", AttrConforming, canonjson.Quote(c, 64))
	}
	if got, want := r.Digest(), attrs[AttrReceiptDigest]; got != want {
		return nil, invalid(RuleReceiptDigest, "the attributes digest to %s, not to the %s they name", got, canonjson.Quote(want, 80))
	}
	return r, nil
}

var receiptKeys = []string{
	AttrProducerDigest, AttrProducerCase, AttrReceiverDigest, AttrProtocol, AttrVerdict, AttrManifestDigest,
	AttrDeltaDigest, AttrConforming, AttrTransformations, AttrWarnings, AttrInputSHA256, AttrOutputSHA256,
	AttrReason, AttrReceiptDigest,
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// receipt starts the receipt of one output at a schema boundary.
func (b *Boundary) receipt(input []byte) *Receipt {
	m := b.manifest
	return &Receipt{
		ProducerDigest: m.ProducerDigest, ProducerCase: m.ProducerCase, ReceiverDigest: m.ReceiverDigest,
		Protocol: m.Protocol, Verdict: m.Verdict, ManifestDigest: m.Digest, DeltaDigest: m.DeltaDigest,
		InputSHA256: canonjson.Digest(outputDomain, input),
	}
}

// conforming completes a receipt for an admitted output.
func (r *Receipt) conforming(v *interaction.Value, doc []byte) (Outcome, error) {
	r.Conforming, r.OutputSHA256 = true, canonjson.Digest(outputDomain, doc)
	return Outcome{Value: v, Document: doc, Receipt: r}, nil
}

// refused completes a receipt for a refused output; the transformations and warnings of a
// refused output are not recorded, since nothing crossed.
func (r *Receipt) refused(err error) (Outcome, error) {
	r.Conforming, r.Transformations, r.Warnings = false, nil, nil
	r.Reason = reasonOf(err)
	return Outcome{Receipt: r}, err
}

// reasonOf renders "CODE rule" of a typed error.
func reasonOf(err error) string {
	if e := (*stream.Refusal)(nil); errors.As(err, &e) {
		return string(e.Code)
	}
	if e := (*Error)(nil); errors.As(err, &e) {
		return string(e.Code) + " " + string(e.Rule)
	}
	if e := (*interaction.Error)(nil); errors.As(err, &e) {
		return string(e.Code) + " " + string(e.Rule)
	}
	return "error"
}
