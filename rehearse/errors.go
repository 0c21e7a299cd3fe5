package rehearse

import (
	"github.com/beamagents/beamagents/internal/errs"
	"github.com/beamagents/beamagents/model"
)

// Code is a stable error code of this package.
type Code string

// Codes.
const (
	// CodeState: a restored snapshot the candidate cannot decode, migrate or restore.
	CodeState Code = "state_unreadable"
	// CodeReport: a report line that is not a key or summary record of this package.
	CodeReport Code = "report_invalid"
)

// Error is a typed error of this package.
type Error = errs.Error[Code]

// Sentinels for errors.Is.
var (
	ErrState  = &Error{Code: CodeState}
	ErrReport = &Error{Code: CodeReport}
)

// ErrUnanswered is the model error of a request neither the baseline nor the live budget
// answers: the activation dead-letters as model_error and the key stops.
var ErrUnanswered = &model.Error{Code: model.CodeProvider, Detail: "rehearse: not in the baseline, and no live call left"}

// errStopped is the model error of a request of a key that has already stopped.
var errStopped = &model.Error{Code: model.CodeProvider, Detail: "rehearse: the key stopped"}
