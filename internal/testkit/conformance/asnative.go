package conformance

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/examples/devices"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/records"
)

// SameAsNative checks that an implementation of the devices agent, given by its definition,
// is the native devices agent byte for byte on the demo traffic, in memory: the same model
// calls at the same positions (the recorded script answers both), the same signed dispatch
// intent with the exact uint64 id, the same finals, traces, dead letters and state writes.
// The definition runs under the native agent's name, so that the traces' agent attributes
// agree too.
func SameAsNative(t *testing.T, def agent.Definition) {
	t.Helper()
	native, err := devices.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	def.Name = devices.Name
	adapted, err := agent.New(def)
	if err != nil {
		t.Fatal(err)
	}
	kr := memKeyring(t)
	envs := demoEnvelopes(t)
	want, got := activateAll(native, kr, envs), activateAll(adapted, kr, envs)
	calls := []int{0, 0, 0, 2, 1, 0}
	for i := range want {
		w, g := want[i], got[i]
		if g.ModelCalls != w.ModelCalls || g.ModelCalls != calls[i] {
			t.Errorf("envelope %d: %d model calls, native %d, want %d", i, g.ModelCalls, w.ModelCalls, calls[i])
		}
		for _, o := range []struct {
			what string
			w, g []proto.Message
		}{
			{"intents", msgs(w.Intents), msgs(g.Intents)},
			{"finals", msgs(w.Finals), msgs(g.Finals)},
			{"traces", msgs(w.Traces), msgs(g.Traces)},
			{"dead letters", msgs(w.DeadLetters), msgs(g.DeadLetters)},
		} {
			if len(o.g) != len(o.w) {
				t.Fatalf("envelope %d: %d %s, native %d", i, len(o.g), o.what, len(o.w))
			}
			for k := range o.w {
				if !bytes.Equal(marshalDet(t, o.g[k]), marshalDet(t, o.w[k])) {
					t.Errorf("envelope %d: %s %d differ:\n%v\nnative:\n%v", i, o.what, k, o.g[k], o.w[k])
				}
			}
		}
		for _, c := range slices.Sorted(maps.Keys(w.Writes)) {
			if !bytes.Equal(g.Writes[c], w.Writes[c]) {
				t.Errorf("envelope %d: cell %v differs from the native agent's", i, c)
			}
		}
		if len(g.Writes) != len(w.Writes) {
			t.Errorf("envelope %d: %d cells written, native %d", i, len(g.Writes), len(w.Writes))
		}
	}
	ti := got[3].Intents[0]
	if ti.GetToolName() != devices.ToolDispatch || !strings.Contains(ti.GetArgsJson(), `"device_id":"9007199254740993"`) || intent.Verify(ti, kr) != intent.OK {
		t.Errorf("dispatch intent %s %s", ti.GetToolName(), ti.GetArgsJson())
	}
	if msg := got[4].Finals[0].GetMessage(); !strings.Contains(msg, "T-4411") {
		t.Errorf("final %q", msg)
	}
}

// TurnLimitAsNative checks that an implementation of the devices agent, given by its factory
// (which takes the devices agent's "script" member), ends a model that never stops calling
// tools as the native agent does: budget_exceeded after devices.MaxTurns model calls,
// nothing written.
func TurnLimitAsNative(t *testing.T, factory agent.Factory) {
	t.Helper()
	var script strings.Builder
	for step := 2; step <= 10; step += 2 {
		fmt.Fprintf(&script, `{"entity":"dev-17","seq":0,"step":%d,"tool_calls":[{"id":"call_%d","name":"devices.lookup","arguments":{"device_id":17}}],"input_tokens":10,"output_tokens":5}`+"\n", step, step)
	}
	path := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(path, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := []byte(`{"script":"` + path + `"}`)
	native, err := devices.New(conf)
	if err != nil {
		t.Fatal(err)
	}
	adapted, err := factory(conf)
	if err != nil {
		t.Fatal(err)
	}
	env := &pb.AgentEnvelope{EntityKey: []byte("dev-17"), EventTimeMs: 1767225600000,
		Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(`{"device_id":"17","milli_c":-30000}`)}}
	kr := memKeyring(t)
	want, got := activateAll(native, kr, []*pb.AgentEnvelope{env})[0], activateAll(adapted, kr, []*pb.AgentEnvelope{env})[0]
	if len(got.DeadLetters) != 1 || len(want.DeadLetters) != 1 {
		t.Fatalf("dead letters %v, native %v", got.DeadLetters, want.DeadLetters)
	}
	if r := got.DeadLetters[0].GetReason(); r != string(records.ReasonBudgetExceeded) || r != want.DeadLetters[0].GetReason() {
		t.Errorf("reason %s, native %s", r, want.DeadLetters[0].GetReason())
	}
	if got.ModelCalls != devices.MaxTurns || want.ModelCalls != devices.MaxTurns {
		t.Errorf("%d model calls, native %d, want %d", got.ModelCalls, want.ModelCalls, devices.MaxTurns)
	}
	if len(got.Writes) != 0 || len(got.Finals) != 0 {
		t.Errorf("a failed activation wrote %d cells and %d finals", len(got.Writes), len(got.Finals))
	}
}

func memKeyring(tb testing.TB) *intent.Keyring {
	kr, err := intent.NewKeyring("k1", map[string][]byte{"k1": bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		tb.Fatal(err)
	}
	return kr
}

func demoEnvelopes(tb testing.TB) []*pb.AgentEnvelope {
	var out []*pb.AgentEnvelope
	sc := bufio.NewScanner(bytes.NewReader(devices.Envelopes))
	for sc.Scan() {
		env := &pb.AgentEnvelope{}
		if err := protojson.Unmarshal(sc.Bytes(), env); err != nil {
			tb.Fatal(err)
		}
		out = append(out, env)
	}
	return out
}

// activateAll feeds envs to a, one store per key, and returns each envelope's result; a
// failed activation's error is also its dead letter, compared with the rest.
func activateAll(a *agent.Agent, kr *intent.Keyring, envs []*pb.AgentEnvelope) []*host.Result {
	stores := map[string]host.MapStore{}
	var res []*host.Result
	for _, env := range envs {
		k := string(env.GetEntityKey())
		if stores[k] == nil {
			stores[k] = host.MapStore{}
		}
		r, _ := host.Activate(context.Background(), a, stores[k], env, host.Deps{Keyring: kr})
		stores[k].Apply(r)
		res = append(res, r)
	}
	return res
}

func marshalDet(tb testing.TB, m proto.Message) []byte {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func msgs[M proto.Message](in []M) []proto.Message {
	out := make([]proto.Message, len(in))
	for i, m := range in {
		out[i] = m
	}
	return out
}
