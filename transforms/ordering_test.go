package transforms_test

import (
	"slices"
	"testing"

	"github.com/beamagents/beamagents/transforms"
)

// idleTTLMs is agent.Limits' default IdleTTLMs, 30 days.
const idleTTLMs = int64(30 * 24 * 60 * 60 * 1000)

// A core timer that fires inside an ordering bucket takes the bucket's envelopes up to its
// own time; the ones after it still run, at the bucket's own firing. Here the idle TTL fires
// half-way through a one-second bucket, after an orphaned result (which does not re-arm it)
// and before an external event of the same bucket: the event must still be answered.
func TestCoreTimerInsideOrderingBucket(t *testing.T) {
	start := t0 + 500 // the TTL falls at …500 ms: inside the bucket that ends at the next second
	ttl := start + idleTTLMs
	o := runBeam(t, run{
		answers: []answer{{"c9", 0, 0, reply("first")}, {"c9", 1, 0, reply("after the ttl")}},
		records: envelopes(ext("c9", start, "hello"), result("c9", ttl-200, 0, 0, "nobody asked"), ext("c9", ttl+200, "again")),
		opts:    transforms.Options{OrderResolutionMs: 1000},
	})
	if r := o.reasons(); r["orphaned_result"] != 1 || len(o.dead) != 1 {
		t.Fatalf("dead letters %v", r)
	}
	var texts []string
	for _, f := range o.finals {
		texts = append(texts, finalText(t, f))
	}
	if !slices.Contains(texts, "after the ttl") || len(texts) != 2 {
		t.Fatalf("finals %q: want the event after the TTL answered too", texts)
	}
}
