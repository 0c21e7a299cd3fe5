package protobind

import "github.com/beamagents/beamagents/internal/diag"

// Code is the stable code of an [Error]; match it with errors.Is against the Err* sentinels.
type Code string

// Error codes.
const (
	// CodeSource: a named file or directory cannot be read, lies outside the import root, or
	// holds no .proto file.
	CodeSource Code = "proto_source"
	// CodeCompile: a source does not compile (syntax, an unresolved import or name, a bad
	// option).
	CodeCompile Code = "proto_compile"
	// CodeGenerate: protoc-gen-go refuses the compiled files (no go_package, an output path
	// outside the module, an option it does not know).
	CodeGenerate Code = "proto_generate"
)

// Error is the typed error of this package. Where names the file, and for a compile error the
// position in it, "path/to/file.proto:LINE:COL".
type Error struct {
	Code    Code
	Where   string
	Message string
}

// Error renders one line: "where: message".
func (e *Error) Error() string {
	if e.Where == "" {
		return diag.OneLine(e.Message)
	}
	return diag.OneLine(e.Where + ": " + e.Message)
}

// Is reports whether target is an *Error with the same Code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinels for errors.Is.
var (
	ErrSource   = &Error{Code: CodeSource}
	ErrCompile  = &Error{Code: CodeCompile}
	ErrGenerate = &Error{Code: CodeGenerate}
)
