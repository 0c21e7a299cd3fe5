package negotiate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/beamagents/beamagents/internal/canonjson"
)

// ManifestFormat names the canonical manifest document a manifest digest is computed over.
const ManifestFormat = "beam_agents.negotiate-manifest.v1"

// Protocol is the agreed way of handling a schema mismatch (the seed's negotiation protocol
// receipt). The zero value, NoProtocol, means none was agreed.
type Protocol uint8

// Protocols.
const (
	NoProtocol Protocol = iota
	// TransformAll: the producer's output is transformed exactly (drops, moves and
	// narrowings, all lossless); a boundary whose delta holds anything else is not built.
	TransformAll
	// BestEffort: the receiver accepts, with warnings, outputs that conform after the same
	// lossless transformations even though the delta holds unresolved entries; outputs that
	// still do not conform are refused one by one. Without the receiver's acceptance it is
	// held to TransformAll's rule.
	BestEffort
	// FailFast: nothing is transformed. A non-empty delta refuses to build the boundary, and
	// a model output is admitted only as its exact canonical document.
	FailFast
)

var protocolNames = [...]string{NoProtocol: "", TransformAll: "TRANSFORM_ALL", BestEffort: "BEST_EFFORT", FailFast: "FAIL_FAST"}

// String returns TRANSFORM_ALL, BEST_EFFORT, FAIL_FAST, or "" for NoProtocol.
func (p Protocol) String() string {
	if int(p) < len(protocolNames) {
		return protocolNames[p]
	}
	return "invalid"
}

// Protocols lists the three protocols in a fixed order.
func Protocols() []Protocol { return []Protocol{TransformAll, BestEffort, FailFast} }

// ParseProtocol reads a protocol name ("" reads as NoProtocol).
func ParseProtocol(s string) (Protocol, error) {
	for p, name := range protocolNames {
		if s == name {
			return Protocol(p), nil
		}
	}
	return NoProtocol, invalid(RuleProtocolName, "%s is not TRANSFORM_ALL, BEST_EFFORT or FAIL_FAST", canonjson.Quote(s, 64))
}

// Verdict is the outcome of the gates (the seed's schema verdict).
type Verdict uint8

// Verdicts.
const (
	Compatible             Verdict = iota + 1 // gates 1 and 2: proceed unchanged
	TransformationRequired                    // gate 5: transform per the protocol in force
	NegotiationRequired                       // gate 3: halt until a protocol is agreed
	BestEffortAllowed                         // gate 4: proceed, warnings travel with the output
)

var verdictNames = [...]string{Compatible: "SCHEMA_COMPATIBLE", TransformationRequired: "TRANSFORMATION_REQUIRED",
	NegotiationRequired: "NEGOTIATION_REQUIRED", BestEffortAllowed: "BEST_EFFORT_ALLOWED"}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) && verdictNames[v] != "" {
		return verdictNames[v]
	}
	return "invalid"
}

// ParseVerdict reads a verdict name.
func ParseVerdict(s string) (Verdict, bool) {
	for v, name := range verdictNames {
		if name != "" && s == name {
			return Verdict(v), true
		}
	}
	return 0, false
}

// Agreement is what producer and receiver agreed for one boundary. The zero value agrees on
// nothing: a boundary with a blocking delta then halts at gate 3, and a model output is
// admitted only as its exact canonical document.
type Agreement struct {
	Protocol Protocol
	// ReceiverAcceptsBestEffort is the receiver's consent to best-effort outputs (gate 4).
	ReceiverAcceptsBestEffort bool
	// AllowImplicit proceeds without a protocol as TRANSFORM_ALL instead of halting at gate 3
	// (the seed's policy without require_negotiation).
	AllowImplicit bool
	// Moves maps producer stable ids to receiver ids (see DeltaOptions.Moves).
	Moves map[string]string
	// Drop lists the producer fields (by stable id) the receiver agreed may be dropped. Only
	// fields the delta reports as extra may be named; no other extra field is ever dropped.
	Drop []string
}

// Manifest is the result of the gates for one boundary, with a digest over everything that
// decided it.
type Manifest struct {
	Verdict Verdict
	// Gate is the gate (1-5, the seed's order) that decided.
	Gate int
	// Protocol is the protocol in force: the agreed one, TRANSFORM_ALL at gate 5 when none was
	// agreed and AllowImplicit is set, NoProtocol at gate 3.
	Protocol  Protocol
	Directive string
	// ProducerDigest and ReceiverDigest are the schema digests of the two sides (for a model
	// boundary, the producer is the provider dialect; see Admitter). ProducerCase is the case
	// a binding is scoped to.
	ProducerDigest, ProducerCase, ReceiverDigest string
	// DeltaDigest is the digest of the schema delta ("" at a model boundary, whose delta is
	// the per-output list of canonicalizations in each receipt).
	DeltaDigest string
	// Digest is "sha256:<hex>" over the canonical manifest document of all the above and the
	// agreement.
	Digest string
}

// gateInput is what the gates read: the seed's schema state and policy.
type gateInput struct {
	producerDigest, producerCase, receiverDigest, deltaDigest string
	empty                                                     bool    // the delta has no entry at all
	blocking                                                  []Entry // entries that keep an unchanged output from conforming
	// blockingNote replaces the entry counts in a directive when blocking is not a schema
	// delta (a model output's canonicalizations).
	blockingNote string
	agreement    Agreement
}

// Evaluate runs the gates for d under a.
//
//  1. identical: equal schema digests, root to root, and an empty delta → SCHEMA_COMPATIBLE;
//  2. no blocking entry → SCHEMA_COMPATIBLE;
//  3. no protocol and no AllowImplicit → NEGOTIATION_REQUIRED;
//  4. BEST_EFFORT with the receiver's consent → BEST_EFFORT_ALLOWED;
//  5. otherwise → TRANSFORMATION_REQUIRED under the agreed protocol (TRANSFORM_ALL if none).
//
// Gate 1 needs the empty delta as well as equal digests because presence, the source of
// nullability conflicts, is not part of a schema digest. Gate 2 counts extra fields, which
// the seed's sketch does not: every receiver here is closed, so an extra field alone refuses
// every output (the seed's strict mode rejection).
func Evaluate(d *SchemaDelta, a Agreement) Manifest {
	return evaluate(gateInput{
		producerDigest: d.producer.Digest(), producerCase: d.scope, receiverDigest: d.receiver.Digest(),
		deltaDigest: d.digest, empty: len(d.entries) == 0, blocking: d.Blocking(), agreement: a,
	})
}

func evaluate(in gateInput) Manifest {
	m := Manifest{ProducerDigest: in.producerDigest, ProducerCase: in.producerCase, ReceiverDigest: in.receiverDigest, DeltaDigest: in.deltaDigest}
	a := in.agreement
	switch {
	case in.producerDigest == in.receiverDigest && in.producerCase == "" && in.empty:
		m.Gate, m.Verdict, m.Protocol, m.Directive = 1, Compatible, a.Protocol, "PROCEED: schemas identical"
	case len(in.blocking) == 0 && in.blockingNote == "":
		m.Gate, m.Verdict, m.Protocol, m.Directive = 2, Compatible, a.Protocol, "PROCEED: no blocking delta, output compatible"
	case a.Protocol == NoProtocol && !a.AllowImplicit:
		m.Gate, m.Verdict, m.Directive = 3, NegotiationRequired, "HALT: "+in.summary()+" and no negotiation protocol"
	case a.Protocol == BestEffort && a.ReceiverAcceptsBestEffort:
		m.Gate, m.Verdict, m.Protocol, m.Directive = 4, BestEffortAllowed, BestEffort, "PROCEED: best effort allowed with warnings ("+in.summary()+")"
	default:
		m.Gate, m.Verdict, m.Protocol = 5, TransformationRequired, a.Protocol
		if m.Protocol == NoProtocol {
			m.Protocol = TransformAll
		}
		m.Directive = "ACTION: transform output per " + m.Protocol.String() + " (" + in.summary() + ")"
		if m.Protocol == FailFast {
			m.Directive = "HALT: FAIL_FAST transforms nothing (" + in.summary() + ")"
		}
	}
	m.Digest = digestOf(manifestDomain, m.document(a))
	return m
}

// summary counts the blocking entries by kind, in kind order.
func (in gateInput) summary() string {
	if in.blockingNote != "" {
		return in.blockingNote
	}
	counts := map[EntryKind]int{}
	for _, e := range in.blocking {
		counts[e.Kind]++
	}
	parts := []string{}
	for k := MissingField; k <= Moved; k++ {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
		}
	}
	return fmt.Sprintf("%d blocking delta entries: %s", len(in.blocking), strings.Join(parts, ", "))
}

func (m Manifest) document(a Agreement) []byte {
	drops := slices.Clone(a.Drop)
	slices.Sort(drops)
	return canonjson.Append(nil, canonjson.Object{
		{Key: "schema", Value: ManifestFormat},
		{Key: "producer_digest", Value: m.ProducerDigest},
		{Key: "producer_case", Value: m.ProducerCase},
		{Key: "receiver_digest", Value: m.ReceiverDigest},
		{Key: "delta_digest", Value: m.DeltaDigest},
		{Key: "agreed_protocol", Value: a.Protocol.String()},
		{Key: "receiver_accepts_best_effort", Value: a.ReceiverAcceptsBestEffort},
		{Key: "allow_implicit", Value: a.AllowImplicit},
		{Key: "drop", Value: stringArray(slices.Compact(drops))},
		{Key: "gate", Value: m.Gate},
		{Key: "verdict", Value: m.Verdict.String()},
		{Key: "protocol", Value: m.Protocol.String()},
	})
}
