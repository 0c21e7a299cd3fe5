package provider

import (
	"context"
	"errors"
	"fmt"
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
	scheme, arg, ok := secretref.Parse(ref)
	if !ok {
		return "", credErr(notARef)
	}
	b, err := secretref.Resolve(context.Background(), ref)
	var e *secretref.Error
	switch {
	case errors.As(err, &e) && e.Code == secretref.CodeNotSet:
		return "", credErr(fmt.Sprintf("environment variable %s is not set", secretref.VarName(arg, "key")))
	case err != nil:
		return "", credErr(fmt.Sprintf("cannot read the key file %s", arg))
	case scheme == secretref.SchemeEnv:
		return string(b), nil
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if v == "" {
		return "", credErr(fmt.Sprintf("the key file %s is empty", arg))
	}
	return v, nil
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
	if _, _, ok := secretref.Parse(ref); !ok {
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
