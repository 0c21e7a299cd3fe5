package console

import (
	"cmp"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/tracing"
)

// typeOrder is the order in which one attempt emits its events at one instant.
var typeOrder = map[pb.TraceEvent_EventType]int{
	pb.TraceEvent_ACTIVATION_START: 0, pb.TraceEvent_TOOL_CALL: 1, pb.TraceEvent_LLM_CALL: 2,
	pb.TraceEvent_INTENT_EMITTED: 3, pb.TraceEvent_SUSPENDED: 4, pb.TraceEvent_ERROR: 5, pb.TraceEvent_ACTIVATION_END: 6,
}

// sortEvents orders a trace's events by time, then as an attempt emits them: by step, by
// type, with an attempt's start first and its end last.
func sortEvents(evs []*pb.TraceEvent) {
	rank := func(ev *pb.TraceEvent) int {
		r, ok := typeOrder[ev.GetEventType()]
		if !ok {
			return 5
		}
		return r
	}
	slices.SortStableFunc(evs, func(a, b *pb.TraceEvent) int {
		if c := cmp.Compare(a.GetStartMs(), b.GetStartMs()); c != 0 {
			return c
		}
		ra, rb := rank(a), rank(b)
		if ra == 0 || rb == 0 || ra == 6 || rb == 6 {
			return ra - rb
		}
		if c := cmp.Compare(int64(a.GetStepIndex()), int64(b.GetStepIndex())); c != 0 {
			return c
		}
		return ra - rb
	})
}

// Row is one bar of a trace's waterfall.
type Row struct {
	Kind    string // attempt, model_call, tool_call, intent, suspended, error, gap
	Label   string
	Depth   int
	StartMs int64
	EndMs   int64
	// Left and Width place the bar on the trace's time axis, in percent of its length.
	Left, Width float64
	Error       bool
	SpanID      string
	Attrs       [][2]string
}

// Waterfall is a trace laid out on its time axis.
type Waterfall struct {
	TraceID  string
	Key      []byte
	Seq      int64
	StartMs  int64
	EndMs    int64
	Rows     []Row
	Ticks    []Tick
	HasError bool
}

// Tick is a labelled time on the axis.
type Tick struct {
	Left  float64
	Last  bool
	Label string
}

// Layout lays a trace's events (in sortEvents order) out as a waterfall: each attempt a bar
// from its start to its end with its events under it, and each suspension a gap from the
// SUSPENDED event to the next attempt's start (or to its deadline while none came). Bars are
// placed proportionally to their times.
func Layout(traceID []byte, evs []*pb.TraceEvent) Waterfall {
	w := Waterfall{TraceID: hex.EncodeToString(traceID)}
	if len(evs) == 0 {
		return w
	}
	w.Key, w.Seq = evs[0].GetEntityKey(), evs[0].GetSeq()
	var rows []Row
	var gap *Row // an open suspension
	attempt := -1
	for _, ev := range evs {
		at, end := ev.GetStartMs(), max(ev.GetEndMs(), ev.GetStartMs())
		a := ev.GetAttributes()
		r := Row{StartMs: at, EndMs: end, Depth: 1, SpanID: hex.EncodeToString(ev.GetSpanId()), Attrs: sortedAttrs(a)}
		switch ev.GetEventType() {
		case pb.TraceEvent_ACTIVATION_START:
			if gap != nil {
				gap.EndMs = max(gap.StartMs, at)
				rows = append(rows, *gap)
				gap = nil
			}
			r.Kind, r.Depth = "attempt", 0
			r.Label = "attempt (" + orDash(a[tracing.AttrActivationKind]) + ") at step " + strconv.FormatUint(uint64(ev.GetStepIndex()), 10)
			attempt = len(rows)
		case pb.TraceEvent_ACTIVATION_END:
			if attempt >= 0 {
				rows[attempt].EndMs = max(rows[attempt].EndMs, end)
				rows[attempt].Label += " → " + orDash(a[tracing.AttrActivationStatus])
				if a[tracing.AttrActivationStatus] == tracing.StatusTimeout {
					rows[attempt].Error = true
				}
				rows[attempt].Attrs = append(rows[attempt].Attrs, r.Attrs...)
				attempt = -1
			}
			continue
		case pb.TraceEvent_LLM_CALL:
			r.Kind, r.Label = "model_call", modelLabel(a, end-at)
		case pb.TraceEvent_TOOL_CALL:
			r.Kind, r.Label = "tool_call", toolLabel(a)
			r.Error = a[tracing.AttrErrorType] != "" || a[tracing.AttrApproved] == "false"
		case pb.TraceEvent_INTENT_EMITTED:
			r.Kind = "intent"
			r.Label = fmt.Sprintf("intent %s (%s), emission %s, %s", orDash(a[tracing.AttrToolName]), orDash(a[tracing.AttrIntentKind]), orDash(a[tracing.AttrAttempts]), orDash(a[tracing.AttrIntentID]))
		case pb.TraceEvent_SUSPENDED:
			r.Kind = "suspended"
			dl, _ := strconv.ParseInt(a[tracing.AttrDeadline], 10, 64)
			r.Label = "suspended on " + orDash(a[tracing.AttrIntentID]) + ", deadline " + fmtTime(dl)
			if esc := a[tracing.AttrEscalations]; esc != "" {
				r.Label += ", escalations " + esc
			}
			gap = &Row{Kind: "gap", Depth: 0, StartMs: at, EndMs: max(dl, at), Label: "waiting for " + orDash(a[tracing.AttrIntentID])}
		case pb.TraceEvent_ERROR:
			r.Kind, r.Error = "error", true
			r.Label = "error " + orDash(a[tracing.AttrReason])
			if t := a[tracing.AttrErrorType]; t != "" && t != a[tracing.AttrReason] {
				r.Label += " (" + t + ")" // model_circuit_open: the breaker refused the call
			}
		default:
			r.Kind, r.Label = "event", ev.GetEventType().String()
		}
		if attempt < 0 {
			r.Depth = 0
		}
		rows = append(rows, r)
	}
	if gap != nil {
		rows = append(rows, *gap)
	}
	w.StartMs, w.EndMs = rows[0].StartMs, rows[0].EndMs
	for _, r := range rows {
		w.StartMs, w.EndMs = min(w.StartMs, r.StartMs), max(w.EndMs, r.EndMs)
		w.HasError = w.HasError || r.Error
	}
	span := float64(max(w.EndMs-w.StartMs, 1))
	for i := range rows {
		rows[i].Left = float64(rows[i].StartMs-w.StartMs) / span * 100
		rows[i].Width = float64(rows[i].EndMs-rows[i].StartMs) / span * 100
	}
	for i := range 5 {
		t := w.StartMs + int64(float64(i)/4*span)
		w.Ticks = append(w.Ticks, Tick{Left: float64(i) * 25, Last: i == 4, Label: "+" + (time.Duration(t-w.StartMs) * time.Millisecond).String()})
	}
	w.Rows = rows
	return w
}

func modelLabel(a map[string]string, durMs int64) string {
	var b strings.Builder
	b.WriteString("model call ")
	b.WriteString(orDash(a[tracing.AttrRequestModel]))
	if m := a[tracing.AttrResponseModel]; m != "" && m != a[tracing.AttrRequestModel] {
		b.WriteString(" (answered by " + m + ")")
	}
	if in, out := a[tracing.AttrInputTokens], a[tracing.AttrOutputTokens]; in != "" || out != "" {
		b.WriteString(", tokens " + orDash(in) + " in / " + orDash(out) + " out")
	}
	if f := a[tracing.AttrResponseFinishReasons]; f != "" {
		b.WriteString(", finish " + f)
	}
	fmt.Fprintf(&b, ", %d ms", durMs)
	if c := a[tracing.AttrCache]; c != "" {
		b.WriteString(", cache " + c)
	}
	if c := a[tracing.AttrCase]; c != "" {
		b.WriteString(", case " + c)
	}
	return b.String()
}

func toolLabel(a map[string]string) string {
	if v := a[tracing.AttrApproved]; v != "" {
		out := "rejected"
		if v == "true" {
			out = "approved"
		}
		return "approval of " + orDash(a[tracing.AttrToolName]) + ": " + out
	}
	return "tool " + orDash(a[tracing.AttrToolName]) + ": " + orDash(a[tracing.AttrToolStatus])
}

func sortedAttrs(a map[string]string) [][2]string {
	out := make([][2]string, 0, len(a))
	for k, v := range a {
		out = append(out, [2]string{k, v})
	}
	slices.SortFunc(out, func(x, y [2]string) int { return strings.Compare(x[0], y[0]) })
	return out
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func fmtTime(ms int64) string {
	if ms <= 0 {
		return "—"
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000Z")
}
