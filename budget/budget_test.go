package budget_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/budget"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name      string
		b         budget.Budget
		maxTokens int64
		want      string // a part of the error; empty: valid
	}{
		{"valid, fail by default", budget.Budget{Tokens: 1000, Per: time.Hour}, 100, ""},
		{"valid, a day", budget.Budget{Tokens: 100, Per: 24 * time.Hour, Degrade: budget.DegradePark{}}, 100, ""},
		{"no MaxTokens", budget.Budget{Tokens: 1000, Per: time.Hour}, 0, "MaxTokens"},
		{"tokens below MaxTokens", budget.Budget{Tokens: 99, Per: time.Hour}, 100, "below"},
		{"no window", budget.Budget{Tokens: 1000}, 100, "minutes"},
		{"seconds", budget.Budget{Tokens: 1000, Per: 90 * time.Second}, 100, "minutes"},
		{"a model without an id", budget.Budget{Tokens: 1000, Per: time.Hour, Degrade: budget.DegradeModel{}}, 100, "ModelID"},
		{"valid cost budget", budget.Budget{CostMicros: 5, Per: time.Hour}, 100, ""},
		{"cost and tokens", budget.Budget{Tokens: 1000, CostMicros: 5_000_000, Per: time.Hour}, 100, "exactly one"},
		{"neither cost nor tokens", budget.Budget{Per: time.Hour}, 100, "exactly one"},
		{"negative cost", budget.Budget{CostMicros: -1, Per: time.Hour}, 100, "negative"},
		{"cost budget without MaxTokens", budget.Budget{CostMicros: 5_000_000, Per: time.Hour}, 0, "MaxTokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.b.Check(tc.maxTokens)
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Check: %v, want %q", err, tc.want)
			}
		})
	}
}

func TestWindowOf(t *testing.T) {
	b := budget.Budget{Per: time.Minute}
	for _, tc := range []struct{ at, want int64 }{{0, 0}, {59999, 0}, {60000, 60000}, {-1, -60000}, {-60000, -60000}, {125000, 120000}} {
		if got := b.WindowOf(tc.at); got != tc.want {
			t.Errorf("WindowOf(%d) = %d, want %d", tc.at, got, tc.want)
		}
	}
}

func external(key string, at int64, text string) budget.Event {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(&pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: at,
		Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(text)}})
	return budget.Event{Key: []byte(key), AtMs: at, Value: b}
}

func grantOf(t *testing.T, ev budget.Event) *pb.AgentEnvelope {
	t.Helper()
	env := &pb.AgentEnvelope{}
	if err := proto.Unmarshal(ev.Value, env); err != nil {
		t.Fatal(err)
	}
	return env
}

// Three grants of 100 fit a window of 300: the fourth event of a window is over budget, the
// next window starts afresh, and the order is the events' time, not their arrival.
func TestAdmitWindows(t *testing.T) {
	adm := budget.Admission{Budget: budget.Budget{Tokens: 300, Per: time.Minute}, Grant: 100}
	in := []budget.Event{external("b", 40000, "4"), external("a", 1000, "1"), external("a", 20000, "2"),
		external("b", 30000, "3"), external("a", 61000, "5"), external("a", 59999, "over")}
	out := adm.AdmitAll(func(string) string { return "t" }, in)
	want := map[string]struct {
		window, tokens int64
		over           bool
	}{"1": {0, 100, false}, "2": {0, 100, false}, "3": {0, 100, false}, "4": {0, 0, true}, "over": {0, 0, true}, "5": {60000, 100, false}}
	if len(out) != len(in) {
		t.Fatalf("%d events out of %d", len(out), len(in))
	}
	for _, ev := range out {
		env := grantOf(t, ev)
		g, w := env.GetBudgetGrant(), want[string(env.GetExternalEvent())]
		if g.GetWindowStartMs() != w.window || g.GetTokens() != w.tokens || g.GetOverBudget() != w.over || g.GetTenant() != "t" || g.GetWindowMs() != 60000 {
			t.Errorf("event %s: grant %v, want %+v", env.GetExternalEvent(), g, w)
		}
	}
}

// Parked events move to the next window's start and are admitted there before its own
// events; the grant keeps the time they came with; a window they fill parks them again.
func TestAdmitPark(t *testing.T) {
	adm := budget.Admission{Budget: budget.Budget{Tokens: 100, Per: time.Minute, Degrade: budget.DegradePark{}}, Grant: 100}
	in := []budget.Event{external("k", 1000, "a"), external("k", 2000, "b"), external("k", 3000, "c"), external("k", 65000, "d")}
	out := adm.AdmitAll(func(string) string { return "t" }, in)
	got := map[string][3]int64{}
	for _, ev := range out {
		env := grantOf(t, ev)
		g := env.GetBudgetGrant()
		if g.GetOverBudget() || g.GetTokens() != 100 || ev.AtMs != env.GetEventTimeMs() {
			t.Errorf("event %s: grant %v at %d", env.GetExternalEvent(), g, ev.AtMs)
		}
		got[string(env.GetExternalEvent())] = [3]int64{env.GetEventTimeMs(), g.GetWindowStartMs(), g.GetParkedFromMs()}
	}
	want := map[string][3]int64{"a": {1000, 0, 0}, "b": {60000, 60000, 2000}, "c": {120000, 120000, 3000}, "d": {180000, 180000, 65000}}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("event %s: (event time, window, parked from) %v, want %v", k, got[k], w)
		}
	}
	// Unstamped gives the event back as it came.
	for _, ev := range out {
		env := budget.Unstamped(grantOf(t, ev))
		if env.GetBudgetGrant() != nil || env.GetEventTimeMs() != map[string]int64{"a": 1000, "b": 2000, "c": 3000, "d": 65000}[string(env.GetExternalEvent())] {
			t.Errorf("unstamped %v", env)
		}
	}
}

// Run in steps, as the streaming stage does (each firing the events due by its time, the
// tally carried in its cell), stamps what AdmitAll stamps.
func TestRunInStepsIsAdmitAll(t *testing.T) {
	adm := budget.Admission{Budget: budget.Budget{Tokens: 200, Per: time.Minute, Degrade: budget.DegradePark{}}, Grant: 100}
	var in []budget.Event
	for i := range 40 {
		in = append(in, external([]string{"x", "y", "z"}[i%3], int64(i*i*97%240000), string(rune('a'+i%26))))
	}
	all := adm.AdmitAll(func(string) string { return "t" }, in)
	var steps []budget.Event
	var tally budget.Tally
	pending := in
	for at := int64(0); len(pending) > 0; at += 7000 {
		var due, rest []budget.Event
		for _, ev := range pending {
			if ev.AtMs <= at {
				due = append(due, ev)
			} else {
				rest = append(rest, ev)
			}
		}
		cell, err := budget.DecodeTally(budget.MarshalTally(tally))
		if err != nil {
			t.Fatal(err)
		}
		out, parked := adm.Run(&cell, "t", due, at)
		tally = cell
		steps = append(steps, out...)
		pending = append(rest, parked...)
	}
	if len(steps) != len(all) {
		t.Fatalf("%d events in steps, %d at once", len(steps), len(all))
	}
	for i := range all {
		if string(all[i].Value) != string(steps[i].Value) {
			t.Fatalf("event %d differs:\n%v\n%v", i, grantOf(t, all[i]), grantOf(t, steps[i]))
		}
	}
}

// The bound: with every granted activation spending at most its grant, a window's spend is
// at most the budget, and once an event was refused in it at least Tokens - Grant + 1 was
// granted.
func TestBound(t *testing.T) {
	for _, grant := range []int64{1, 70, 100, 333} {
		adm := budget.Admission{Budget: budget.Budget{Tokens: 1000, Per: time.Minute}, Grant: grant}
		var in []budget.Event
		for i := range 200 {
			in = append(in, external("k", int64(i*1000), "e"))
		}
		granted := map[int64]int64{}
		refused := map[int64]bool{}
		for _, ev := range adm.AdmitAll(func(string) string { return "" }, in) {
			g := grantOf(t, ev).GetBudgetGrant()
			granted[g.GetWindowStartMs()] += g.GetTokens()
			refused[g.GetWindowStartMs()] = refused[g.GetWindowStartMs()] || g.GetOverBudget()
		}
		for w, n := range granted {
			if n > 1000 || (refused[w] && n < 1000-grant+1) {
				t.Errorf("grant %d: window %d granted %d (refused some: %v)", grant, w, n, refused[w])
			}
		}
	}
}

// Only external events are admitted: other inputs pass on byte for byte.
func TestOnlyExternalEvents(t *testing.T) {
	res, _ := proto.Marshal(&pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: 5, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{IntentId: "i"}}})
	for _, v := range [][]byte{res, {0x00, 1, 2}, []byte("junk"), nil} {
		if budget.Admissible(v) != nil {
			t.Errorf("%x is admissible", v)
		}
	}
	adm := budget.Admission{Budget: budget.Budget{Tokens: 1, Per: time.Minute}, Grant: 1}
	out := adm.AdmitAll(func(string) string { return "" }, []budget.Event{{Key: []byte("k"), Value: res}})
	if len(out) != 1 || string(out[0].Value) != string(res) {
		t.Fatalf("a tool result changed: %v", out)
	}
}

func TestCellsRoundTrip(t *testing.T) {
	for _, tl := range []budget.Tally{{}, {Started: true}, {WindowMs: -60000, Granted: 5, Started: true}, {WindowMs: math.MaxInt64 / 2, Granted: 1 << 40, Started: true}} {
		got, err := budget.DecodeTally(budget.MarshalTally(tl))
		if err != nil || got != tl {
			t.Errorf("tally %+v: %+v, %v", tl, got, err)
		}
	}
	ev := external("k", -3, "x")
	got, err := budget.DecodeFrame(budget.MarshalFrame(ev))
	if err != nil || string(got.Key) != "k" || got.AtMs != -3 || string(got.Value) != string(ev.Value) {
		t.Errorf("frame: %+v, %v", got, err)
	}
	for _, bad := range [][]byte{{0x08, 0x02}, {0xff}, {0x0d, 0, 0, 0, 0}, budget.MarshalFrame(budget.Event{})} {
		if _, err := budget.DecodeFrame(bad); !errors.Is(err, budget.ErrCell) {
			t.Errorf("frame %x: %v", bad, err)
		}
		if _, err := budget.DecodeTally(bad); !errors.Is(err, budget.ErrCell) {
			t.Errorf("tally %x: %v", bad, err)
		}
	}
}
