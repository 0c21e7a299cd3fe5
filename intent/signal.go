package intent

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// SignalSigningInput returns the bytes a signal's signature covers: the deterministic
// serialization of sig with signature_scheme, signing_key_id and signature cleared, unknown
// fields kept. Its entity_key is covered, so a signal signed for one key does not verify as
// another's.
func SignalSigningInput(sig *pb.AgentEnvelope_Signal) ([]byte, error) {
	c := proto.CloneOf(sig)
	c.SignatureScheme, c.SigningKeyId, c.Signature = pb.ToolIntent_SIGNATURE_SCHEME_UNSPECIFIED, "", nil
	return proto.MarshalOptions{Deterministic: true}.Marshal(c)
}

// SignSignal signs sig in place with the keyring's active key. A signal answers no intent,
// so it carries no digest: what it binds to is its key (entity_key) and its id.
func SignSignal(sig *pb.AgentEnvelope_Signal, kr *Keyring) error {
	return SignSignalWith(sig, kr, kr.Active())
}

// SignSignalWith is SignSignal with the named key.
func SignSignalWith(sig *pb.AgentEnvelope_Signal, kr *Keyring, keyID string) error {
	return signEnvelope(kr, keyID, func() ([]byte, error) { return SignalSigningInput(sig) },
		func(s pb.ToolIntent_SignatureScheme, id string, b []byte) {
			sig.SignatureScheme, sig.SigningKeyId, sig.Signature = s, id, b
		})
}

// VerifySignal checks sig's signature against the keyring. It never modifies sig.
func VerifySignal(sig *pb.AgentEnvelope_Signal, kr *Keyring) Outcome {
	return verifyEnvelope(sig.GetSignatureScheme(), sig.GetSigningKeyId(), sig.GetSignature(), kr, func() ([]byte, error) { return SignalSigningInput(sig) })
}

// CheckSignal verifies sig under mode m, as CheckResult: nil when admitted, else an *Error
// with CodeVerify carrying the outcome.
func (m Mode) CheckSignal(sig *pb.AgentEnvelope_Signal, kr *Keyring) error {
	if m == ModeOff {
		return nil
	}
	return m.admit(VerifySignal(sig, kr), fmt.Sprintf("signal %q (%s)", sig.GetName(), sig.GetSignalId()))
}
