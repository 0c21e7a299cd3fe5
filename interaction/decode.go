package interaction

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Decode admits one untrusted value document, or refuses it with SPX-Z205 or SPX-Z206. It
// never panics, whatever the bytes, and does work linear in len(doc) bounded by
// MaxDocumentBytes. The steps, in order (the first failing step decides the diagnostic):
//
//  1. more than MaxDocumentBytes bytes: Z206 document_bytes, before any other work;
//  2. not UTF-8: Z206 utf8;
//  3. a byte order mark (Z205 bom), anything but exactly one terminal LF with no other LF
//     or CR (Z205 line_ending), or not one JSON value (Z205 json);
//  4. the envelope: not an object of exactly schema, root_type_id, schema_digest (strings)
//     and value (Z205 envelope); a schema, root_type_id or schema_digest other than this
//     schema's (Z206 envelope.schema, envelope.root_type_id, envelope.schema_digest);
//  5. the value against the type graph: container nesting deeper than 2*MaxDepth+1 (Z206
//     value.max_depth), then depth-first in declaration order: value.representation,
//     value.case, value.fields.unknown (in document order), value.fields.missing,
//     value.integer_range, value.string_bytes, value.bytes_length, value.bytes_element;
//  6. the canonical rendering of the decoded value must equal the document byte for byte
//     (Z205 canonical) — which also refuses every duplicate key, at any depth.
//
// Where a step reads an object member that occurs more than once it takes the last occurrence,
// the reading a generic JSON map gives; step 6 then refuses the document regardless.
func (s *Schema) Decode(doc []byte) (*Value, error) {
	if len(doc) > MaxDocumentBytes {
		return nil, tooLong()
	}
	return s.DecodeString(string(doc))
}

// DecodeString is Decode for a document held in a string (the admitted value keeps it as its
// canonical document without copying).
func (s *Schema) DecodeString(doc string) (*Value, error) {
	if len(doc) > MaxDocumentBytes {
		return nil, tooLong()
	}
	if !utf8.ValidString(doc) {
		return nil, decodeErr(CodeNotAdmitted, RuleUTF8, "$", "invalid UTF-8 at byte %d", invalidUTF8At(doc))
	}
	if v := s.recognize(doc); v != nil {
		return v, nil
	}
	return s.reference(doc)
}

func tooLong() error {
	return decodeErr(CodeNotAdmitted, RuleDocumentBytes, "$", "the document is longer than %d bytes", MaxDocumentBytes)
}

func invalidUTF8At(b string) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRuneInString(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// firstDifference returns the first offset at which a and b differ.
func firstDifference(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// lineEnding checks step 3's framing of text (valid UTF-8).
func lineEnding(text string) error {
	if strings.HasPrefix(text, "\uFEFF") {
		return decodeErr(CodeNotCanonical, RuleBOM, "$", "the document starts with a byte order mark")
	}
	if !strings.HasSuffix(text, "\n") {
		return decodeErr(CodeNotCanonical, RuleLineEnding, "$", "the document does not end with LF")
	}
	body := text[:len(text)-1]
	if i := strings.IndexAny(body, "\r\n"); i >= 0 {
		what := "LF"
		if body[i] == '\r' {
			what = "CR"
		}
		return decodeErr(CodeNotCanonical, RuleLineEnding, "$", "%s at byte %d; the only line break is the one terminal LF", what, i)
	}
	return nil
}

func itoa(i int) string { return strconv.Itoa(i) }
