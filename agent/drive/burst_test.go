package drive_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/burst"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/openai"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/records"
)

const burstT0 = int64(1767225600000)

// echoBursts replies with the events of its trigger as "ms=text|…" (ms after burstT0); an
// activation whose first event starts with "lookup" first calls a tool, so it suspends.
func echoBursts(hc *agent.Context, tr agent.Trigger) error {
	if strings.HasPrefix(string(tr.Events()[0].Event), "lookup") {
		if _, err := hc.Tool("orders.lookup", `{"q":"x"}`); err != nil {
			return err
		}
	}
	var parts []string
	for _, e := range tr.Events() {
		parts = append(parts, fmt.Sprintf("%d=%s", e.EventTimeMs-burstT0, e.Event))
	}
	return hc.Reply(strings.Join(parts, "|"))
}

func burstDriver(t testing.TB, b burst.Rule, resolution int64) *drive.Driver {
	t.Helper()
	kr, err := intent.NewKeyring("k", map[string][]byte{"k": make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Definition{Name: "bursts", Handler: echoBursts, Burst: b})
	if err != nil {
		t.Fatal(err)
	}
	return &drive.Driver{Core: drive.Core{Agent: a, Deps: host.Deps{Keyring: kr}, OrderResolutionMs: resolution}}
}

func extAt(t *testing.T, key string, ms int64, text string) []byte {
	return envelope(t, &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: burstT0 + ms,
		Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(text)}})
}

// runOutputs runs one key and returns every output (kind byte, then bytes) and the final
// replies' messages, in emission order.
func runOutputs(d *drive.Driver, key string, values [][]byte) (all [][]byte, finals []string) {
	d.Run(context.Background(), []byte(key), values, func(kind int64, b []byte) {
		all = append(all, append([]byte{byte(kind)}, b...))
		if kind == records.OutFinal {
			f := &pb.FinalReply{}
			proto.Unmarshal(b, f)
			finals = append(finals, f.GetMessage())
		}
	})
	return all, finals
}

// TestBurstGathers: which events run together, by window and bounds; every case gives the
// same bytes in three shuffled arrival orders and at two ordering resolutions.
func TestBurstGathers(t *testing.T) {
	type ev struct {
		ms   int64
		text string
	}
	for _, tc := range []struct {
		name   string
		burst  burst.Rule
		events []ev
		want   []string
	}{
		{"off: one activation each", burst.Rule{}, []ev{{0, "a"}, {700, "b"}, {1900, "c"}}, []string{"0=a", "700=b", "1900=c"}},
		{"three in two seconds", burst.Rule{Window: 2 * time.Second}, []ev{{0, "a"}, {700, "b"}, {1900, "c"}}, []string{"0=a|700=b|1900=c"}},
		{"the window is the first event's", burst.Rule{Window: 2 * time.Second}, []ev{{0, "a"}, {1999, "b"}, {2000, "c"}, {3900, "d"}, {4000, "e"}},
			[]string{"0=a|1999=b", "2000=c|3900=d", "4000=e"}},
		{"MaxEvents splits", burst.Rule{Window: 10 * time.Second, MaxEvents: 2}, []ev{{0, "a"}, {100, "b"}, {200, "c"}, {300, "d"}, {400, "e"}},
			[]string{"0=a|100=b", "200=c|300=d", "400=e"}},
		{"MaxBytes splits", burst.Rule{Window: 10 * time.Second, MaxBytes: 5}, []ev{{0, "aa"}, {100, "bbb"}, {200, "cccccc"}, {300, "d"}},
			[]string{"0=aa|100=bbb", "200=cccccc", "300=d"}},
		{"ties by the envelopes' bytes", burst.Rule{Window: time.Second}, []ev{{5, "y"}, {5, "x"}, {5, "z"}}, []string{"5=x|5=y|5=z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var values [][]byte
			for _, e := range tc.events {
				values = append(values, extAt(t, "c1", e.ms, e.text))
			}
			var first [][]byte
			for i, res := range []int64{1, 1000, 1, 250} {
				order := slices.Clone(values)
				rand.New(rand.NewPCG(uint64(i), 9)).Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
				all, finals := runOutputs(burstDriver(t, tc.burst, res), "c1", order)
				if !slices.Equal(finals, tc.want) {
					t.Fatalf("order %d, resolution %d: replies %q, want %q", i, res, finals, tc.want)
				}
				if i == 0 {
					first = all
				} else if !slices.EqualFunc(all, first, bytes.Equal) {
					t.Fatalf("order %d, resolution %d: outputs differ from the first order's", i, res)
				}
			}
		})
	}
}

// TestBurstInbox: a burst that suspends keeps its events across the suspension; events that
// arrive while the key is suspended wait in the inbox and, once it resumes, run as bursts
// under the same bounds.
func TestBurstInbox(t *testing.T) {
	for _, tc := range []struct {
		name  string
		burst burst.Rule
		want  []string
	}{
		{"window", burst.Rule{Window: time.Second}, []string{"0=lookup|500=b", "5000=c|5100=d", "7000=e"}},
		{"MaxEvents", burst.Rule{Window: time.Second, MaxEvents: 1}, []string{"0=lookup", "500=b", "5000=c", "5100=d", "7000=e"}},
		{"off", burst.Rule{}, []string{"0=lookup", "500=b", "5000=c", "5100=d", "7000=e"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := []byte("c2")
			result := envelope(t, &pb.AgentEnvelope{EntityKey: key, EventTimeMs: burstT0 + 10_000, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
				IntentId: intent.ID(key, 0, 0), EntityKey: key, Status: pb.ToolResult_OK, Payload: []byte(`{}`), CompletedAtMs: burstT0 + 10_000}}})
			values := [][]byte{result, extAt(t, "c2", 7000, "e"), extAt(t, "c2", 5100, "d"), extAt(t, "c2", 0, "lookup"),
				extAt(t, "c2", 5000, "c"), extAt(t, "c2", 500, "b")}
			all, finals := runOutputs(burstDriver(t, tc.burst, 1), "c2", values)
			if !slices.Equal(finals, tc.want) {
				t.Fatalf("replies %q, want %q", finals, tc.want)
			}
			slices.Reverse(values)
			again, _ := runOutputs(burstDriver(t, tc.burst, 1000), "c2", values)
			if !slices.EqualFunc(all, again, bytes.Equal) {
				t.Fatal("another arrival order gives other outputs")
			}
		})
	}
}

// TestBurstModelCalls: three messages of a customer in two seconds, against a loopback
// OpenAI-compatible model answering after 500 ms: one model call and one reply with bursts,
// three of each without.
func TestBurstModelCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a slow loopback model")
	}
	for _, tc := range []struct {
		name  string
		burst burst.Rule
		calls int
	}{
		{"bursts", burst.Rule{Window: 2 * time.Second}, 1},
		{"off", burst.Rule{}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, srv, calls := slowModelDriver(t, tc.burst, 500*time.Millisecond)
			defer srv.Close()
			start := time.Now()
			_, finals := runOutputs(d, "c3", [][]byte{extAt(t, "c3", 1900, "and it is blue"), extAt(t, "c3", 0, "hi"), extAt(t, "c3", 800, "my order is late")})
			if int(calls.Load()) != tc.calls || len(finals) != tc.calls {
				t.Fatalf("%d model calls, %d replies; want %d of each", calls.Load(), len(finals), tc.calls)
			}
			if tc.calls == 1 && !strings.Contains(string(srv.Requests()[0]), `hi\nmy order is late\nand it is blue`) {
				t.Fatalf("the request does not carry the burst's events in order: %s", srv.Requests()[0])
			}
			t.Logf("%s: %d model calls, %v", tc.name, calls.Load(), time.Since(start).Round(time.Millisecond))
		})
	}
}

// slowModelDriver is a handler agent that proposes a reply to its trigger's text, answered by
// a loopback OpenAI-compatible server after delay.
func slowModelDriver(t testing.TB, b burst.Rule, delay time.Duration) (*drive.Driver, *llmtest.Server, *atomic.Int64) {
	t.Helper()
	calls := &atomic.Int64{}
	srv := llmtest.New(llmtest.OpenAI, func(int, []byte) llmtest.Reply {
		calls.Add(1)
		return llmtest.Reply{Hang: delay, Text: `{"case":"support.reply","fields":{"support.reply.text":"On it."}}`, InputTokens: 20, OutputTokens: 5}
	})
	os.Setenv("BURST_TEST_KEY", "sk-test")
	m, err := openai.New(provider.Config{BaseURL: srv.BaseURL(), APIKey: "env:BURST_TEST_KEY", Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	schema, err := support.Schema()
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Definition{Name: "burst-model", Schema: schema, Model: m, ModelID: "gpt-test", Burst: b,
		Handler: func(hc *agent.Context, tr agent.Trigger) error {
			v, err := hc.Propose(agent.Ask{Messages: []model.Message{{Role: model.RoleUser, Content: string(tr.Event)}}})
			if err != nil {
				return err
			}
			return hc.ReplyValue(v, schema)
		}})
	if err != nil {
		t.Fatal(err)
	}
	return &drive.Driver{Core: drive.Core{Agent: a, OrderResolutionMs: 1}}, srv, calls
}

// TestBurstDefinition: bounds that cannot be are refused when the agent is built.
func TestBurstDefinition(t *testing.T) {
	for _, b := range []burst.Rule{{Window: -time.Second}, {Window: time.Second, MaxEvents: -1}, {Window: 1500 * time.Microsecond}} {
		if _, err := agent.New(agent.Definition{Name: "b", Handler: echoBursts, Burst: b}); !errors.Is(err, agent.ErrDefinition) {
			t.Errorf("Burst %+v: %v, want a definition error", b, err)
		}
	}
}

// FuzzBurstOrder: one key's bursty traffic (events close together, lookups that suspend,
// their results, duplicates) gives the same bytes in any arrival order and at any ordering
// resolution, under bounds that split bursts.
func FuzzBurstOrder(f *testing.F) {
	f.Add(uint64(1), uint8(3))
	f.Add(uint64(7), uint8(0))
	f.Fuzz(func(t *testing.T, seed uint64, maxEvents uint8) {
		rng := rand.New(rand.NewPCG(seed, 1))
		b := burst.Rule{Window: time.Duration(1+rng.IntN(3000)) * time.Millisecond, MaxEvents: int(maxEvents % 5), MaxBytes: 8 + rng.IntN(32)}
		key := []byte("k")
		var values [][]byte
		at := int64(0)
		for i := range 2 + rng.IntN(14) {
			at += int64(rng.IntN(4)) * 300
			text := fmt.Sprintf("e%d", i)
			if rng.IntN(5) == 0 {
				text = "lookup" + text
				r := at + int64(rng.IntN(8000))
				values = append(values, envelope(t, &pb.AgentEnvelope{EntityKey: key, EventTimeMs: burstT0 + r, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
					IntentId: intent.ID(key, int64(rng.IntN(3)), 0), EntityKey: key, Status: pb.ToolResult_OK, Payload: []byte(`{}`), CompletedAtMs: burstT0 + r}}}))
			}
			values = append(values, extAt(t, "k", at, text))
			if rng.IntN(8) == 0 {
				values = append(values, values[len(values)-1])
			}
		}
		want, _ := runOutputs(burstDriver(t, b, 1), "k", values)
		for i, res := range []int64{1, 700, 60000} {
			order := slices.Clone(values)
			rand.New(rand.NewPCG(seed, uint64(i))).Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
			if got, _ := runOutputs(burstDriver(t, b, res), "k", order); !slices.EqualFunc(got, want, bytes.Equal) {
				t.Fatalf("resolution %d, shuffled: %d outputs differ from %d in order", res, len(got), len(want))
			}
		}
	})
}
