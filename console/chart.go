package console

import (
	"fmt"
	"time"
)

// Series is one small bar chart of the overview: a counter over event time.
type Series struct {
	Name  string
	ID    string
	Total int64
	Max   int64
	Bars  []Bar
	From  string
	To    string
}

// Bar is one bar of a series, in the chart's 300×60 coordinates.
type Bar struct {
	X, Y, W, H float64
	Title      string
}

// maxBars is how many bars a series has at most: minutes are merged into wider buckets.
const maxBars = 60

// chart turns per-minute counters into one series per counter.
func chart(minutes []Minute) []Series {
	pick := []struct {
		name, id string
		get      func(Minute) int64
	}{
		{"Activations", "activations", func(m Minute) int64 { return m.Activations }},
		{"Model calls", "model_calls", func(m Minute) int64 { return m.ModelCalls }},
		{"Tokens", "tokens", func(m Minute) int64 { return m.Tokens }},
		{"Intents", "intents", func(m Minute) int64 { return m.Intents }},
		{"Final replies", "finals", func(m Minute) int64 { return m.Finals }},
		{"Dead letters", "dead_letters", func(m Minute) int64 { return m.Dead }},
	}
	var out []Series
	for _, p := range pick {
		s := Series{Name: p.name, ID: p.id}
		// Records without an event time (an input that never decoded) count in the total
		// but have no place on the time axis.
		timed := minutes
		for len(timed) > 0 && timed[0].AtMs <= 0 {
			s.Total += p.get(timed[0])
			timed = timed[1:]
		}
		if len(timed) == 0 {
			out = append(out, s)
			continue
		}
		first, last := timed[0].AtMs, timed[len(timed)-1].AtMs
		span := (last-first)/60_000 + 1
		width := (span + maxBars - 1) / maxBars // minutes per bar
		n := (span + width - 1) / width
		vals := make([]int64, n)
		for _, m := range timed {
			v := p.get(m)
			vals[(m.AtMs-first)/60_000/width] += v
			s.Total += v
		}
		for _, v := range vals {
			s.Max = max(s.Max, v)
		}
		bw := 300 / float64(n)
		for i, v := range vals {
			if v == 0 {
				continue
			}
			h := float64(v) / float64(s.Max) * 58
			at := first + int64(i)*width*60_000
			s.Bars = append(s.Bars, Bar{X: float64(i) * bw, Y: 60 - h, W: max(bw-1, 1), H: h, Title: fmt.Sprintf("%s: %d", fmtTime(at), v)})
		}
		s.From, s.To = fmtMinute(first), fmtMinute(last+60_000)
		out = append(out, s)
	}
	return out
}

func fmtMinute(ms int64) string { return time.UnixMilli(ms).UTC().Format("01-02 15:04Z") }
