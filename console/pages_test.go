package console_test

import (
	"encoding/hex"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/console"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/tracing"
)

func run[T any](t *testing.T, ctx contextT, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// visit opens a page and waits for its content.
func visit(t *testing.T, ctx contextT, u string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS("main"))); err != nil {
		t.Fatalf("%s: %v", u, err)
	}
}

func text(t *testing.T, ctx contextT, sel string) string {
	t.Helper()
	return strings.TrimSpace(run(t, ctx, chromedp.Text(chromedp.CSS(sel))))
}

// textWhileLoading is text for a page that may be reloading itself: a node that went away
// with the old document reads as "" (polled again), not as a failure.
func textWhileLoading(ctx contextT, sel string) string {
	v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(v)
}

// Hostile values of the outputs: markup in keys, details, model text and attributes, a key
// far longer than a screen, and bytes that are not UTF-8.
var (
	scriptKey  = `<script>window.pwned=1</script>`
	longKey    = strings.Repeat("k", 20000) + "-end"
	invalidKey = "\xff\xfe<b>bad</b>\x00"
)

func writeHostile(t *testing.T, dir string) {
	var traces, dead, finals []proto.Message
	for _, k := range []string{scriptKey, longKey, invalidKey} {
		traces = append(traces, approvalWait(k)...)
		traces = append(traces, event(k, 0, pb.TraceEvent_ERROR, 0, T0+7000, T0+7000,
			map[string]string{tracing.AttrReason: `"><img src=x onerror="window.pwned=2">`, "hostile": "</td><script>window.pwned=3</script>"}))
		d := modelError(t, k, T0+8000)
		d.Detail = `<img src=x onerror="window.pwned=4">`
		dead = append(dead, d)
		finals = append(finals, &pb.FinalReply{EntityKey: []byte(k), Message: "</code><script>window.pwned=5</script>", TraceId: traceID(k, 0), CreatedAtMs: T0 + 9000})
	}
	dead = append(dead, &pb.ActivationErrorRecord{Reason: `<script>window.pwned=6</script>`, Detail: "raw", FailedInput: &pb.ActivationErrorRecord_RawRecord{RawRecord: []byte("\xff<script>window.pwned=7</script>")}})
	// A string field that is not UTF-8 does not decode: the record is counted, not shown.
	bad := marshal(t, &pb.FinalReply{EntityKey: []byte("customer-x")})
	bad = append(protowire.AppendTag(bad, 6, protowire.BytesType), 3, 0xe2, 0x28, 0xa1)
	os.WriteFile(filepath.Join(dir, "finals-00001-of-00002.binpb"), append(protowire.AppendVarint(nil, uint64(len(bad))), bad...), 0o644)
	for name, msgs := range map[string][]proto.Message{"traces-00000-of-00001.binpb": traces, "dead_letters-00000-of-00001.binpb": dead, "finals-00000-of-00001.binpb": finals} {
		if err := os.WriteFile(filepath.Join(dir, name), frames(t, msgs...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// inert checks that no hostile markup became an element and no script but the page's own ran.
func inert(t *testing.T, ctx contextT, page string) {
	t.Helper()
	ok := run(t, ctx, chromedp.Evaluate[bool](`window.pwned === undefined && document.scripts.length === 1 &&
		document.querySelectorAll('img').length === 0 &&
		![...document.querySelectorAll('b')].some(b => b.textContent === 'bad')`))
	if !ok {
		html := run(t, ctx, chromedp.OuterHTML(chromedp.CSS("main")))
		t.Fatalf("%s: hostile content is live:\n%.3000s", page, html)
	}
}

// Every page renders in a real Chromium over a run's outputs; hostile values stay text.
func TestPagesInChromium(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir)
	writeHostile(t, dir)
	st := openStore(t, filepath.Join(t.TempDir(), "console.db"))
	scan(t, st, dir)
	base := serve(t, console.Options{Store: st})
	ctx := browser(t)

	visit(t, ctx, base+"/")
	inert(t, ctx, "/")
	if got := text(t, ctx, "#reasons"); !strings.Contains(got, "model_error") || !strings.Contains(got, "envelope_invalid") || !strings.Contains(got, "<script>window.pwned=6</script>") {
		t.Fatalf("reasons: %q", got)
	}
	if got := text(t, ctx, "#suspended"); !strings.Contains(got, "customer-4") || !strings.Contains(got, "APPROVAL payments.refund") || !strings.Contains(got, "bytes)") {
		t.Fatalf("suspended: %q", got)
	}
	if got := text(t, ctx, "#malformed"); got != "1 records did not decode" {
		t.Fatalf("malformed: %q", got)
	}
	if got := text(t, ctx, "#series-dead_letters .total"); got != "6" { // before the live one below
		t.Fatalf("dead letters total %q", got)
	}
	screenshot(t, ctx, "hostile-overview")

	// The open page follows new outputs by itself (server-sent events, then a reload).
	if _, _, err := st.Ingest("", console.Offset{}, []console.Record{{Kind: kindOfCode('d'), Data: marshal(t, modelError(t, "customer-live", T0+20_000))}}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); textWhileLoading(ctx, "#series-dead_letters .total") != "7"; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the overview did not update itself")
		}
	}

	visit(t, ctx, base+"/dead_letters")
	inert(t, ctx, "/dead_letters")
	if got := text(t, ctx, "main"); !strings.Contains(got, "Redrive is off") || !strings.Contains(got, `{"entityKey": 7}`) {
		t.Fatalf("dead letters: %.2000s", got)
	}

	for _, k := range []string{"customer-2", scriptKey, longKey, invalidKey} {
		visit(t, ctx, base+console.KeyPath([]byte(k)))
		inert(t, ctx, "entity "+k[:min(len(k), 20)])
		shown := text(t, ctx, "#entity-key")
		switch k {
		case longKey:
			if len(shown) > 400 || !strings.Contains(shown, "bytes)") {
				t.Fatalf("long key shown as %d bytes", len(shown))
			}
		case invalidKey:
			if shown != `"\xff\xfe<b>bad</b>\x00"` {
				t.Fatalf("invalid key shown as %q", shown)
			}
		default:
			if shown != k {
				t.Fatalf("key shown as %q", shown)
			}
		}
		if k == "customer-2" {
			if got := text(t, ctx, "#activations"); !strings.Contains(got, "orders.lookup") {
				t.Fatalf("activations: %q", got)
			}
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#activations a.trace")), chromedp.WaitVisible(chromedp.ID("waterfall"))); err != nil {
				t.Fatal(err)
			}
			checkWaterfall(t, ctx)
			screenshot(t, ctx, "waterfall")
		}
	}
	visit(t, ctx, base+console.TracePath(traceID(scriptKey, 0)))
	inert(t, ctx, "hostile trace")
	if got := text(t, ctx, "#waterfall tr.err .label"); !strings.Contains(got, `"><img src=x`) {
		t.Fatalf("error row: %q", got)
	}

	// In an order where no search lands on the page before it (Chromium reports no load then).
	for _, tc := range []struct{ q, want string }{
		{hex.EncodeToString(traceID("customer-2", 0)), "/traces/" + hex.EncodeToString(traceID("customer-2", 0))},
		{"customer-4", console.KeyPath([]byte("customer-4"))},
		{intent.ID([]byte("customer-2"), 0, 0), "/traces/" + hex.EncodeToString(traceID("customer-2", 0))},
		{scriptKey, console.KeyPath([]byte(scriptKey))},
		{"customer", "/search?q=customer"},
	} {
		q, want := tc.q, tc.want
		visit(t, ctx, base+"/search?q="+url.QueryEscape(q))
		inert(t, ctx, "search "+q)
		if loc := run(t, ctx, chromedp.Location()); !strings.HasSuffix(loc, want) {
			t.Fatalf("search %q went to %s, want %s", q, loc, want)
		}
	}
	if got := text(t, ctx, "#matches"); !strings.Contains(got, "customer-2") || !strings.Contains(got, "customer-7") {
		t.Fatalf("prefix matches %q", got)
	}
	visit(t, ctx, base+"/approvals")
	inert(t, ctx, "/approvals")
	if got := text(t, ctx, "#waiting"); !strings.Contains(got, "customer-4") {
		t.Fatalf("waiting approvals %q", got)
	}
}

// checkWaterfall: every bar starts where its span starts on the trace's time axis and is as
// long as the span lasts (bars of instants keep a minimum visible width); the lookup's
// model calls, the minute waiting for the tool and the tool call are all there.
func checkWaterfall(t *testing.T, ctx contextT) {
	t.Helper()
	type bar struct {
		Kind                 string
		Start, End           float64
		Left, Width, WidthPx float64
	}
	bars := run(t, ctx, chromedp.Evaluate[[]bar](`(() => {
		const wf = document.getElementById('waterfall');
		return [...wf.querySelectorAll('tr.row')].map(r => {
			const tr = r.querySelector('.track').getBoundingClientRect(), b = r.querySelector('.bar').getBoundingClientRect();
			return {Kind: r.dataset.kind, Start: +r.dataset.start, End: +r.dataset.end,
				Left: (b.left - tr.left) / tr.width, Width: b.width / tr.width, WidthPx: b.width};
		});
	})()`))
	t0 := run(t, ctx, chromedp.Evaluate[float64](`+document.getElementById('waterfall').dataset.start`))
	t1 := run(t, ctx, chromedp.Evaluate[float64](`+document.getElementById('waterfall').dataset.end`))
	kinds := map[string]int{}
	for _, b := range bars {
		kinds[b.Kind]++
		if want := (b.Start - t0) / (t1 - t0); math.Abs(b.Left-want) > 0.005 {
			t.Errorf("%s bar at %.4f of the axis, its span starts at %.4f", b.Kind, b.Left, want)
		}
		if want := (b.End - b.Start) / (t1 - t0); b.WidthPx > 4 && math.Abs(b.Width-want) > 0.005 {
			t.Errorf("%s bar %.4f of the axis long, its span lasts %.4f", b.Kind, b.Width, want)
		}
	}
	if kinds["model_call"] != 2 || kinds["gap"] != 1 || kinds["attempt"] != 2 || kinds["tool_call"] != 1 || kinds["intent"] != 1 {
		t.Fatalf("waterfall rows %v", kinds)
	}
	gap := bars[slicesIndex(bars, func(b bar) bool { return b.Kind == "gap" })]
	if gap.Start != float64(T0+1500) || gap.End != float64(T0+60_000) || gap.Width < 0.9 {
		t.Fatalf("the suspension's gap %+v", gap)
	}
}
