package intent

import (
	"crypto/hmac"
	"fmt"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// Outcome is the result of verifying one intent.
type Outcome int

// Verification outcomes; each is distinct and has its own dead-letter reason.
const (
	OK                Outcome = iota + 1 // signed by a known key, signature matches
	Unsigned                             // scheme unspecified and signature empty
	BadSignature                         // the signature does not match the intent
	UnknownKey                           // signing_key_id is not in the keyring
	UnsupportedScheme                    // a scheme this binary does not implement
	// BindingMismatch: a result or a decision whose signature verifies names another intent
	// than the pending one (its intent_digest is not that intent's Digest).
	BindingMismatch
	// Shadow: an intent a shadow agent emitted (MarkShadow); it must never execute, so every
	// mode refuses it, ModeOff included.
	Shadow
)

var outcomeWords = map[Outcome]string{
	OK:                "ok",
	Unsigned:          "unsigned",
	BadSignature:      "bad_signature",
	UnknownKey:        "unknown_key",
	UnsupportedScheme: "unsupported_scheme",
	BindingMismatch:   "binding_mismatch",
	Shadow:            "shadow",
}

// String returns the outcome word ("ok", "unsigned", "bad_signature", "unknown_key",
// "unsupported_scheme", "binding_mismatch", "shadow").
func (o Outcome) String() string {
	if w, ok := outcomeWords[o]; ok {
		return w
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// Reason returns the dead-letter reason for a refused outcome, "intent_" plus its word.
func (o Outcome) Reason() string { return "intent_" + o.String() }

// Verify checks ti's signature against the keyring. It never modifies ti.
func Verify(ti *pb.ToolIntent, kr *Keyring) Outcome {
	if IsShadow(ti) {
		return Shadow
	}
	return verifyEnvelope(ti.GetSignatureScheme(), ti.GetSigningKeyId(), ti.GetSignature(), kr, func() ([]byte, error) { return SigningInput(ti) })
}

// verifyEnvelope checks one signature envelope (of an intent, a result or a decision) over
// the signing input that input returns.
func verifyEnvelope(scheme pb.ToolIntent_SignatureScheme, keyID string, sig []byte, kr *Keyring, input func() ([]byte, error)) Outcome {
	switch scheme {
	case pb.ToolIntent_SIGNATURE_SCHEME_UNSPECIFIED:
		if len(sig) == 0 && keyID == "" {
			return Unsigned
		}
		// Signature material without a scheme is not an unsigned message: refuse it.
		return UnsupportedScheme
	case pb.ToolIntent_HMAC_SHA256:
	default:
		return UnsupportedScheme
	}
	key, ok := kr.key(keyID)
	if !ok {
		return UnknownKey
	}
	in, err := input()
	if err != nil || !hmac.Equal(mac(key, in), sig) {
		return BadSignature
	}
	return OK
}

// Mode decides which outcomes a consumer admits.
type Mode int

// Verification modes.
const (
	// ModeRequire admits only OK. It is the zero value: verification is on unless turned off.
	ModeRequire Mode = iota
	// ModePermissive admits OK and Unsigned; a present but wrong signature is still refused.
	ModePermissive
	// ModeOff admits every intent without looking at its signature, except a shadow's.
	ModeOff
)

// ParseMode parses "off", "permissive" or "require".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "require":
		return ModeRequire, nil
	case "permissive":
		return ModePermissive, nil
	case "off":
		return ModeOff, nil
	}
	return 0, &Error{Code: CodeVerify, Detail: fmt.Sprintf("unknown verification mode %q (want off, permissive or require)", s)}
}

func (m Mode) String() string {
	switch m {
	case ModeRequire:
		return "require"
	case ModePermissive:
		return "permissive"
	case ModeOff:
		return "off"
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// MarshalText is m's name: a Mode reads as off, permissive or require in JSON and in any
// text form of a setting. A Mode that is none of the three is an error.
func (m Mode) MarshalText() ([]byte, error) {
	switch m {
	case ModeRequire, ModePermissive, ModeOff:
		return []byte(m.String()), nil
	}
	return nil, &Error{Code: CodeVerify, Detail: fmt.Sprintf("unknown verification mode %d", int(m))}
}

// UnmarshalText sets m from its name (ParseMode).
func (m *Mode) UnmarshalText(b []byte) error {
	p, err := ParseMode(string(b))
	if err == nil {
		*m = p
	}
	return err
}

// Check verifies ti under mode m: nil when admitted, else an *Error with CodeVerify carrying
// the outcome (errors.Is(err, ErrVerify)).
func (m Mode) Check(ti *pb.ToolIntent, kr *Keyring) error {
	if IsShadow(ti) {
		return &Error{Code: CodeVerify, Outcome: Shadow, Detail: fmt.Sprintf("intent %s is a shadow's: it never executes", ti.GetIntentId())}
	}
	if m == ModeOff {
		return nil
	}
	return m.admit(Verify(ti, kr), "intent "+ti.GetIntentId())
}

// admit applies mode m to outcome o of the message what names.
func (m Mode) admit(o Outcome, what string) error {
	if o == OK || (o == Unsigned && m == ModePermissive) {
		return nil
	}
	return &Error{Code: CodeVerify, Outcome: o, Detail: fmt.Sprintf("%s under mode %s", what, m)}
}
