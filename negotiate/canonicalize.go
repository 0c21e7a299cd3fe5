package negotiate

import (
	"errors"

	"github.com/beamagents/beamagents/interaction"
)

// MaxInputBytes bounds provider text: whitespace and number tokens may make it longer than
// its canonical document (at most interaction.MaxDocumentBytes), but not without limit.
const MaxInputBytes = interaction.MaxProviderBytes

// Canonical is provider text made into the canonical value document of a schema.
type Canonical struct {
	// Value is the value the strict decoder admitted from Document.
	Value *interaction.Value
	// Document is the canonical value document, terminal LF included.
	Document []byte
	// Applied lists the canonicalizations the text needed (interaction.AppliedEnvelope, …),
	// sorted; empty when the text was already the canonical document.
	Applied []string
}

// Canonicalize reads the JSON text a provider returned under s's provider projection with
// [interaction.Schema.ReadProvider] and returns the canonical value document of the same
// value, admitted by s's strict decoder, or refuses with ErrCanonicalize under the rule the
// reading refused with. What is admitted and what is refused is in docs/negotiation.md.
func Canonicalize(s *interaction.Schema, text []byte) (*Canonical, error) {
	if s == nil {
		return nil, invalid(RuleSchemaNil, "Canonicalize needs a schema")
	}
	doc, applied, err := s.ReadProvider(text)
	if err != nil {
		var ie *interaction.Error
		errors.As(err, &ie)
		return nil, &Error{Code: CodeCanonicalize, Rule: Rule(ie.Rule), Path: ie.Path, Message: ie.Message}
	}
	v, err := s.Decode(doc)
	if err != nil {
		return nil, &Error{Code: CodeCanonicalize, Rule: RuleCanonicalDecoder, Path: "$", Message: "the strict decoder refused the canonical document", Err: err}
	}
	return &Canonical{Value: v, Document: doc, Applied: applied}, nil
}
