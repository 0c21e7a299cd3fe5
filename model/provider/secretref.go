package provider

import (
	"context"
	"strings"

	"github.com/beamagents/beamagents/internal/secretref"
	"github.com/beamagents/beamagents/model"
)

// loadSecretKey reads a gcpsm: reference through Secret Manager (cached per process); like
// the other schemes, one trailing newline is dropped and errors never quote the key.
func loadSecretKey(ref string) (string, error) {
	b, err := secretref.Read(context.Background(), ref)
	if err != nil {
		return "", &model.Error{Code: model.CodeCredentials, Detail: "the key reference " + ref + " cannot be read", Err: err}
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if v == "" {
		return "", credErr("the secret version of " + ref + " is empty")
	}
	return v, nil
}

// checkSecretKeyRef checks a gcpsm: reference's form.
func checkSecretKeyRef(ref string) error {
	if err := secretref.Check(ref); err != nil {
		return &model.Error{Code: model.CodeCredentials, Detail: "bad key reference", Err: err}
	}
	return nil
}
