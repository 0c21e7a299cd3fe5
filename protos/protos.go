// Package protos holds the runtime's own .proto sources (package beam_agents.v1: the wire and
// state schemas, and the custom options of interaction_options.proto that make a message an
// interaction schema), embedded so that a user's module can compile its own schemas against
// them without a copy of this repository: `beamagents generate proto` resolves
// `import "beam_agents/v1/interaction_options.proto"` from FS.
package protos

import "embed"

// FS holds beam_agents/v1/*.proto, named as they are imported.
//
//go:embed beam_agents/v1/*.proto
var FS embed.FS
