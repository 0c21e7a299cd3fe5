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
	// CodeIngest: an event POSTed to /api/events could not be taken (publishing failed).
	CodeIngest Code = "console_ingest_failed"
	// CodeUnavailable: the server is stopping and takes no more events (503).
	CodeUnavailable Code = "console_unavailable"
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
	// ErrUnavailable is what an IngestFunc returns once the server takes no more events.
	ErrUnavailable = &Error{Code: CodeUnavailable}
	ErrIngest      = &Error{Code: CodeIngest}
)
