package intent_test

import (
	"errors"
	"testing"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

// A shadow's intent verifies as Shadow and every mode refuses it; its content digest is
// the unmarked intent's, so production's results bind to it.
func TestShadowMark(t *testing.T) {
	ti := &pb.ToolIntent{IntentId: intent.ID([]byte("k"), 0, 0), EntityKey: []byte("k"), ToolName: "t", ArgsJson: "{}"}
	plain, _ := intent.Digest(ti)
	intent.MarkShadow(ti)
	if !intent.IsShadow(ti) || intent.Verify(ti, nil) != intent.Shadow {
		t.Fatalf("marked intent: IsShadow %v, Verify %v", intent.IsShadow(ti), intent.Verify(ti, nil))
	}
	for _, m := range []intent.Mode{intent.ModeRequire, intent.ModePermissive, intent.ModeOff} {
		if err := m.Check(ti, nil); !errors.Is(err, &intent.Error{Code: intent.CodeVerify, Outcome: intent.Shadow}) {
			t.Errorf("mode %s: %v", m, err)
		}
	}
	if d, _ := intent.Digest(ti); string(d) != string(plain) {
		t.Fatal("marking changed the content digest")
	}
	if intent.Shadow.Reason() != "intent_shadow" {
		t.Fatal(intent.Shadow.Reason())
	}
}
