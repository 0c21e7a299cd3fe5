package store

import "github.com/beamagents/beamagents/internal/errs"

// Code is a stable error code of this package.
type Code string

// Codes.
const (
	CodeFailed Code = "effector_store_failed"      // the store failed (I/O, connection, a corrupt record)
	CodeRef    Code = "effector_store_ref_invalid" // a store reference Open cannot use
)

// Error is a typed error of this package: "effector/store: CODE[: DETAIL][: CAUSE]".
// errors.Is matches on Code alone: errors.Is(err, ErrFailed).
type Error = errs.Error[Code]

// Sentinels for errors.Is.
var (
	ErrFailed = &Error{Code: CodeFailed}
	ErrRef    = &Error{Code: CodeRef}
)
