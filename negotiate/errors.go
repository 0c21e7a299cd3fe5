package negotiate

import (
	"fmt"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/diag"
)

// Code is the stable code of an [Error]. Match it with errors.Is against the Err* sentinels
// (or read [Error.Code] through errors.As), never on message text.
type Code string

// Error codes.
const (
	// CodeInvalid: the arguments of a negotiation are unusable (a nil schema, a move or drop
	// naming nothing, a binding naming no case, a value of another case).
	CodeInvalid Code = "negotiate_invalid"
	// CodeNegotiationRequired: the delta blocks and no protocol was agreed (gate 3).
	CodeNegotiationRequired Code = "negotiation_required"
	// CodeFailFast: FAIL_FAST met a non-empty delta, or a model output that is not exactly
	// its canonical document.
	CodeFailFast Code = "negotiate_fail_fast"
	// CodeUntransformable: the protocol requires exact transformation and the delta holds
	// entries that no lossless transformation resolves.
	CodeUntransformable Code = "negotiate_untransformable"
	// CodeRefused: one output cannot be made to conform to the receiver's schema.
	CodeRefused Code = "conformance_refused"
	// CodeCanonicalize: provider text is not a value of the schema in any admitted dialect.
	CodeCanonicalize Code = "canonicalization_refused"
)

// Rule is the stable id of the rule an [Error] reports, finer than its Code.
type Rule string

// Rules of CodeInvalid.
const (
	RuleSchemaNil      Rule = "schema.nil"      // a nil schema or value
	RuleMoveUnknown    Rule = "move.unknown"    // a move names no member of the producer
	RuleMoveTarget     Rule = "move.target"     // a move's target is not a member of the receiver there
	RuleMoveCollision  Rule = "move.collision"  // two producer members land on one receiver member
	RuleDropNotExtra   Rule = "drop.not_extra"  // a drop names no extra field of the delta
	RuleBindingCase    Rule = "binding.case"    // a binding names no case of the proposal
	RuleBindingArgs    Rule = "binding.args"    // a tool's argument schema is not a record
	RuleBindingValue   Rule = "binding.value"   // a value of another case than the binding's
	RuleProtocolName   Rule = "protocol.name"   // not a protocol name
	RuleModelAgreement Rule = "agreement.model" // moves or drops at the model boundary
	// Receipts read back from trace attributes.
	RuleReceiptAttributes Rule = "receipt.attributes" // a missing or malformed attribute
	RuleReceiptDigest     Rule = "receipt.digest"     // the attributes do not match their digest
	RuleReceiptOutput     Rule = "receipt.output"     // the output is not the one the receipt names
)

// RuleDelta is the rule of every build-time refusal (CodeNegotiationRequired, CodeFailFast,
// CodeUntransformable): the error's Entries hold the delta entries behind it.
const RuleDelta Rule = "delta"

// Rules of CodeRefused (one output at a schema boundary).
const (
	RuleMissingField   Rule = "missing_field"        // the receiver requires a field the producer lacks
	RuleExtraField     Rule = "extra_field"          // an extra field nobody declared droppable
	RuleUnknownCase    Rule = "unknown_case"         // the output's case is not a case of the receiver
	RuleTypeMismatch   Rule = "type_mismatch"        // no value of the producer's type is one of the receiver's
	RuleNarrowInteger  Rule = "narrow.integer_range" // the integer lies outside the receiver's range
	RuleNarrowString   Rule = "narrow.string_bytes"  // the string is longer than the receiver's bound
	RuleNarrowBytes    Rule = "narrow.bytes_length"  // the bytes are longer than the receiver's bound
	RuleReceiverDecode Rule = "receiver.decode"      // the receiver's strict decoder refused (Err holds why)
	RuleNonConforming  Rule = "non_conforming"       // a receipt marks the output non-conforming
)

// Rules of CodeCanonicalize (provider text at the model boundary) and CodeFailFast per output:
// the reading's rules are interaction's own (see docs/interaction.md), so a refusal names the
// same rule whichever package reports it.
const (
	RuleInputBytes            = Rule(interaction.RuleInputBytes)      // more than MaxInputBytes
	RuleUTF8                  = Rule(interaction.RuleUTF8)            // not UTF-8
	RuleJSON                  = Rule(interaction.RuleJSON)            // not one JSON value (or nested deeper than any value)
	RuleDuplicateKey          = Rule(interaction.RuleDuplicateKey)    // an object names a member twice
	RuleEnvelope              = Rule(interaction.RuleEnvelope)        // an envelope that is malformed or names another schema
	RuleRepresentation        = Rule(interaction.RuleRepresentation)  // a JSON type the field's representation never takes
	RuleNull                  = Rule(interaction.RuleNull)            // null where a value is required; nothing is filled in
	RuleCase                  = Rule(interaction.RuleCase)            // a variant value without a case of the variant
	RuleFieldsUnknown         = Rule(interaction.RuleFieldsUnknown)   // a member the type does not declare
	RuleFieldsMissing         = Rule(interaction.RuleFieldsMissing)   // a declared field is absent; nothing is filled in
	RuleIntegerFraction       = Rule(interaction.RuleIntegerFraction) // an integer written with a fraction
	RuleIntegerExponent       = Rule(interaction.RuleIntegerExponent) // an integer written with an exponent
	RuleIntegerSyntax         = Rule(interaction.RuleIntegerSyntax)   // a decimal string that is not an integer
	RuleIntegerRange          = Rule(interaction.RuleIntegerRange)    // outside the field's bounds; never clamped
	RuleStringBytes           = Rule(interaction.RuleStringBytes)     // a string over the field's UTF-8 byte bound
	RuleBytesLength           = Rule(interaction.RuleBytesLength)     // a bytes array over the field's bound
	RuleBytesElement          = Rule(interaction.RuleBytesElement)    // a bytes element that is not an integer 0..255
	RuleDocumentBytes         = Rule(interaction.RuleDocumentBytes)   // the canonical document would exceed its bound
	RuleNotCanonical     Rule = "not_canonical"                       // not the exact canonical document (Err holds why)
	RuleCanonicalDecoder Rule = "decoder"                             // the strict decoder refused the canonical result
)

// Error is the typed error of this package. Path is the JSON path of the offending value
// (canonicalization and conveyance); Entries are the delta entries behind a build-time
// refusal and Manifest the gates' record of it (both schema digests included); Err is an
// underlying interaction error, if any.
type Error struct {
	Code     Code
	Rule     Rule
	Path     string
	Message  string
	Entries  []Entry
	Manifest *Manifest
	Err      error
}

// Error renders the one-line diagnostic "CODE rule: path: message". A build-time refusal's
// message lists its delta entries. It never contains a line break, whatever the input.
func (e *Error) Error() string {
	msg := e.Message
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return diag.Line(string(e.Code), string(e.Rule), e.Path, msg)
}

// Unwrap returns the underlying error (an *interaction.Error, for example), or nil.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same Code and, when the target names a
// Rule, the same Rule: errors.Is(err, ErrRefused) or
// errors.Is(err, &Error{Code: CodeRefused, Rule: RuleMissingField}).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && diag.Match(e.Code, e.Rule, t.Code, t.Rule)
}

// Sentinels for errors.Is.
var (
	ErrInvalid             = &Error{Code: CodeInvalid}
	ErrNegotiationRequired = &Error{Code: CodeNegotiationRequired}
	ErrFailFast            = &Error{Code: CodeFailFast}
	ErrUntransformable     = &Error{Code: CodeUntransformable}
	ErrRefused             = &Error{Code: CodeRefused}
	ErrCanonicalize        = &Error{Code: CodeCanonicalize}
)

func newErr(code Code, rule Rule, path, format string, args ...any) *Error {
	return &Error{Code: code, Rule: rule, Path: path, Message: fmt.Sprintf(format, args...)}
}

func invalid(rule Rule, format string, args ...any) *Error {
	return newErr(CodeInvalid, rule, "", format, args...)
}
