package records

import "github.com/beamagents/beamagents/internal/errs"

// Code is a stable error code of this package.
type Code string

// Codes.
const (
	CodeWrongType Code = "file_wrong_type"  // the file holds records of another type
	CodeHeader    Code = "file_bad_header"  // the file opens with a broken header
	CodeFraming   Code = "file_bad_framing" // a record's length prefix is broken or cut
	CodeTooLarge  Code = "file_too_large"   // the file exceeds the reader's cap
	CodeEnvelope  Code = "envelope_invalid" // a record is no actionable AgentEnvelope
)

// Error is a typed error of this package.
type Error = errs.Error[Code]

// Sentinels for errors.Is.
var (
	ErrWrongType = &Error{Code: CodeWrongType}
	ErrHeader    = &Error{Code: CodeHeader}
	ErrFraming   = &Error{Code: CodeFraming}
	ErrTooLarge  = &Error{Code: CodeTooLarge}
	ErrEnvelope  = &Error{Code: CodeEnvelope}
)
