package provider

import (
	"fmt"
	"os"
	"strings"

	"github.com/beamagents/beamagents/internal/secretref"
	"github.com/beamagents/beamagents/model"
)

// LoadKey reads the key ref names: "env:VAR" from the environment, "file:PATH" from a file
// (one trailing newline dropped), "gcpsm:projects/P/secrets/S/versions/V" from Secret Manager. Errors name the reference, never the key.
func LoadKey(ref string) (string, error) {
	if ref == "" {
		return "", nil
	}
	if secretref.Is(ref) {
		return loadSecretKey(ref)
	}
	kind, arg, ok := strings.Cut(ref, ":")
	if !ok || arg == "" {
		return "", credErr(notARef)
	}
	switch kind {
	case "env":
		v, ok := os.LookupEnv(arg)
		if !ok || v == "" {
			return "", credErr(fmt.Sprintf("environment variable %s is not set", envName(arg)))
		}
		return v, nil
	case "file":
		b, err := os.ReadFile(arg)
		if err != nil {
			return "", credErr(fmt.Sprintf("cannot read the key file %s", arg))
		}
		v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		if v == "" {
			return "", credErr(fmt.Sprintf("the key file %s is empty", arg))
		}
		return v, nil
	}
	return "", credErr(notARef)
}

// envName is arg as an error names it: a variable name, or its shape when it is not one
// (a key pasted after env:).
func envName(arg string) string {
	for i, c := range arg {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return "(not a variable name; did you paste the key after env:?)"
		}
	}
	return arg
}

// notARef reports a reference that does not parse by its shape: the value may be the key
// itself, pasted by mistake, and is never repeated (not even the part before a colon).
const notARef = "the key reference is not env:, file: or gcpsm:; did you paste the key itself?"

// CheckKeyRef checks the form of a reference without reading it, for flag validation where
// the key is not available (it is read on the workers).
func CheckKeyRef(ref string) error {
	if ref == "" {
		return nil
	}
	if secretref.Is(ref) {
		return checkSecretKeyRef(ref)
	}
	kind, arg, ok := strings.Cut(ref, ":")
	if !ok || arg == "" || kind != "env" && kind != "file" {
		return credErr(notARef)
	}
	return nil
}

func refKind(ref string) string {
	if ref == "" {
		return "none"
	}
	kind, _, _ := strings.Cut(ref, ":")
	return kind + ":…"
}

func credErr(detail string) error {
	return &model.Error{Code: model.CodeCredentials, Detail: detail}
}
