package rehearse_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/examples/devices"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/openai"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/rehearse"
	"github.com/beamagents/beamagents/replay"
)

// period is a recorded period of an example's traffic: its inputs (every key exports its state
// after its traffic, so the baseline's caches hold every answer) and the baseline's outputs,
// its intents signed with a keyring the rehearsal never sees.
type period struct {
	inputs   []replay.Input
	refused  [][]byte
	baseline map[int64][][]byte
	ending   replay.Ending
}

func record(t testing.TB, a *agent.Agent, envelopes []byte, restores ...*pb.StateSnapshot) period {
	t.Helper()
	var p period
	index := map[string]int{}
	add := func(key, v []byte) {
		i, ok := index[string(key)]
		if !ok {
			i = len(p.inputs)
			index[string(key)] = i
			p.inputs = append(p.inputs, replay.Input{Entity: key})
		}
		p.inputs[i].Values = append(p.inputs[i].Values, v)
	}
	for _, snap := range restores {
		add(snap.GetEntityKey(), drive.RestoreValue(snap))
	}
	sc := bufio.NewScanner(bytes.NewReader(envelopes))
	last := int64(0)
	for sc.Scan() {
		env, canon, err := drive.DecodeEnvelope(records.JSON, sc.Bytes())
		if err != nil {
			p.refused = append(p.refused, drive.Marshal(drive.DeadLetter(env.GetEntityKey(), env.GetEventTimeMs(), records.ReasonEnvelopeInvalid, err, sc.Bytes())))
			continue
		}
		last = max(last, env.GetEventTimeMs())
		add(env.GetEntityKey(), canon)
	}
	for _, in := range p.inputs {
		add(in.Entity, drive.Marshal(&pb.AgentEnvelope{EntityKey: in.Entity, EventTimeMs: last + 1000,
			Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{RequestId: "after"}}}))
	}
	kr, err := intent.NewKeyring("prod", map[string][]byte{"prod": bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		t.Fatal(err)
	}
	p.ending = replay.Ending{Park: true, EndMs: replay.InputEnd(p.inputs)}
	p.baseline = map[int64][][]byte{records.OutDeadLetter: p.refused}
	d := &drive.Driver{Core: drive.Core{Agent: a, Deps: host.Deps{Keyring: kr}, OrderResolutionMs: 1, Park: true, EndMs: p.ending.EndMs}}
	for _, in := range p.inputs {
		d.Run(context.Background(), in.Entity, in.Values, func(kind int64, b []byte) { p.baseline[kind] = append(p.baseline[kind], b) })
	}
	if len(p.baseline[records.OutSnapshot]) < len(p.inputs) {
		t.Fatalf("baseline: %d intents, %d snapshots", len(p.baseline[records.OutIntent]), len(p.baseline[records.OutSnapshot]))
	}
	return p
}

// supportWith is the support agent with another system prompt and model.
func supportWith(t *testing.T, prompt string) *agent.Agent {
	t.Helper()
	def, err := support.Definition(support.ModelScript)
	if err != nil {
		t.Fatal(err)
	}
	def.Prompt = bindings.DefaultPrompt(prompt)
	a, err := bindings.New(def)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// devicesPaging is the devices agent that first pages the site for every anomaly: a tool the
// baseline never called.
func devicesPaging(t *testing.T) *agent.Agent {
	t.Helper()
	def, err := devices.DefinitionOf(devices.Name, devices.ModelScript, func(la, da *interaction.Schema) agent.Handler {
		h := devices.Handler(devices.SystemPrompt, la, da)
		return func(hc *agent.Context, tr agent.Trigger) error {
			if r, err := devices.ParseReading(tr.Event); err == nil && !r.Quiet() {
				if _, err := hc.Tool("devices.page", fmt.Sprintf(`{"device_id":"%d","reason":"anomaly"}`, r.DeviceID)); err != nil {
					return err
				}
			}
			return h(hc, tr)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	def.Tools["devices.page"] = def.Tools[devices.ToolDispatch]
	a, err := agent.New(def)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func build(t *testing.T, f func([]byte) (*agent.Agent, error)) *agent.Agent { return build2(t, f, "") }

func build2(t *testing.T, f func([]byte) (*agent.Agent, error), config string) *agent.Agent {
	t.Helper()
	a, err := f([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// loopback is an OpenAI-compatible server on loopback answering every request with a support
// reply, and the provider asking it.
func loopback(t *testing.T) model.Model {
	t.Helper()
	srv := llmtest.New(llmtest.OpenAI, func(int, []byte) llmtest.Reply {
		return llmtest.Reply{Text: `{"case":"support.reply","fields":{"support.reply.text":"Sure."}}`, InputTokens: 100, OutputTokens: 20}
	})
	t.Cleanup(srv.Close)
	m, err := openai.New(provider.Config{Model: "gpt-candidate", BaseURL: srv.BaseURL(), NoStream: true})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRehearse(t *testing.T) {
	supportBase := record(t, build(t, support.New), support.Envelopes)
	devicesBase := record(t, build(t, devices.New), devices.Envelopes)
	terse := supportWith(t, "You are a terse support agent.")
	// A second period of device 17, from the state the first one exported: two readings.
	var restores []*pb.StateSnapshot
	for _, b := range devicesBase.baseline[records.OutSnapshot] {
		s := &pb.StateSnapshot{}
		if err := proto.Unmarshal(b, s); err != nil {
			t.Fatal(err)
		}
		if string(s.GetEntityKey()) == "dev-17" {
			restores = append(restores, s)
		}
	}
	later := record(t, build(t, devices.New), []byte(
		`{"entityKey":"ZGV2LTE3","eventTimeMs":"1767312000000","externalEvent":"eyJkZXZpY2VfaWQiOiIxNyIsIm1pbGxpX2MiOi0xODEwMH0="}`+"\n"+
			`{"entityKey":"ZGV2LTE3","eventTimeMs":"1767312060000","externalEvent":"eyJkZXZpY2VfaWQiOiIxNyIsIm1pbGxpX2MiOi0xNzAwMH0="}`+"\n"), restores...)
	for _, tc := range []struct {
		name      string
		base      period
		candidate *agent.Agent
		opts      rehearse.Options
		divergent int
		byKind    map[rehearse.Kind]int
		stopped   map[rehearse.Stop]int
		live      int
		newTools  []string
		quiet     bool // no model call: quiet readings only
	}{
		{name: "support unchanged", base: supportBase, candidate: build(t, support.New)},
		{name: "devices unchanged", base: devicesBase, candidate: build(t, devices.New)},
		{name: "from restored state, unchanged", base: later, candidate: build(t, devices.New), quiet: true},
		{name: "from restored state, another prompt", base: later, candidate: build2(t, devices.New, `{"prompt":"Be brief."}`), quiet: true},
		{name: "changed prompt", base: supportBase, candidate: terse, divergent: 5,
			byKind:  map[rehearse.Kind]int{rehearse.KindModelRequest: 5},
			stopped: map[rehearse.Stop]int{rehearse.StopUnanswered: 5}},
		{name: "changed prompt, two live calls", base: supportBase, candidate: terse,
			opts:      rehearse.Options{Live: loopback(t), LiveCalls: 2},
			divergent: 5, live: 2,
			byKind:  map[rehearse.Kind]int{rehearse.KindModelRequest: 5},
			stopped: map[rehearse.Stop]int{rehearse.StopUnanswered: 3}},
		{name: "changed prompt, token budget", base: supportBase, candidate: terse,
			opts:      rehearse.Options{Live: loopback(t), LiveCalls: 10, LiveTokens: 50},
			divergent: 5, live: 1,
			byKind:  map[rehearse.Kind]int{rehearse.KindModelRequest: 5},
			stopped: map[rehearse.Stop]int{rehearse.StopUnanswered: 4}},
		{name: "new tool", base: devicesBase, candidate: devicesPaging(t), divergent: 1,
			byKind:   map[rehearse.Kind]int{rehearse.KindTool: 1},
			stopped:  map[rehearse.Stop]int{rehearse.StopNewEffect: 1},
			newTools: []string{"devices.page"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Ending, tc.opts.Refused = tc.base.ending, tc.base.refused
			r, err := rehearse.Run(context.Background(), tc.candidate, tc.base.inputs, tc.base.baseline, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var text strings.Builder
			r.WriteText(&text)
			t.Log(text.String())
			s := r.Summary
			if s.Keys != len(tc.base.inputs) || s.Divergent != tc.divergent || s.LiveCalls != tc.live ||
				!sameCounts(s.ByKind, tc.byKind) || !sameCounts(s.Stopped, tc.stopped) || fmt.Sprint(s.NewTools) != fmt.Sprint(tc.newTools) {
				t.Fatalf("summary %+v", s)
			}
			if tc.live > 0 && s.LiveTokens != int64(tc.live)*120 {
				t.Errorf("live tokens %d, want %d", s.LiveTokens, tc.live*120)
			}
			if tc.divergent == 0 && !tc.quiet && s.Answered == 0 {
				t.Errorf("no request answered from the baseline")
			}
			for _, k := range r.Keys {
				if d := k.Divergence; d != nil && tc.byKind[d.Kind] == 0 {
					t.Errorf("key %s: %s", k.Entity, d)
				}
			}
			var out bytes.Buffer
			if err := r.WriteJSONL(&out); err != nil {
				t.Fatal(err)
			}
			back, err := rehearse.ReadReport(bytes.NewReader(out.Bytes()))
			var again bytes.Buffer
			if err != nil || back.WriteJSONL(&again) != nil || !bytes.Equal(again.Bytes(), out.Bytes()) {
				t.Fatalf("the report does not read back: %v", err)
			}
		})
	}
}

func sameCounts[K comparable](got, want map[K]int) bool {
	if len(got) != len(want) {
		return false
	}
	for k, n := range want {
		if got[k] != n {
			return false
		}
	}
	return true
}

// A restored state the candidate cannot read fails the rehearsal before anything runs.
func TestRehearseRefusesUnreadableState(t *testing.T) {
	a := build(t, support.New)
	for _, tc := range []struct {
		name string
		snap *pb.StateSnapshot
	}{
		{"future memory version", &pb.StateSnapshot{EntityKey: []byte("k"), Memory: &pb.MemoryBlob{StateSchemaVersion: 99}}},
		{"future cache version", &pb.StateSnapshot{EntityKey: []byte("k"), LlmCache: &pb.LlmCacheBlob{StateSchemaVersion: 99}}},
		{"no entity key", &pb.StateSnapshot{Seq: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []replay.Input{{Entity: []byte("k"), Values: [][]byte{drive.RestoreValue(tc.snap)}}}
			_, err := rehearse.Run(context.Background(), a, in, nil, rehearse.Options{})
			if !errors.Is(err, rehearse.ErrState) {
				t.Fatalf("err = %v, want ErrState", err)
			}
		})
	}
	ok := &pb.StateSnapshot{EntityKey: []byte("k"), Seq: 2, Memory: &pb.MemoryBlob{StateSchemaVersion: 1}}
	if err := rehearse.CheckState(context.Background(), a, ok); err != nil {
		t.Fatalf("a readable state: %v", err)
	}
}

func TestThresholds(t *testing.T) {
	s := rehearse.Summary{Keys: 10, Divergent: 2}
	for _, tc := range []struct {
		th   rehearse.Thresholds
		over bool
	}{
		{rehearse.Thresholds{MaxKeys: 0, MaxPercent: -1}, true},
		{rehearse.Thresholds{MaxKeys: 2, MaxPercent: -1}, false},
		{rehearse.Thresholds{MaxKeys: -1, MaxPercent: 20}, false},
		{rehearse.Thresholds{MaxKeys: -1, MaxPercent: 19.9}, true},
		{rehearse.Thresholds{MaxKeys: 5, MaxPercent: 10}, true},
		{rehearse.Thresholds{MaxKeys: -1, MaxPercent: -1}, false},
	} {
		if err := s.Over(tc.th); (err != nil) != tc.over || err != nil && !errors.Is(err, rehearse.ErrThresholds) {
			t.Errorf("%+v: %v", tc.th, err)
		}
	}
}

// dispatcher is a handler agent that dispatches on every event and replies with the result;
// with note, it first writes a memory entry, which moves the dispatch one step later (another
// intent id).
func dispatcher(t *testing.T, note bool) *agent.Agent {
	t.Helper()
	a, err := agent.New(agent.Definition{Name: "dispatcher", Handler: func(hc *agent.Context, tr agent.Trigger) error {
		if note {
			if err := hc.Put("seen", tr.Event); err != nil {
				return err
			}
		}
		res, err := hc.Tool("ops.dispatch", `{"site":"`+string(tr.Event)+`"}`)
		if err != nil {
			return err
		}
		return hc.Reply("dispatched: " + string(res.GetPayload()))
	}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A call the candidate makes at another step than the baseline is answered by the baseline's
// result all the same: the key diverges at the moved call and goes on to its reply.
func TestRehearseMovedCall(t *testing.T) {
	base := dispatcher(t, false)
	event := &pb.AgentEnvelope{EntityKey: []byte("site-1"), EventTimeMs: 1000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("north")}}
	var intentID string
	d := &drive.Driver{Core: drive.Core{Agent: base, Deps: host.Deps{AllowUnsigned: true}, OrderResolutionMs: 1, Park: true, EndMs: 1000}}
	d.Run(context.Background(), event.EntityKey, [][]byte{drive.Marshal(event)}, func(kind int64, b []byte) {
		ti := &pb.ToolIntent{}
		if kind == records.OutIntent && proto.Unmarshal(b, ti) == nil {
			intentID = ti.GetIntentId()
		}
	})
	result := &pb.AgentEnvelope{EntityKey: event.EntityKey, EventTimeMs: 2000, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
		IntentId: intentID, EntityKey: event.EntityKey, Status: pb.ToolResult_OK, Payload: []byte("T-1"), CompletedAtMs: 1999}}}
	var lines []byte
	for _, env := range []*pb.AgentEnvelope{event, result} {
		b, err := protojson.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(append(lines, b...), '\n')
	}
	p := record(t, base, lines)
	for _, tc := range []struct {
		name      string
		candidate *agent.Agent
		divergent int
	}{
		{"same step", dispatcher(t, false), 0},
		{"moved", dispatcher(t, true), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := rehearse.Run(context.Background(), tc.candidate, p.inputs, p.baseline, rehearse.Options{Ending: p.ending})
			if err != nil {
				t.Fatal(err)
			}
			k := r.Keys[0]
			if r.Summary.Divergent != tc.divergent || k.Stop != "" || k.Produced["finals"] != 1 || k.Produced["dead_letters"] != 0 {
				t.Fatalf("%+v", k)
			}
			if tc.divergent > 0 && (k.Divergence.Kind != rehearse.KindTool || k.Divergence.Step != 1) {
				t.Fatalf("divergence %s", k.Divergence)
			}
		})
	}
}
