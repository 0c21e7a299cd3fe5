package effectorrun

import (
	"bytes"
	"strings"
	"testing"
)

func TestPrintCountersByName(t *testing.T) {
	var b bytes.Buffer
	PrintCounters(&b, map[string]int64{"results_ok": 2, "intents": 3})
	if got, want := b.String(), "  intents                      3\n  results_ok                   2\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// A files run whose approvals nobody can decide says how to decide them.
func TestUndecidedSaysHowToDecide(t *testing.T) {
	msg := (&UndecidedError{N: 2, Input: "out/intents.jsonl"}).Error()
	for _, want := range []string{"2 approval(s)", "--console", "beamagents approve --intents out/intents.jsonl"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
}
