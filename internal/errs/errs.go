package errs

import (
	"reflect"
	"strings"
)

// Error is a typed error with a stable code.
type Error[C ~string] struct {
	Code   C
	Detail string
	Err    error
}

func (e *Error[C]) Error() string {
	s := pkg[C]() + ": " + string(e.Code)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *Error[C]) Unwrap() error { return e.Err }

// Is matches an *Error of the same code type with the same code.
func (e *Error[C]) Is(target error) bool {
	t, ok := target.(*Error[C])
	return ok && t.Code == e.Code
}

const module = "github.com/beamagents/beamagents/"

// pkg names C's package by its path inside the module.
func pkg[C ~string]() string {
	return strings.TrimPrefix(reflect.TypeFor[C]().PkgPath(), module)
}
