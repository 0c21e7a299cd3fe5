package intent

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// SigningInput returns the bytes a signature covers: the deterministic serialization of ti
// with signature_scheme, signing_key_id and signature cleared, unknown fields kept.
func SigningInput(ti *pb.ToolIntent) ([]byte, error) {
	c := proto.CloneOf(ti)
	c.SignatureScheme = pb.ToolIntent_SIGNATURE_SCHEME_UNSPECIFIED
	c.SigningKeyId = ""
	c.Signature = nil
	return proto.MarshalOptions{Deterministic: true}.Marshal(c)
}

// Sign signs ti in place with the keyring's active key.
func Sign(ti *pb.ToolIntent, kr *Keyring) error { return SignWith(ti, kr, kr.Active()) }

// SignWith signs ti in place with the named key, replacing any earlier signature.
func SignWith(ti *pb.ToolIntent, kr *Keyring, keyID string) error {
	key, ok := kr.key(keyID)
	if !ok {
		return &Error{Code: CodeSign, Detail: fmt.Sprintf("key %q is not in the keyring", keyID)}
	}
	in, err := SigningInput(ti)
	if err != nil {
		return &Error{Code: CodeSign, Detail: err.Error()}
	}
	ti.SignatureScheme = pb.ToolIntent_HMAC_SHA256
	ti.SigningKeyId = keyID
	ti.Signature = mac(key, in)
	return nil
}

// signEnvelope signs the input of a result or a decision with the named key and sets its
// envelope.
func signEnvelope(kr *Keyring, keyID string, input func() ([]byte, error), set func(pb.ToolIntent_SignatureScheme, string, []byte)) error {
	key, ok := kr.key(keyID)
	if !ok {
		return &Error{Code: CodeSign, Detail: fmt.Sprintf("key %q is not in the keyring", keyID)}
	}
	in, err := input()
	if err != nil {
		return &Error{Code: CodeSign, Detail: err.Error()}
	}
	set(pb.ToolIntent_HMAC_SHA256, keyID, mac(key, in))
	return nil
}

func mac(key secret, in []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(in)
	return h.Sum(nil)
}
