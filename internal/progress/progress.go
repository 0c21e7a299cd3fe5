package progress

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/beamagents/beamagents/model"
)

var (
	read, activations, modelCalls, inFlight, tokens, deadLetters atomic.Int64
)

// Read counts n envelopes read from the input.
func Read(n int64) { read.Add(n) }

// Activations counts n activations done.
func Activations(n int64) { activations.Add(n) }

// DeadLetters counts n dead letters emitted.
func DeadLetters(n int64) { deadLetters.Add(n) }

// Tokens counts n model tokens (input and output).
func Tokens(n int64) { tokens.Add(n) }

// Snapshot is the process's counts at one moment.
type Snapshot struct {
	At                                              time.Time
	Read, Activations, ModelCalls, InFlight, Tokens int64
	DeadLetters                                     int64
}

// Take reads the counts.
func Take() Snapshot {
	return Snapshot{At: time.Now(), Read: read.Load(), Activations: activations.Load(), ModelCalls: modelCalls.Load(),
		InFlight: inFlight.Load(), Tokens: tokens.Load(), DeadLetters: deadLetters.Load()}
}

// Line is the status after prev: counts, model calls per second since prev and the calls in
// flight; extra (a breaker's state, say) is appended when not empty.
func (s Snapshot) Line(prev Snapshot, elapsed time.Duration, extra string) string {
	rate := 0.0
	if dt := s.At.Sub(prev.At).Seconds(); dt > 0 {
		rate = float64(s.ModelCalls-prev.ModelCalls) / dt
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s read %d · act %d · model %d (%.1f/s, %d in flight) · tok %s · dead %d",
		elapsed.Round(time.Second), s.Read, s.Activations, s.ModelCalls, rate, s.InFlight, short(s.Tokens), s.DeadLetters)
	if extra != "" {
		b.WriteString(" · ")
		b.WriteString(extra)
	}
	return b.String()
}

func short(n int64) string {
	switch {
	case n >= 10_000_000:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 10_000:
		return fmt.Sprintf("%dk", n/1_000)
	}
	return fmt.Sprint(n)
}

// Counted wraps a model so that its calls are counted: in flight while they run, then done.
func Counted(m model.Streamer) model.Streamer { return counted{m} }

type counted struct{ model.Streamer }

func (c counted) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	inFlight.Add(1)
	defer done()
	return c.Streamer.Generate(ctx, req)
}

func (c counted) Stream(ctx context.Context, req *model.Request, onChunk func([]byte) error) (*model.Response, error) {
	inFlight.Add(1)
	defer done()
	return c.Streamer.Stream(ctx, req, onChunk)
}

// StreamTools streams a native-tool answer through the wrapped model when it can; else the
// answer comes whole, admitted once complete.
func (c counted) StreamTools(ctx context.Context, req *model.Request, onDelta func(model.ToolDelta) error) (*model.Response, error) {
	ts, ok := c.Streamer.(model.ToolStreamer)
	if !ok {
		return c.Generate(ctx, req)
	}
	inFlight.Add(1)
	defer done()
	return ts.StreamTools(ctx, req, onDelta)
}

func done() {
	inFlight.Add(-1)
	modelCalls.Add(1)
}
