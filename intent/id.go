package intent

import (
	"encoding/binary"

	"github.com/google/uuid"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// Namespace is the UUIDv5 namespace of intent ids. It is itself the UUIDv5 of the URL
// "https://github.com/beamagents/beamagents/intent/v1" in the RFC 9562 URL namespace, and is
// frozen: changing it changes every intent id.
var Namespace = uuid.MustParse("a3af232c-087e-5a71-8bb0-a371cda66993")

// ID returns the deterministic intent id of the intent emitted at step of activation seq of
// entityKey, in canonical lowercase 8-4-4-4-12 form.
func ID(entityKey []byte, seq int64, step uint32) string {
	return uuid.NewSHA1(Namespace, idName(entityKey, seq, step)).String()
}

func idName(entityKey []byte, seq int64, step uint32) []byte {
	b := make([]byte, 0, 4+len(entityKey)+8+4)
	b = binary.BigEndian.AppendUint32(b, uint32(len(entityKey)))
	b = append(b, entityKey...)
	b = binary.BigEndian.AppendUint64(b, uint64(seq))
	return binary.BigEndian.AppendUint32(b, step)
}

// RoutesToApproval reports whether ti goes to a human approval channel. Only an explicit
// APPROVAL kind does: TOOL and TOOL_KIND_UNSPECIFIED (an intent written before the kind field
// existed) are both tool calls.
func RoutesToApproval(ti *pb.ToolIntent) bool {
	return ti.GetKind() == pb.ToolIntent_APPROVAL
}
