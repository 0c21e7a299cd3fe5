package errs_test

import (
	"errors"
	"io"
	"testing"

	"github.com/beamagents/beamagents/internal/errs"
)

type code string

type other string

func TestError(t *testing.T) {
	err := &errs.Error[code]{Code: "bad", Detail: "the detail", Err: io.EOF}
	for _, tc := range []struct {
		name   string
		target error
		want   bool
	}{
		{"same code", &errs.Error[code]{Code: "bad"}, true},
		{"same code, other detail", &errs.Error[code]{Code: "bad", Detail: "x"}, true},
		{"other code", &errs.Error[code]{Code: "worse"}, false},
		{"same code, other code type", &errs.Error[other]{Code: "bad"}, false},
		{"the cause", io.EOF, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errors.Is(err, tc.target); got != tc.want {
				t.Errorf("errors.Is = %v", got)
			}
		})
	}
	var as *errs.Error[code]
	if !errors.As(errors.Join(io.ErrUnexpectedEOF, err), &as) || as.Code != "bad" {
		t.Errorf("errors.As: %v", as)
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{err, "internal/errs_test: bad: the detail: EOF"},
		{&errs.Error[code]{Code: "bad"}, "internal/errs_test: bad"},
		{&errs.Error[code]{Code: "bad", Err: io.EOF}, "internal/errs_test: bad: EOF"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}
