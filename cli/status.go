package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/beamagents/beamagents/internal/progress"
	"github.com/beamagents/beamagents/model/limit"
)

// statusEvery is how often a run reports its progress.
const statusEvery = 5 * time.Second

// statusLines reports a run's progress on w until done is closed: what the runner's workers
// in this process did (package progress), as one line rewritten in place on a terminal
// (every second) and as a plain line every statusEvery in a log.
func statusLines(w io.Writer, runner string, start time.Time, done <-chan struct{}, every time.Duration) {
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
			line := fmt.Sprintf("… %s on %s", now.Line(prev, time.Since(start), breakers()), runner)
			prev = now
			if tty {
				fmt.Fprintf(w, "\r\033[K%s", fit(line, terminalWidth()))
				continue
			}
			fmt.Fprintln(w, line)
		}
	}
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

// breakers names the model endpoints of this process whose breaker is not closed, or
// whose calls a Retry-After holds back.
func breakers() string {
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
