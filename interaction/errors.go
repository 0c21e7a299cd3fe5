package interaction

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/beamagents/beamagents/internal/diag"
)

// Code is the stable diagnostic code of an [Error]. Match it with errors.Is against the Err*
// sentinels (or read [Error.Code] through errors.As), never on message text.
type Code string

// Diagnostic codes. Each identifier says what failed; the SPX-* strings are the codes that
// diagnostics, dead letters and receipts carry, and never change.
const (
	// CodeUnsupportedSource: the source is outside the admitted language (derivation).
	CodeUnsupportedSource Code = "SPX-Z202"
	// CodeDocumentTooLarge: a derived document exceeded its output byte budget (derivation).
	CodeDocumentTooLarge Code = "SPX-Z203"
	// CodeReplayMismatch: a supplied schema document is not the exact replay of its source.
	CodeReplayMismatch Code = "SPX-Z204"
	// CodeNotCanonical: a value document is not canonical JSON: invalid JSON, a malformed
	// envelope, or a canonical-replay mismatch (which covers every duplicate key).
	CodeNotCanonical Code = "SPX-Z205"
	// CodeNotAdmitted: a decode-time admission rule failed.
	CodeNotAdmitted Code = "SPX-Z206"
	// CodeTypeMismatch: a Go message given to CopyTo or ValueOf is not of the compiled type.
	CodeTypeMismatch Code = "interaction_type_mismatch"
)

// Rule is the stable id of the rule an [Error] reports, finer than its Code.
type Rule string

// Derivation rules (SPX-Z202).
const (
	RuleSourceDescriptor    Rule = "source.descriptor"    // the descriptor set does not build
	RuleRootNotFound        Rule = "root.not_found"       // no message carries the root type id
	RuleRootAmbiguous       Rule = "root.ambiguous"       // several messages carry the root type id
	RuleTypeIDMissing       Rule = "type.id.missing"      // a record or variant has no type_id
	RuleTypeIDInvalid       Rule = "type.id.invalid"      // a type_id is empty, too long or uses other characters
	RuleTypeIDDuplicate     Rule = "type.id.duplicate"    // two messages of the graph share a type_id
	RuleTypeWellKnown       Rule = "type.well_known"      // a google.protobuf message (Timestamp, Any, wrappers, …)
	RuleTypeExtensible      Rule = "type.extensible"      // the message declares extension ranges
	RuleTypeRecursive       Rule = "type.recursive"       // the type graph has a cycle
	RuleVariantShape        Rule = "type.variant.shape"   // a oneof beside other fields, or several oneofs
	RuleVariantEmpty        Rule = "type.variant.empty"   // a oneof without cases
	RuleCaseIDMissing       Rule = "type.case.id.missing" // a oneof member has no field_id
	RuleCaseIDInvalid       Rule = "type.case.id.invalid" // a case field_id is malformed
	RuleCaseIDDuplicate     Rule = "type.case.id.duplicate"
	RuleCaseNotMessage      Rule = "type.case.not_message" // a oneof member is not a message
	RuleCasePayload         Rule = "type.case.payload"     // a case payload is itself a variant
	RuleFieldIDMissing      Rule = "type.field.id.missing"
	RuleFieldIDInvalid      Rule = "type.field.id.invalid"
	RuleFieldIDDuplicate    Rule = "type.field.id.duplicate"
	RuleFieldRepeated       Rule = "type.field.repeated"
	RuleFieldMap            Rule = "type.field.map"
	RuleFieldFloat          Rule = "type.field.float"
	RuleFieldEnum           Rule = "type.field.enum"
	RuleFieldGroup          Rule = "type.field.group"
	RuleFieldRequired       Rule = "type.field.required" // proto2 required
	RuleFieldDefault        Rule = "type.field.default"  // an explicit default value
	RuleFieldBound          Rule = "type.field.bound"    // max_bytes/minimum/maximum malformed or misplaced
	RuleGraphMaxTypes       Rule = "graph.max_types"
	RuleGraphMaxDepth       Rule = "graph.max_depth"
	RulePresentedVariant    Rule = "presented.variant"     // a presented schema reaches a variant (CompilePresented)
	RuleSchemaDocumentBytes Rule = "schema_document_bytes" // SPX-Z203
	RuleProviderSchemaBytes Rule = "provider_schema_bytes" // SPX-Z203
	RuleBundleReplay        Rule = "bundle.replay"         // SPX-Z204
)

// Decoding rules (SPX-Z205 and SPX-Z206).
const (
	RuleDocumentBytes        Rule = "document_bytes"         // Z206: over MaxDocumentBytes
	RuleUTF8                 Rule = "utf8"                   // Z206: not UTF-8
	RuleBOM                  Rule = "bom"                    // Z205: starts with a byte order mark
	RuleLineEnding           Rule = "line_ending"            // Z205: not exactly one terminal LF, or a CR
	RuleJSON                 Rule = "json"                   // Z205: not one JSON value
	RuleEnvelope             Rule = "envelope"               // Z205: malformed envelope shape
	RuleEnvelopeSchema       Rule = "envelope.schema"        // Z206
	RuleEnvelopeRootTypeID   Rule = "envelope.root_type_id"  // Z206
	RuleEnvelopeSchemaDigest Rule = "envelope.schema_digest" // Z206
	RuleFieldsMissing        Rule = "value.fields.missing"   // Z206
	RuleFieldsUnknown        Rule = "value.fields.unknown"   // Z206
	RuleCase                 Rule = "value.case"             // Z206
	RuleRepresentation       Rule = "value.representation"   // Z206
	RuleIntegerRange         Rule = "value.integer_range"    // Z206
	RuleStringBytes          Rule = "value.string_bytes"     // Z206
	RuleBytesLength          Rule = "value.bytes_length"     // Z206
	RuleBytesElement         Rule = "value.bytes_element"    // Z206
	RuleMaxDepth             Rule = "value.max_depth"        // Z206
	// Provider text (ReadProvider) adds these to the rules above.
	RuleInputBytes      Rule = "input_bytes"            // Z206: over MaxProviderBytes
	RuleDuplicateKey    Rule = "duplicate_key"          // Z205: an object names a member twice
	RuleNull            Rule = "value.null"             // Z206: null where a value is required
	RuleIntegerFraction Rule = "value.integer_fraction" // Z206: an integer written with a fraction
	RuleIntegerExponent Rule = "value.integer_exponent" // Z206: an integer written with an exponent
	RuleIntegerSyntax   Rule = "value.integer_syntax"   // Z206: a decimal string that is not an integer
	RuleCanonical       Rule = "canonical"              // Z205: not the canonical replay
	RuleDescriptor      Rule = "descriptor"             // type mismatch in CopyTo/ValueOf
)

// Error is the typed error of this package. Derivation errors name the protobuf Element
// (a full name); decoding errors name the JSON Path of the offending value, for example
// $.value.fields["shop.reply.text"].
type Error struct {
	Code    Code
	Rule    Rule
	Path    string
	Element string
	Message string
}

// Error renders the one-line diagnostic "CODE rule: where: message". It never contains a
// line break, whatever the input that caused it.
func (e *Error) Error() string {
	return diag.Line(string(e.Code), string(e.Rule), e.Path+e.Element, e.Message)
}

// Is reports whether target is an *Error with the same Code and, when the target names a
// Rule, the same Rule: errors.Is(err, ErrNotAdmitted) or
// errors.Is(err, &Error{Code: CodeNotAdmitted, Rule: RuleUTF8}).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && diag.Match(e.Code, e.Rule, t.Code, t.Rule)
}

// Sentinels for errors.Is.
var (
	ErrUnsupportedSource = &Error{Code: CodeUnsupportedSource}
	ErrDocumentTooLarge  = &Error{Code: CodeDocumentTooLarge}
	ErrReplayMismatch    = &Error{Code: CodeReplayMismatch}
	ErrNotCanonical      = &Error{Code: CodeNotCanonical}
	ErrNotAdmitted       = &Error{Code: CodeNotAdmitted}
	ErrTypeMismatch      = &Error{Code: CodeTypeMismatch}
)

func deriveErr(rule Rule, d protoreflect.Descriptor, format string, args ...any) *Error {
	e := &Error{Code: CodeUnsupportedSource, Rule: rule, Message: fmt.Sprintf(format, args...)}
	if d != nil {
		e.Element = string(d.FullName())
	}
	return e
}

func decodeErr(code Code, rule Rule, path, format string, args ...any) *Error {
	return &Error{Code: code, Rule: rule, Path: path, Message: fmt.Sprintf(format, args...)}
}
