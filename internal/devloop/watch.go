package devloop

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	pubsub "cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/jsontext"
	"github.com/beamagents/beamagents/tracing"
)

// watch prints one line per activation attempt (from the trace events), per final reply
// and per dead letter.
type watch struct {
	out            io.Writer
	errorf         func(format string, args ...any)
	client         *pubsub.Client
	subs           []string
	traces, finals string
	attempts       map[string]*attempt // by the attempt's span id
	mu             sync.Mutex
	answered       map[string]bool // entity keys with a final reply or a dead letter
	changed        chan struct{}
}

// attempt is what the trace events of one activation attempt said so far.
type attempt struct {
	key                 string
	seq                 int64
	kind                string
	billed, cached      int
	emitted, suspension []string
	// signal and wake are the durable wait the attempt suspended on: the awaited signal's
	// name and the wake time (ms), when set.
	signal, wake string
}

func (w *watch) loop(ctx context.Context) {
	for ctx.Err() == nil {
		if w.pullOnce(ctx) == 0 {
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// flush prints whatever the subscriptions still hold.
func (w *watch) flush(ctx context.Context) {
	for i := 0; i < 50 && w.pullOnce(ctx) > 0; i++ {
	}
}

func (w *watch) pullOnce(ctx context.Context) int {
	n := 0
	for _, sub := range w.subs {
		pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		resp, err := w.client.SubscriptionAdminClient.Pull(pctx, &pubsubpb.PullRequest{Subscription: sub, MaxMessages: 500})
		cancel()
		if err != nil {
			continue
		}
		var ids []string
		for _, rm := range resp.GetReceivedMessages() {
			ids = append(ids, rm.GetAckId())
			w.handle(sub, rm.GetMessage().GetData())
			n++
		}
		if len(ids) > 0 {
			w.client.SubscriptionAdminClient.Acknowledge(context.WithoutCancel(ctx), &pubsubpb.AcknowledgeRequest{Subscription: sub, AckIds: ids})
		}
	}
	return n
}

func (w *watch) handle(sub string, data []byte) {
	if sub != w.traces {
		key, line := describe(data, sub == w.finals)
		fmt.Fprintln(w.out, line)
		w.mu.Lock()
		w.answered[key] = true
		if w.changed != nil {
			close(w.changed)
			w.changed = nil
		}
		w.mu.Unlock()
		return
	}
	ev := &pb.TraceEvent{}
	if proto.Unmarshal(data, ev) != nil {
		return
	}
	id := hex.EncodeToString(ev.GetParentSpanId())
	if ev.GetEventType() == pb.TraceEvent_ACTIVATION_START || ev.GetEventType() == pb.TraceEvent_ACTIVATION_END {
		id = hex.EncodeToString(ev.GetSpanId())
	}
	a := w.attempts[id]
	if a == nil {
		a = &attempt{key: string(ev.GetEntityKey()), seq: ev.GetSeq()}
		w.attempts[id] = a
	}
	attrs := ev.GetAttributes()
	switch ev.GetEventType() {
	case pb.TraceEvent_ACTIVATION_START:
		a.kind = attrs[tracing.AttrActivationKind]
	case pb.TraceEvent_LLM_CALL:
		if attrs[tracing.AttrBilled] == "true" {
			a.billed++
		} else {
			a.cached++
		}
	case pb.TraceEvent_INTENT_EMITTED:
		a.emitted = append(a.emitted, fmt.Sprintf("%s %s %s", attrs[tracing.AttrIntentKind], attrs[tracing.AttrToolName], attrs[tracing.AttrIntentID]))
	case pb.TraceEvent_SUSPENDED:
		if ids := attrs[tracing.AttrIntentID]; ids != "" {
			a.suspension = strings.Split(ids, ",")
		}
		a.signal, a.wake = attrs[tracing.AttrSignalName], attrs[tracing.AttrWakeAt]
	case pb.TraceEvent_ACTIVATION_END:
		delete(w.attempts, id)
		fmt.Fprintln(w.out, a.line(attrs[tracing.AttrActivationStatus]))
	}
}

// line is the attempt's line: key, seq, what drove it, how it ended, its model calls and
// what it waits on.
func (a *attempt) line(status string) string {
	calls := fmt.Sprintf("model calls %d", a.billed)
	if a.cached > 0 {
		calls += fmt.Sprintf(" (+%d from the replay cache)", a.cached)
	}
	s := fmt.Sprintf("activation   %-12s seq %d  %s → %s  %s", a.key, a.seq, a.kind, status, calls)
	if status == tracing.StatusSuspended {
		waits := a.emitted
		if len(waits) == 0 {
			waits = a.suspension
		}
		if a.signal != "" {
			waits = append(waits, "SIGNAL "+a.signal)
		}
		if ms, err := strconv.ParseInt(a.wake, 10, 64); err == nil {
			waits = append(waits, "TIMER "+time.UnixMilli(ms).UTC().Format(time.RFC3339))
		}
		s += "  waits on " + strings.Join(waits, ", ")
	}
	return s
}

// waitAll waits until every entity of want has a final reply or a dead letter (or ctx
// ends), then says so: demo --live's end. It reports whether all did.
func (w *watch) waitAll(ctx context.Context, want map[string]bool) bool {
	for {
		w.mu.Lock()
		open := 0
		for k := range want {
			if !w.answered[k] {
				open++
			}
		}
		ch := make(chan struct{})
		w.changed = ch
		w.mu.Unlock()
		if open == 0 {
			keys := slices.Collect(func(yield func(string) bool) {
				for k := range want {
					if !yield(k) {
						return
					}
				}
			})
			sort.Strings(keys)
			fmt.Fprintf(w.out, "every conversation answered: %s\n", strings.Join(keys, ", "))
			return true
		}
		select {
		case <-ctx.Done():
			w.errorf("stopped with %d conversation(s) open: %v", open, ctx.Err())
			return false
		case <-ch:
		}
	}
}

// describe is the line of a final reply (final) or a dead letter, and its entity key.
func describe(data []byte, final bool) (key, line string) {
	if final {
		f := &pb.FinalReply{}
		if proto.Unmarshal(data, f) != nil {
			return "", "final reply (undecodable)"
		}
		msg := replyText(f)
		if len(msg) > 160 {
			msg = msg[:160] + "…"
		}
		return string(f.GetEntityKey()), fmt.Sprintf("final reply  %-12s %s", f.GetEntityKey(), msg)
	}
	d := &pb.ActivationErrorRecord{}
	if proto.Unmarshal(data, d) != nil {
		return "", "dead letter (undecodable)"
	}
	detail := d.GetDetail()
	if len(detail) > 300 {
		detail = detail[:300] + "…"
	}
	return string(d.GetEntityKey()), fmt.Sprintf("dead letter  %-12s %s: %s", d.GetEntityKey(), d.GetReason(), detail)
}

// replyText is the text of the reply's fields (its message is the admitted proposal
// document), or the message itself when it has none.
func replyText(f *pb.FinalReply) string {
	var doc struct {
		Value struct {
			Fields map[string]any `json:"fields"`
		} `json:"value"`
	}
	if jsontext.Decode(f.GetMessage(), &doc, jsontext.DecodeOptions{}) == nil {
		var parts []string
		for _, v := range doc.Value.Fields {
			if s, ok := v.(string); ok {
				parts = append(parts, s)
			}
		}
		if len(parts) > 0 {
			sort.Strings(parts)
			return strings.Join(parts, " ")
		}
	}
	return strings.TrimSpace(f.GetMessage())
}
