package cli

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/beamagents/beamagents/internal/progress"
)

// statusEvery is how often a run reports its progress.
const statusEvery = 5 * time.Second

// statusLines reports a run's progress on w until done is closed: what the runner's workers
// in this process did (package progress), as one line rewritten in place on a terminal
// (every second) and as a plain line every statusEvery in a log.
func statusLines(w io.Writer, runner string, start time.Time, done <-chan struct{}) {
	tty := isTerminal(w)
	every := statusEvery
	if tty {
		every = time.Second
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
			line := fmt.Sprintf("… %s on %s", now.Line(prev, time.Since(start), ""), runner)
			prev = now
			if tty {
				fmt.Fprintf(w, "\r\033[K%s", line)
				continue
			}
			fmt.Fprintln(w, line)
		}
	}
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
