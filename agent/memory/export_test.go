package memory

import "github.com/beamagents/beamagents/records"

// Decode reads a ring's memory value as Ring.Read does (Context.Ring's framing, then the
// header), for tests that look at committed state.
func Decode(b []byte) (Contents, error) {
	slots, err := records.Frames(b)
	if err != nil {
		return Contents{}, err
	}
	return split(slots)
}

// Encode is the writer's encoding.
var Encode = encode

// SummarySchema is the summary schema of a bound.
var SummarySchema = summarySchema
