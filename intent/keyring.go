package intent

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"

	"github.com/beamagents/beamagents/internal/jsontext"
	"github.com/beamagents/beamagents/internal/secretref"
)

// MinKeyBytes is the smallest accepted HMAC key: the SHA-256 output size.
const MinKeyBytes = 32

// A Keyring is a set of named HMAC-SHA256 keys, one of them active for signing. It is
// immutable after construction and safe for concurrent use.
//
// Its document format (JSON, the content of the file or environment variable a reference
// names) is:
//
//	{"active": "k2", "keys": [{"id": "k1", "secret": "<base64>"}, {"id": "k2", "secret": "<base64>"}]}
//
// ids are non-empty and unique; each secret is standard base64 of at least MinKeyBytes bytes;
// active names one of the keys. Old keys stay in the ring to verify intents signed before a
// rotation.
type Keyring struct {
	active string
	keys   map[string]secret
}

// secret is key material that never prints.
type secret []byte

func (secret) String() string                { return "[redacted]" }
func (secret) GoString() string              { return "[redacted]" }
func (secret) Format(f fmt.State, verb rune) { fmt.Fprint(f, "[redacted]") }

// NewKeyring builds a keyring from raw keys. The map is copied.
func NewKeyring(active string, keys map[string][]byte) (*Keyring, error) {
	kr := &Keyring{active: active, keys: make(map[string]secret, len(keys))}
	for id, k := range keys {
		if id == "" {
			return nil, keyringErr("empty key id")
		}
		if len(k) < MinKeyBytes {
			return nil, keyringErr("key %q has %d bytes, want at least %d", id, len(k), MinKeyBytes)
		}
		kr.keys[id] = secret(slices.Clone(k))
	}
	if _, ok := kr.keys[active]; !ok {
		return nil, keyringErr("active key %q is not in the keyring", active)
	}
	return kr, nil
}

type keyringDoc struct {
	Active string `json:"active"`
	Keys   []struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	} `json:"keys"`
}

// ParseKeyring parses a keyring document (see Keyring). Errors never quote key material.
func ParseKeyring(data []byte) (*Keyring, error) {
	var doc keyringDoc
	if err := jsontext.Decode(string(data), &doc, jsontext.DecodeOptions{DisallowUnknownFields: true}); err != nil {
		return nil, keyringErr("not a keyring document (want {\"active\":…,\"keys\":[{\"id\":…,\"secret\":…}]})")
	}
	keys := make(map[string][]byte, len(doc.Keys))
	for _, k := range doc.Keys {
		if _, dup := keys[k.ID]; dup {
			return nil, keyringErr("duplicate key id %q", k.ID)
		}
		raw, err := base64.StdEncoding.DecodeString(k.Secret)
		if err != nil {
			return nil, keyringErr("key %q: secret is not standard base64", k.ID)
		}
		keys[k.ID] = raw
	}
	return NewKeyring(doc.Active, keys)
}

// LoadKeyring loads a keyring by reference: "env:VAR" reads the document from environment
// variable VAR, "file:PATH" from a file, "gcpsm:projects/P/secrets/S/versions/V" from
// Google Cloud Secret Manager (read once per process). Call it where the keys are used (on the worker), so
// that key material never travels inside a pipeline.
func LoadKeyring(ref string) (*Keyring, error) {
	if err := CheckKeyringRef(ref); err != nil {
		return nil, err
	}
	b, err := secretref.Resolve(context.Background(), ref)
	if err == nil {
		return ParseKeyring(b)
	}
	var e *secretref.Error
	_, arg, _ := secretref.Parse(ref)
	switch {
	case errors.As(err, &e) && e.Code == secretref.CodeNotSet:
		return nil, keyringErr("environment variable %s is not set", secretref.VarName(arg, "keyring"))
	case errors.As(err, &e) && e.Code == secretref.CodeUnreadable:
		return nil, keyringErr("reading %s: %v", arg, e.Err)
	}
	return nil, keyringErr("%v", err)
}

// CheckKeyringRef checks the form of a keyring reference (see LoadKeyring) without reading
// it: where a pipeline is built, before the workers load it. A CodeKeyring error never
// repeats the reference, which may be a keyring pasted by mistake.
func CheckKeyringRef(ref string) error {
	if secretref.Is(ref) {
		if err := secretref.Check(ref); err != nil {
			return keyringErr("%v", err)
		}
		return nil
	}
	if _, _, ok := secretref.Parse(ref); !ok {
		return keyringErr("%s", notARef)
	}
	return nil
}

// notARef reports a reference that does not parse by its shape: the value may be the keyring
// itself, pasted by mistake, and is never repeated.
const notARef = "the keyring reference is not env:, file: or gcpsm:; did you paste the keyring itself?"

// Active returns the id of the key used for signing.
func (kr *Keyring) Active() string { return kr.active }

// IDs returns the key ids in sorted order.
func (kr Keyring) IDs() []string {
	ids := make([]string, 0, len(kr.keys))
	for id := range kr.keys {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (kr *Keyring) key(id string) (secret, bool) {
	if kr == nil {
		return nil, false
	}
	k, ok := kr.keys[id]
	return k, ok
}

// String describes the keyring by its ids only. String, GoString and Format have value
// receivers so that a Keyring printed by value is covered too.
func (kr Keyring) String() string {
	return fmt.Sprintf("intent.Keyring{active: %s, keys: %v}", kr.active, kr.IDs())
}

// GoString is String: %#v must not reach the key bytes either.
func (kr Keyring) GoString() string { return kr.String() }

// Format makes every fmt verb print String.
func (kr Keyring) Format(f fmt.State, verb rune) { fmt.Fprint(f, kr.String()) }

func keyringErr(format string, args ...any) error {
	return &Error{Code: CodeKeyring, Detail: fmt.Sprintf(format, args...)}
}
