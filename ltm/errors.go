package ltm

import "github.com/beamagents/beamagents/internal/errs"

// Code is a stable error code of this package.
type Code string

// Codes.
const (
	// CodeStale: a Put or Delete whose seq is below the seq stored for its key (a value or a
	// tombstone); nothing was written.
	CodeStale Code = "ltm_stale"
	// CodeBounds: an entity, namespace, key, prefix, value or list limit over its bound.
	CodeBounds Code = "ltm_bounds"
	// CodeInvalid: an entry or argument that no bound admits (an empty entity or key, a
	// namespace or key that is not UTF-8, a negative seq, a limit below 1).
	CodeInvalid Code = "ltm_invalid"
	// CodeCorrupt: a stored record this build cannot read.
	CodeCorrupt Code = "ltm_corrupt"
	// CodeFailed: the backend failed (I/O, connection, timeout).
	CodeFailed Code = "ltm_failed"
	// CodeRef: a store reference Open cannot use.
	CodeRef Code = "ltm_ref_invalid"
)

// Error is a typed error of this package: "ltm: CODE[: DETAIL][: CAUSE]". errors.Is matches
// on Code alone: errors.Is(err, ErrStale).
type Error = errs.Error[Code]

// Sentinels for errors.Is.
var (
	ErrStale   = &Error{Code: CodeStale}
	ErrBounds  = &Error{Code: CodeBounds}
	ErrInvalid = &Error{Code: CodeInvalid}
	ErrCorrupt = &Error{Code: CodeCorrupt}
	ErrFailed  = &Error{Code: CodeFailed}
	ErrRef     = &Error{Code: CodeRef}
)
