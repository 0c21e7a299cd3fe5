package agent_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/canary"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/migrate"
	"github.com/beamagents/beamagents/statecodec"
	"github.com/beamagents/beamagents/tracing"
)

// versionHandler calls one tool and replies naming the agent version that ran the reply.
func versionHandler(version string) agent.Handler {
	return func(hc *agent.Context, tr agent.Trigger) error {
		res, err := hc.Tool("lookup", `{"q":"`+string(tr.Event)+`"}`)
		if err != nil {
			return err
		}
		return hc.Reply(version + ":" + string(tr.Event) + ":" + res.GetStatus().String())
	}
}

func versionAgent(tb testing.TB, name string) *agent.Agent {
	tb.Helper()
	a, err := agent.New(agent.Definition{Name: name, Handler: versionHandler(name)})
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// keysByBucket returns a key in the slice of s and one out of it.
func keysByBucket(s canary.Slice) (in, out []byte) {
	for i := 0; in == nil || out == nil; i++ {
		k := fmt.Appendf(nil, "key-%d", i)
		if s.Contains(k) {
			in = k
		} else {
			out = k
		}
	}
	return in, out
}

// canaryKey drives one key through a routing agent, returning the agent each trace names.
type canaryKey struct {
	t   *testing.T
	key []byte
	st  host.MapStore
}

func (k *canaryKey) run(a *agent.Agent, env *pb.AgentEnvelope) *host.Result {
	k.t.Helper()
	env.EntityKey = k.key
	res, err := host.Activate(context.Background(), a, k.st, env, host.Deps{AllowUnsigned: true})
	if err != nil {
		k.t.Fatalf("%s: %v", env, err)
	}
	k.st.Apply(res)
	return res
}

func (k *canaryKey) event(a *agent.Agent, at int64, text string) *host.Result {
	return k.run(a, &pb.AgentEnvelope{EventTimeMs: at, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(text)}})
}

func (k *canaryKey) result(a *agent.Agent, at int64, id string) *host.Result {
	return k.run(a, &pb.AgentEnvelope{EventTimeMs: at, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
		IntentId: id, EntityKey: k.key, Status: pb.ToolResult_OK}}})
}

// ranBy is the one agent the result's traces name.
func ranBy(t *testing.T, res *host.Result) string {
	t.Helper()
	names := map[string]bool{}
	for _, e := range res.Traces {
		names[e.GetAttributes()[tracing.AttrAgent]] = true
	}
	if len(names) != 1 {
		t.Fatalf("traces name agents %v, want one", names)
	}
	for n := range names {
		return n
	}
	return ""
}

func recordedAgent(t *testing.T, st host.MapStore) string {
	t.Helper()
	c, err := statecodec.DecodeContinuation(st[statecodec.CellContinuation])
	if err != nil || c == nil {
		t.Fatalf("continuation %v, %v", c, err)
	}
	return c.Agent()
}

// A new activation follows the slice; a suspended one resumes on the agent that started it
// even when a relaunch moved its key across the slice; events queued while it waited start
// on the slice's agent.
func TestCanaryRoutes(t *testing.T) {
	base, cand := versionAgent(t, "base"), versionAgent(t, "cand")
	half, _ := canary.FromPercent(50)
	routed, err := host.WithCanary(base, cand, half)
	if err != nil {
		t.Fatal(err)
	}
	in, out := keysByBucket(half)
	for _, tc := range []struct {
		key  []byte
		want string
	}{{in, "cand"}, {out, "base"}} {
		k := &canaryKey{t: t, key: tc.key, st: host.MapStore{}}
		res := k.event(routed, 1000, "a")
		if got := ranBy(t, res); got != tc.want {
			t.Errorf("key %s started on %s, want %s", tc.key, got, tc.want)
		}
		if got := recordedAgent(t, k.st); got != tc.want {
			t.Errorf("key %s recorded %q, want %q", tc.key, got, tc.want)
		}
		// Relaunch with the slice flipped for this key: 100% or 0%.
		flip := canary.Slice(canary.Buckets)
		if tc.want == "cand" {
			flip = 0
		}
		relaunched, err := host.WithCanary(base, cand, flip)
		if err != nil {
			t.Fatal(err)
		}
		k.event(relaunched, 1500, "queued") // waits in the inbox
		res = k.result(relaunched, 2000, res.Intents[0].GetIntentId())
		byAgent := map[string][]string{}
		for _, e := range res.Traces {
			a := e.GetAttributes()[tracing.AttrAgent]
			byAgent[a] = append(byAgent[a], fmt.Sprint(e.GetSeq()))
		}
		other := map[string]string{"cand": "base", "base": "cand"}[tc.want]
		if len(res.Finals) != 1 || string(res.Finals[0].GetMessage()) != tc.want+":a:OK" {
			t.Errorf("resumed finals %v, want the reply of %s", res.Finals, tc.want)
		}
		for _, e := range res.Traces {
			want := tc.want // the resumed activation, seq 0
			if e.GetSeq() == 1 {
				want = other // the queued event starts on the new slice's agent
			}
			if got := e.GetAttributes()[tracing.AttrAgent]; got != want {
				t.Errorf("key %s seq %d ran on %s, want %s", tc.key, e.GetSeq(), got, want)
			}
		}
		if got := recordedAgent(t, k.st); got != other {
			t.Errorf("the queued activation recorded %q, want %q", got, other)
		}
	}
}

// Without a canary a suspension records no agent: the state is what it always was.
func TestNoCanaryRecordsNoAgent(t *testing.T) {
	k := &canaryKey{t: t, key: []byte("k"), st: host.MapStore{}}
	k.event(versionAgent(t, "base"), 1000, "a")
	if got := recordedAgent(t, k.st); got != "" {
		t.Errorf("recorded %q without a canary", got)
	}
}

func TestWithCanaryRefuses(t *testing.T) {
	base, cand := versionAgent(t, "base"), versionAgent(t, "cand")
	steps := migrate.Steps()
	for _, m := range migrate.Versioned() {
		steps = append(steps, migrate.Step{Message: m, From: 1, Apply: func(protoreflect.Message) error { return nil }})
	}
	v2, err := migrate.NewRegistry(2, steps...)
	if err != nil {
		t.Fatal(err)
	}
	newer, err := agent.New(agent.Definition{Name: "newer", Handler: versionHandler("newer"), StateSchema: v2})
	if err != nil {
		t.Fatal(err)
	}
	routed, _ := host.WithCanary(base, cand, 10)
	for name, tc := range map[string]struct {
		a, c *agent.Agent
	}{
		"itself":         {base, base},
		"no candidate":   {base, nil},
		"another schema": {base, newer},
		"nested":         {routed, cand},
	} {
		if _, err := host.WithCanary(tc.a, tc.c, 10); !errors.Is(err, agent.ErrDefinition) {
			t.Errorf("%s: %v, want ErrDefinition", name, err)
		}
	}
	if _, err := host.WithCanary(base, cand, canary.Buckets+1); !errors.Is(err, agent.ErrDefinition) {
		t.Errorf("slice over 100%%: %v", err)
	}
}
