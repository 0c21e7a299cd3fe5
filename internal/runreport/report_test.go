package runreport

import (
	"bytes"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/pipeline"
)

func TestNothingSucceeded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		counters map[string]int64
		want     string
	}{
		{"a reply", map[string]int64{"final_replies": 1, "dead_letters.model_error": 3}, ""},
		{"no dead letter", map[string]int64{}, ""},
		{"one reason", map[string]int64{"dead_letters.model_error": 1},
			"nothing succeeded: 1 dead letter and no final reply, intent or snapshot; the commonest reason is model_error (1 of 1)"},
		{"commonest, ties by name", map[string]int64{"dead_letters.b": 2, "dead_letters.a": 2, "dead_letters.c": 1},
			"nothing succeeded: 5 dead letters and no final reply, intent or snapshot; the commonest reason is a (2 of 5)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NothingSucceeded(&pipeline.Result{Counters: tc.counters}, pipeline.Options{}); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// The dead_letters headline is the sum of the counts by reason; counters print by name.
func TestCounters(t *testing.T) {
	var b bytes.Buffer
	Counters(&b, &pipeline.Result{Counters: map[string]int64{"dead_letters": 1, "dead_letters.x": 2, "dead_letters.y": 3, "activations": 9}})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(strings.TrimSpace(lines[0]), "activations") || strings.Fields(lines[1])[1] != "5" {
		t.Fatalf("counters:\n%s", b.String())
	}
	if got := countList(map[string]int{"b": 1, "a": 2}); got != "a 2, b 1" {
		t.Errorf("countList = %q", got)
	}
	if got := countList(nil); got != "none" {
		t.Errorf("countList(nil) = %q", got)
	}
}
