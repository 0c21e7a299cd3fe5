package pubsub

import "github.com/beamagents/beamagents/internal/errs"

// Code is the stable code of an Error.
type Code string

// Codes.
const (
	// CodeBadName: a flag is not a full resource name (projects/P/subscriptions/S or
	// projects/P/topics/T).
	CodeBadName Code = "bad_resource_name"
	// CodeMalformed: a message's data is not an AgentEnvelope in the encoding its
	// content-type attribute names, or the envelope is not actionable.
	CodeMalformed Code = "malformed_message"
	// CodeBadOptions: options that cannot work together.
	CodeBadOptions Code = "bad_options"
)

// Error is the package's typed error: "pubsub: CODE[: DETAIL][: CAUSE]". errors.Is matches
// on Code alone: errors.Is(err, &Error{Code: CodeMalformed}).
type Error = errs.Error[Code]
