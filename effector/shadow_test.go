package effector_test

import (
	"context"
	"errors"
	"testing"

	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/intent"
)

// A shadow agent's intent is refused in every verification mode before anything else: typed,
// counted, never executed, never recorded, and answered by no result (which would reach
// production's key under the same id).
func TestShadowIntentRefused(t *testing.T) {
	for _, mode := range []intent.Mode{intent.ModeRequire, intent.ModePermissive, intent.ModeOff} {
		t.Run(mode.String(), func(t *testing.T) {
			f := newFixture(t, mode, openBolt(t))
			ti := lookupIntent(t, nil, "shadow-key", 0, "A-1")
			intent.MarkShadow(ti)
			out, err := f.e.Handle(context.Background(), ti)
			if !errors.Is(err, effector.ErrShadowIntent) {
				t.Fatalf("Handle = %v, want ErrShadowIntent", err)
			}
			if out.Envelope != nil || out.Pending {
				t.Fatalf("a shadow intent got an outcome: %v", out)
			}
			if n := f.counts[support.ToolLookupOrder].n.Load(); n != 0 {
				t.Fatalf("the tool ran %d times", n)
			}
			if got := f.e.Metrics().Snapshot()[effector.CountShadowRefused]; got != 1 {
				t.Fatalf("%s = %d, want 1", effector.CountShadowRefused, got)
			}
			// Nothing recorded: production's intent of the same id still runs.
			prod := lookupIntent(t, f.kr, "shadow-key", 0, "A-1")
			if r := f.handle(t, prod); r.GetStatus().String() != "OK" {
				t.Fatalf("production's intent after the shadow's: %v", r)
			}
			// The files path returns it with the records not handled.
			results, refused, err := f.e.HandleAll(context.Background(), []effector.Record{{Source: "s", Intent: ti}}, 1)
			if err != nil || len(results) != 0 || len(refused) != 1 || !errors.Is(refused[0].Err, effector.ErrShadowIntent) {
				t.Fatalf("HandleAll = %v, %v, %v", results, refused, err)
			}
		})
	}
}
