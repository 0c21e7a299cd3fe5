package intent

import pb "github.com/beamagents/beamagents/gen/beam_agents/v1"

// ShadowKeyID is the signing_key_id of a shadow's intent: an agent running beside
// production on the same stream (`run --shadow_agent`) emits its intents unsigned, with no
// scheme and no signature, and this key id instead. Verify reports it as Shadow, which every
// Mode refuses, ModeOff included, and an effector refuses it before anything else.
const ShadowKeyID = "shadow:unsigned"

// MarkShadow marks ti, unsigned, as a shadow's intent.
func MarkShadow(ti *pb.ToolIntent) {
	ti.SignatureScheme, ti.SigningKeyId, ti.Signature = pb.ToolIntent_SIGNATURE_SCHEME_UNSPECIFIED, ShadowKeyID, nil
}

// IsShadow reports whether ti carries the shadow mark (MarkShadow).
func IsShadow(ti *pb.ToolIntent) bool {
	return ti.GetSigningKeyId() == ShadowKeyID && ti.GetSignatureScheme() == pb.ToolIntent_SIGNATURE_SCHEME_UNSPECIFIED && len(ti.GetSignature()) == 0
}
