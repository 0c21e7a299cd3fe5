package cli

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beamagents/beamagents/internal/progress"
)

// lineWriter collects what statusLines writes and signals each write.
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
	go func() { statusLines(w, "prism", time.Now(), done, 10*time.Millisecond); close(stopped) }()
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
