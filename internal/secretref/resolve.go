package secretref

import (
	"context"
	"os"
	"strings"
)

// The schemes of a reference besides Scheme: env:VAR names an environment variable, file:PATH
// a file.
const (
	SchemeEnv  = "env"
	SchemeFile = "file"
)

// Codes of the local schemes.
const (
	CodeNotSet     Code = "not_set"    // env:VAR names a variable that is unset or empty
	CodeUnreadable Code = "unreadable" // file:PATH names a file that cannot be read
)

// Parse splits ref into its scheme (SchemeEnv, SchemeFile or Scheme) and the rest; ok is false
// when ref has no reference's form: no colon, another scheme, or nothing after the colon. It
// does not check a gcpsm: reference's resource name (Check does).
func Parse(ref string) (scheme, arg string, ok bool) {
	scheme, arg, ok = strings.Cut(ref, ":")
	if !ok || arg == "" || scheme != SchemeEnv && scheme != SchemeFile && scheme != Scheme {
		return "", "", false
	}
	return scheme, arg, true
}

// Local reports whether ref is read from this process's environment or file system (env:,
// file:), rather than from Secret Manager.
func Local(ref string) bool {
	return strings.HasPrefix(ref, SchemeEnv+":") || strings.HasPrefix(ref, SchemeFile+":")
}

// Resolve reads what ref names: an environment variable's value (CodeNotSet when it is unset
// or empty), a file's bytes (CodeUnreadable, wrapping the file system's error), or a secret
// version (Read). A reference of no known form is CodeBadReference. Errors never carry the
// value read.
func Resolve(ctx context.Context, ref string) ([]byte, error) {
	scheme, arg, ok := Parse(ref)
	switch {
	case !ok:
		return nil, &Error{Code: CodeBadReference, Detail: "want env:VAR, file:PATH or gcpsm:projects/P/secrets/S/versions/V"}
	case scheme == SchemeEnv:
		v, ok := os.LookupEnv(arg)
		if !ok || v == "" {
			return nil, &Error{Code: CodeNotSet, Detail: "environment variable " + VarName(arg, "secret") + " is not set"}
		}
		return []byte(v), nil
	case scheme == SchemeFile:
		b, err := os.ReadFile(arg)
		if err != nil {
			return nil, &Error{Code: CodeUnreadable, Detail: "cannot read " + arg, Err: err}
		}
		return b, nil
	}
	return Read(ctx, ref)
}

// VarName is the argument of an env: reference as an error may name it: the variable's name,
// or, when it is no variable name (the secret itself pasted after env:, say), a note saying
// so that names the secret by what (a key, a keyring) and never repeats it.
func VarName(arg, what string) string {
	for i, c := range arg {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return "(not a variable name; did you paste the " + what + " after env:?)"
		}
	}
	return arg
}
