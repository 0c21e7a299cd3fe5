package intent

import (
	"bytes"
	"crypto/sha256"
	"fmt"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// Digest returns the content digest of ti: SHA-256 over its signing input (SigningInput) with
// the two delivery fields an escalation changes, attempt and expires_at_ms, cleared as well.
// Every attempt of one call has the same digest; a different call that happens to carry the
// same intent id (a key whose counter started again) has a different one. Results and
// approvals carry the digest of the intent they answer (intent_digest), and the effector's
// completion records keep it.
func Digest(ti *pb.ToolIntent) ([]byte, error) {
	c := proto.CloneOf(ti)
	c.SignatureScheme, c.SigningKeyId, c.Signature = pb.ToolIntent_SIGNATURE_SCHEME_UNSPECIFIED, "", nil
	c.Attempt, c.ExpiresAtMs = 0, 0
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	return sum[:], nil
}

// ResultSigningInput returns the bytes a result's signature covers: the deterministic
// serialization of r with signature_scheme, signing_key_id and signature cleared, unknown
// fields kept. intent_digest is covered.
func ResultSigningInput(r *pb.ToolResult) ([]byte, error) {
	c := proto.CloneOf(r)
	c.SignatureScheme, c.SigningKeyId, c.Signature = pb.ToolIntent_SIGNATURE_SCHEME_UNSPECIFIED, "", nil
	return proto.MarshalOptions{Deterministic: true}.Marshal(c)
}

// ApprovalSigningInput returns the bytes a decision's signature covers, as ResultSigningInput.
func ApprovalSigningInput(ap *pb.AgentEnvelope_Approval) ([]byte, error) {
	c := proto.CloneOf(ap)
	c.SignatureScheme, c.SigningKeyId, c.Signature = pb.ToolIntent_SIGNATURE_SCHEME_UNSPECIFIED, "", nil
	return proto.MarshalOptions{Deterministic: true}.Marshal(c)
}

// SignResult binds r to ti (intent_digest = Digest(ti)) and signs it in place with the
// keyring's active key.
func SignResult(r *pb.ToolResult, ti *pb.ToolIntent, kr *Keyring) error {
	return SignResultWith(r, ti, kr, kr.Active())
}

// SignResultWith is SignResult with the named key.
func SignResultWith(r *pb.ToolResult, ti *pb.ToolIntent, kr *Keyring, keyID string) error {
	d, err := Digest(ti)
	if err != nil {
		return &Error{Code: CodeSign, Detail: err.Error()}
	}
	r.IntentDigest = d
	return signEnvelope(kr, keyID, func() ([]byte, error) { return ResultSigningInput(r) },
		func(s pb.ToolIntent_SignatureScheme, id string, sig []byte) {
			r.SignatureScheme, r.SigningKeyId, r.Signature = s, id, sig
		})
}

// SignApproval binds ap to the APPROVAL intent ti it decides and signs it in place with the
// keyring's active key.
func SignApproval(ap *pb.AgentEnvelope_Approval, ti *pb.ToolIntent, kr *Keyring) error {
	return SignApprovalWith(ap, ti, kr, kr.Active())
}

// SignApprovalWith is SignApproval with the named key.
func SignApprovalWith(ap *pb.AgentEnvelope_Approval, ti *pb.ToolIntent, kr *Keyring, keyID string) error {
	d, err := Digest(ti)
	if err != nil {
		return &Error{Code: CodeSign, Detail: err.Error()}
	}
	ap.IntentDigest = d
	return signEnvelope(kr, keyID, func() ([]byte, error) { return ApprovalSigningInput(ap) },
		func(s pb.ToolIntent_SignatureScheme, id string, sig []byte) {
			ap.SignatureScheme, ap.SigningKeyId, ap.Signature = s, id, sig
		})
}

// VerifyResult checks r's signature against the keyring and, when it verifies, its binding to
// the pending intent ti: BindingMismatch when r's intent_digest is not Digest(ti). It never
// modifies r or ti.
func VerifyResult(r *pb.ToolResult, ti *pb.ToolIntent, kr *Keyring) Outcome {
	o := verifyEnvelope(r.GetSignatureScheme(), r.GetSigningKeyId(), r.GetSignature(), kr, func() ([]byte, error) { return ResultSigningInput(r) })
	return bound(o, r.GetIntentDigest(), ti)
}

// VerifyApproval checks ap's signature and its binding to the pending APPROVAL intent ti, as
// VerifyResult.
func VerifyApproval(ap *pb.AgentEnvelope_Approval, ti *pb.ToolIntent, kr *Keyring) Outcome {
	o := verifyEnvelope(ap.GetSignatureScheme(), ap.GetSigningKeyId(), ap.GetSignature(), kr, func() ([]byte, error) { return ApprovalSigningInput(ap) })
	return bound(o, ap.GetIntentDigest(), ti)
}

// bound turns a verified signature into BindingMismatch when digest does not name ti. Only a
// verified digest is compared: an unsigned one proves nothing.
func bound(o Outcome, digest []byte, ti *pb.ToolIntent) Outcome {
	if o != OK {
		return o
	}
	want, err := Digest(ti)
	if err != nil || !bytes.Equal(want, digest) {
		return BindingMismatch
	}
	return OK
}

// CheckResult verifies r against the pending intent ti under mode m: nil when admitted, else
// an *Error with CodeVerify carrying the outcome.
func (m Mode) CheckResult(r *pb.ToolResult, ti *pb.ToolIntent, kr *Keyring) error {
	if m == ModeOff {
		return nil
	}
	return m.admit(VerifyResult(r, ti, kr), fmt.Sprintf("result for intent %s", r.GetIntentId()))
}

// CheckApproval verifies ap against the pending APPROVAL intent ti under mode m, as
// CheckResult.
func (m Mode) CheckApproval(ap *pb.AgentEnvelope_Approval, ti *pb.ToolIntent, kr *Keyring) error {
	if m == ModeOff {
		return nil
	}
	return m.admit(VerifyApproval(ap, ti, kr), fmt.Sprintf("approval of intent %s", ap.GetIntentId()))
}
