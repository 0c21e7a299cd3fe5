package console

import "github.com/beamagents/beamagents/internal/errs"

// Code is a stable error code of this package.
type Code string

// Codes.
const (
	CodeConfig  Code = "console_config_invalid" // options or flags are unusable
	CodeStore   Code = "console_store_failed"   // the embedded store failed
	CodeInput   Code = "console_input_invalid"  // an output file or message does not decode
	CodeRefused Code = "console_refused"        // a request refused (identity, origin, token)
	CodeRedrive Code = "console_redrive_failed" // a redrive could not write or publish
)

// Error is a typed error of this package: "console: CODE[: DETAIL][: CAUSE]".
type Error = errs.Error[Code]

// Sentinels for errors.Is.
var (
	ErrConfig  = &Error{Code: CodeConfig}
	ErrStore   = &Error{Code: CodeStore}
	ErrInput   = &Error{Code: CodeInput}
	ErrRefused = &Error{Code: CodeRefused}
	ErrRedrive = &Error{Code: CodeRedrive}
)
