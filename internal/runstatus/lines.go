package runstatus

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/beamagents/beamagents/internal/progress"
	"github.com/beamagents/beamagents/model/limit"
	"github.com/beamagents/beamagents/pubsub"
)

// Every is how often a run reports its progress in a log.
const Every = 5 * time.Second

// Lines reports a run's progress on w until done is closed: what the runner's workers in
// this process did (package progress), as one line rewritten in place on a terminal (every
// second) and as a plain line every period every in a log.
func Lines(w io.Writer, runner string, start time.Time, done <-chan struct{}, every time.Duration) {
	tty := isTerminal(w)
	if tty {
		every = min(every, time.Second)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	prev := progress.Take()
	for {
		select {
		case <-done:
			if tty {
				fmt.Fprintln(w)
			}
			return
		case <-t.C:
			now := progress.Take()
			line := fmt.Sprintf("… %s on %s", now.Line(prev, time.Since(start), Breakers()), runner)
			prev = now
			if tty {
				fmt.Fprintf(w, "\r\033[K%s", fit(line, terminalWidth()))
				continue
			}
			fmt.Fprintln(w, line)
		}
	}
}

// Streaming is the one-line live status of a streaming run: the source's counts, the model
// calls of this process's workers since prev (per second and in flight), tokens, and extra
// (the breakers not closed) when not empty.
func Streaming(s pubsub.Status, now time.Time, p, prev progress.Snapshot, extra string) string {
	lag := "-"
	if !s.Watermark.IsZero() {
		lag = now.Sub(s.Watermark).Round(100 * time.Millisecond).String()
	}
	rate := 0.0
	if dt := p.At.Sub(prev.At).Seconds(); dt > 0 {
		rate = float64(p.ModelCalls-prev.ModelCalls) / dt
	}
	line := fmt.Sprintf("envelopes in %d | activations %d | model calls %d (%.1f/s, %d in flight) | tokens %d | intents out %d | dead letters %d | duplicates %d | watermark lag %s",
		s.EnvelopesIn, s.Activations, p.ModelCalls, rate, p.InFlight, p.Tokens, s.IntentsOut, s.DeadLetters+s.Rejected, s.Duplicates, lag)
	if extra != "" {
		line += " | " + extra
	}
	return line + "   "
}

// fit cuts line to width runes, so that a terminal's status stays on one line.
func fit(line string, width int) string {
	r := []rune(line)
	if len(r) <= width {
		return line
	}
	return string(r[:width-1]) + "…"
}

// terminalWidth is $COLUMNS, or 100.
func terminalWidth() int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 10 {
		return n
	}
	return 100
}

// Breakers names the model endpoints of this process whose breaker is not closed, or whose
// calls a Retry-After holds back.
func Breakers() string {
	var parts []string
	for _, e := range limit.Endpoints() {
		st := e.Stats()
		switch {
		case st.State != limit.Closed:
			parts = append(parts, fmt.Sprintf("breaker %s %s", st.State, st.Key.Model))
		case st.Paused:
			parts = append(parts, "paused "+st.Key.Model)
		}
	}
	return strings.Join(parts, ", ")
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
