package stream

import (
	"fmt"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/diag"
)

// Code is the closed vocabulary of stream refusals. Match it with errors.Is against the
// Err* sentinels, or read Refusal.Code; never match text.
type Code string

// Refusal codes.
const (
	CodeStart      Code = "STREAM-START"      // the document did not open with '{'
	CodeWhitespace Code = "STREAM-WHITESPACE" // raw whitespace or control byte outside a string (other than the terminal LF)
	CodeString     Code = "STREAM-STRING"     // unescaped control byte, unknown escape or bad \u hex digit in a string
	CodeBracket    Code = "STREAM-BRACKET"    // a '}' or ']' closing nothing or the wrong kind of container
	CodeUTF8       Code = "STREAM-UTF8"       // not UTF-8
	CodeDepth      Code = "STREAM-DEPTH"      // container nesting over MaxStreamDepth
	CodeTokens     Code = "STREAM-TOKENS"     // more than MaxStreamStringTokens string literals
	CodeBytes      Code = "STREAM-BYTES"      // more than MaxStreamBytes bytes
	CodeGrammar    Code = "STREAM-GRAMMAR"    // the schema's grammar refused a byte, or its work or stack bound
	CodeTrailing   Code = "STREAM-TRAILING"   // a byte after the terminal LF, or no LF right after the top-level value
	CodeTruncated  Code = "STREAM-TRUNCATED"  // Finish before the terminal LF
	CodeCancelled  Code = "STREAM-CANCELLED"  // Cancel
	CodeSemantic   Code = "STREAM-SEMANTIC"   // the whole-document decoder refused the complete document
)

// Codes returns the whole vocabulary.
func Codes() []Code {
	return []Code{CodeStart, CodeWhitespace, CodeString, CodeBracket, CodeUTF8, CodeDepth, CodeTokens,
		CodeBytes, CodeGrammar, CodeTrailing, CodeTruncated, CodeCancelled, CodeSemantic}
}

// Refusal is a terminal refusal: a code, a one-line message and the offset of the byte that
// proved the document wrong (for Finish and Cancel: the number of bytes received).
type Refusal struct {
	Code    Code
	Message string
	AtByte  int
	// Cause is the whole-document decoder's *interaction.Error for STREAM-SEMANTIC.
	Cause error
}

// Error renders "CODE at_byte=N: message", one line.
func (r *Refusal) Error() string {
	return fmt.Sprintf("%s at_byte=%d: %s", r.Code, r.AtByte, r.Message)
}

// Is reports whether target is a *Refusal with the same Code.
func (r *Refusal) Is(target error) bool {
	t, ok := target.(*Refusal)
	return ok && t.Code == r.Code
}

// Unwrap returns Cause, so errors.Is(err, interaction.ErrNotAdmitted) sees through STREAM-SEMANTIC.
func (r *Refusal) Unwrap() error { return r.Cause }

// Sentinels for errors.Is.
var (
	ErrStart      = &Refusal{Code: CodeStart}
	ErrWhitespace = &Refusal{Code: CodeWhitespace}
	ErrString     = &Refusal{Code: CodeString}
	ErrBracket    = &Refusal{Code: CodeBracket}
	ErrUTF8       = &Refusal{Code: CodeUTF8}
	ErrDepth      = &Refusal{Code: CodeDepth}
	ErrTokens     = &Refusal{Code: CodeTokens}
	ErrBytes      = &Refusal{Code: CodeBytes}
	ErrGrammar    = &Refusal{Code: CodeGrammar}
	ErrTrailing   = &Refusal{Code: CodeTrailing}
	ErrTruncated  = &Refusal{Code: CodeTruncated}
	ErrCancelled  = &Refusal{Code: CodeCancelled}
	ErrSemantic   = &Refusal{Code: CodeSemantic}
)

// State is the kind of an Outcome.
type State uint8

// Outcome states.
const (
	Incomplete State = iota // valid so far; more bytes are needed. Carries nothing.
	Accepted                // Finish admitted the document; carries the value.
	Refused                 // terminal refusal; carries the Refusal.
)

func (s State) String() string {
	return [...]string{"incomplete", "accepted", "refused"}[s]
}

// Outcome is the result of Push, Finish or Cancel. The zero Outcome is Incomplete; it is one
// word, so the common case of a push costs no more than returning a nil pointer.
type Outcome struct {
	t *terminal
}

type terminal struct {
	state   State
	value   *interaction.Value
	refusal *Refusal
}

// State returns the outcome's state.
func (o Outcome) State() State {
	if o.t == nil {
		return Incomplete
	}
	return o.t.state
}

// Value returns the admitted value of an Accepted outcome, nil otherwise.
func (o Outcome) Value() *interaction.Value {
	if o.t == nil {
		return nil
	}
	return o.t.value
}

// Refusal returns the refusal of a Refused outcome, nil otherwise.
func (o Outcome) Refusal() *Refusal {
	if o.t == nil {
		return nil
	}
	return o.t.refusal
}

// Err returns the refusal as an error, or nil.
func (o Outcome) Err() error {
	if r := o.Refusal(); r != nil {
		return r
	}
	return nil
}

func refused(code Code, at int, format string, args ...any) Outcome {
	msg := diag.OneLine(fmt.Sprintf(format, args...))
	return Outcome{&terminal{state: Refused, refusal: &Refusal{Code: code, Message: msg, AtByte: at}}}
}
