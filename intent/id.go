package intent

import (
	"github.com/google/uuid"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/uuidv5"
)

// Namespace is the UUIDv5 namespace of intent ids, shared with every runtime of the
// beam_agents.v1 wire and frozen: changing it changes every intent id (docs/identity.md).
var Namespace = uuid.MustParse("6f3e9d2a-1c47-5b8e-9a10-2d4f6b8c0e11")

// ID returns the deterministic intent id of the intent emitted at step of activation seq of
// entityKey: the UUIDv5 in [Namespace] of the name "<lowercase hex of entityKey>|<seq>|<step>",
// in canonical lowercase 8-4-4-4-12 form.
func ID(entityKey []byte, seq int64, step uint32) string {
	var buf [160]byte
	return uuid.UUID(uuidv5.Sum(uuidv5.Uint(uuidv5.Begin(buf[:0], Namespace, entityKey, seq), uint64(step)))).String()
}

// RoutesToApproval reports whether ti goes to a human approval channel. Only an explicit
// APPROVAL kind does: TOOL and TOOL_KIND_UNSPECIFIED (an intent written before the kind field
// existed) are both tool calls.
func RoutesToApproval(ti *pb.ToolIntent) bool {
	return ti.GetKind() == pb.ToolIntent_APPROVAL
}
