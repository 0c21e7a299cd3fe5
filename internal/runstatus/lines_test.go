package runstatus

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beamagents/beamagents/internal/progress"
	"github.com/beamagents/beamagents/pubsub"
)

// lineWriter collects what Lines writes and signals each write.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return w.buf.Write(b)
}

// TestStatusLines: off a terminal the status is plain lines, each with what the process's
// steps did so far.
func TestStatusLines(t *testing.T) {
	progress.Read(7)
	progress.Activations(3)
	progress.DeadLetters(1)
	w := &lineWriter{wrote: make(chan struct{}, 1)}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() { Lines(w, "prism", time.Now(), done, 10*time.Millisecond); close(stopped) }()
	<-w.wrote
	close(done)
	<-stopped
	w.mu.Lock()
	out := w.buf.String()
	w.mu.Unlock()
	first := strings.SplitN(out, "\n", 2)[0]
	for _, want := range []string{"… ", "read ", "act ", "model ", "in flight", "dead ", "on prism"} {
		if !strings.Contains(first, want) {
			t.Errorf("status line %q lacks %q", first, want)
		}
	}
	if strings.Contains(out, "\r") {
		t.Errorf("not a plain log line: %q", first)
	}
}

func TestFitKeepsOneTerminalLine(t *testing.T) {
	for _, c := range []struct {
		name, line string
		width      int
		want       string
	}{
		{"short", "read 1", 80, "read 1"},
		{"exact", "abcd", 4, "abcd"},
		{"cut", "abcdef", 4, "abc…"},
		{"runes", "··········", 5, "····…"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := fit(c.line, c.width); got != c.want {
				t.Errorf("fit(%q, %d) = %q, want %q", c.line, c.width, got, c.want)
			}
		})
	}
}

// A streaming run's status line carries the source's counts and this process's model calls:
// their rate since the last line, those in flight, tokens, and the breakers not closed.
func TestStreamingStatusLine(t *testing.T) {
	t0 := time.Unix(1767225600, 0)
	prev := progress.Snapshot{At: t0, ModelCalls: 10}
	now := progress.Snapshot{At: t0.Add(2 * time.Second), ModelCalls: 50, InFlight: 7, Tokens: 1234}
	src := pubsub.Status{EnvelopesIn: 60, Activations: 44, IntentsOut: 3, DeadLetters: 1, Rejected: 1, Duplicates: 2, Watermark: t0.Add(-1500 * time.Millisecond)}
	for _, tc := range []struct {
		name, extra string
		want        []string
	}{
		{"closed", "", []string{"envelopes in 60", "activations 44", "model calls 50 (20.0/s, 7 in flight)", "tokens 1234", "intents out 3", "dead letters 2", "duplicates 2", "watermark lag 3.5s"}},
		{"open breaker", "breaker open gpt-test", []string{"model calls 50 (20.0/s, 7 in flight)", "| breaker open gpt-test"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := Streaming(src, now.At, now, prev, tc.extra)
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("%q lacks %q", line, w)
				}
			}
			if strings.Contains(line, "\n") {
				t.Errorf("%q is not one line", line)
			}
		})
	}
}
