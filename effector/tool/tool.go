package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/negotiate"
)

// Call is one tool call as a tool sees it.
type Call struct {
	IntentID  string
	EntityKey []byte
	Tool      string
	// Args is the presented argument object (property names; see Present).
	Args json.RawMessage
}

// Tool executes calls. Implementations must be safe for concurrent use.
type Tool interface {
	// Name is the tool name intents carry.
	Name() string
	// Args is the declared argument schema (its root must be a record).
	Args() *interaction.Schema
	// Invoke runs one call and returns the result payload. An error is the tool's failure
	// (a ToolResult ERROR); it should be idempotent on c.IntentID.
	Invoke(ctx context.Context, c Call) ([]byte, error)
}

// Negotiated is implemented by tools that accept arguments from a producer schema other than
// their own under an agreement (field moves, drops). Without it the agreement is
// TRANSFORM_ALL with no moves.
type Negotiated interface {
	Agreement() negotiate.Agreement
}

// AgreementOf returns t's agreement.
func AgreementOf(t Tool) negotiate.Agreement {
	if n, ok := t.(Negotiated); ok {
		return n.Agreement()
	}
	return negotiate.Agreement{Protocol: negotiate.TransformAll}
}

// Code is a stable error code of this package.
type Code string

// Codes.
const (
	CodeDeclaration Code = "tool_declaration_invalid" // a tool's declaration is unusable
	CodeArguments   Code = "tool_arguments_invalid"   // arguments the tool cannot take
	CodeFailed      Code = "tool_failed"              // the tool ran and failed
)

// Error is a typed error of this package.
type Error struct {
	Code Code
	Tool string
	// Field is the Go field (Type.Field.Nested…) a declaration by Struct refuses, if any.
	Field  string
	Detail string
	Err    error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: tool %s: %s", e.Code, e.Tool, e.Detail)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinels for errors.Is.
var (
	ErrDeclaration = &Error{Code: CodeDeclaration}
	ErrArguments   = &Error{Code: CodeArguments}
	ErrFailed      = &Error{Code: CodeFailed}
)

func declErr(tool string, err error, format string, args ...any) error {
	return &Error{Code: CodeDeclaration, Tool: tool, Detail: fmt.Sprintf(format, args...), Err: err}
}

// CheckArgs verifies that s can be a tool's argument schema: a record root.
func CheckArgs(name string, s *interaction.Schema) error {
	if s == nil {
		return declErr(name, nil, "no argument schema")
	}
	if s.Root().Kind() != interaction.Record {
		return declErr(name, nil, "argument schema root %s is not a record", s.RootTypeID())
	}
	return nil
}
