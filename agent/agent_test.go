package agent_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/testkit/testschema"
	"github.com/beamagents/beamagents/migrate"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/negotiate"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
	"github.com/beamagents/beamagents/tracing"
)

func ext(t int64, text string) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte(entity), EventTimeMs: t, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(text)}}
}

func toolResult(t, seq int64, step uint32, payload string) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte(entity), EventTimeMs: t, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
		IntentId: intent.ID([]byte(entity), seq, step), EntityKey: []byte(entity), Seq: seq, Status: pb.ToolResult_OK, Payload: []byte(payload)}}}
}

func approve(t, seq int64, step uint32, ok bool) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte(entity), EventTimeMs: t, Payload: &pb.AgentEnvelope_Approval_{Approval: &pb.AgentEnvelope_Approval{
		IntentId: intent.ID([]byte(entity), seq, step), Approved: ok, Approver: "ops"}}}
}

func scenarioAgent(t testing.TB, name string) (*agent.Agent, *model.Scripted) {
	t.Helper()
	sc := loadScenario(t, filepath.Join("testdata", "scenarios", name+".json"))
	m := sc.script(t)
	return newTestAgent(t, m, sc.Limits, false), m
}

func marshalOutputs(t testing.TB, r *host.Result) []byte {
	var b bytes.Buffer
	for _, list := range [][]proto.Message{
		msgs(r.Intents), msgs(r.Traces), msgs(r.Finals), msgs(r.Snapshots), msgs(r.DeadLetters),
	} {
		for _, m := range list {
			out, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(out)
			b.WriteByte(0)
		}
	}
	return b.Bytes()
}

func msgs[M proto.Message](in []M) []proto.Message {
	out := make([]proto.Message, len(in))
	for i, m := range in {
		out[i] = m
	}
	return out
}

// The same envelope on the same state gives byte-identical outputs; with the replay cache of
// the first run restored, the second run makes no model call at all.
func TestDeterminismAndReplay(t *testing.T) {
	a, m := scenarioAgent(t, "tool_round_trip")
	deps := host.Deps{Keyring: testKeyring(t)}
	ctx := context.Background()

	first, err := host.Activate(ctx, a, host.MapStore{}, ext(1000, "where is A-1?"), deps)
	if err != nil || first.ModelCalls != 1 {
		t.Fatalf("first run: %v, %d model calls", err, first.ModelCalls)
	}
	again, _ := host.Activate(ctx, a, host.MapStore{}, ext(1000, "where is A-1?"), deps)
	if !bytes.Equal(marshalOutputs(t, first), marshalOutputs(t, again)) {
		t.Fatal("same input, same state: outputs differ")
	}

	replay := host.MapStore{statecodec.CellLLMCache: first.Writes[statecodec.CellLLMCache]}
	calls := m.Calls()
	second, err := host.Activate(ctx, a, replay, ext(1000, "where is A-1?"), deps)
	if err != nil {
		t.Fatal(err)
	}
	if second.ModelCalls != 0 || m.Calls() != calls {
		t.Fatalf("replay made %d model calls", second.ModelCalls)
	}
	if len(second.Intents) != 1 || !proto.Equal(second.Intents[0], first.Intents[0]) {
		t.Fatal("replay emitted a different intent")
	}
	b1, _ := proto.MarshalOptions{Deterministic: true}.Marshal(first.Intents[0])
	b2, _ := proto.MarshalOptions{Deterministic: true}.Marshal(second.Intents[0])
	if !bytes.Equal(b1, b2) {
		t.Fatal("replayed intent is not byte-identical")
	}
	for _, tr := range second.Traces {
		if tr.EventType != pb.TraceEvent_LLM_CALL {
			continue
		}
		if tr.Attributes[tracing.AttrCacheHit] != "true" || tr.Attributes[tracing.AttrBilled] != "false" {
			t.Fatalf("replayed LLM_CALL not marked as an unbilled cache hit: %v", tr.Attributes)
		}
		// No response was decoded: the token counts are absent, not "0".
		for _, k := range []string{tracing.AttrInputTokens, tracing.AttrOutputTokens} {
			if v, ok := tr.Attributes[k]; ok {
				t.Fatalf("replayed LLM_CALL carries %s = %q", k, v)
			}
		}
	}
	for _, tr := range first.Traces {
		if tr.EventType == pb.TraceEvent_LLM_CALL && (tr.Attributes[tracing.AttrBilled] != "true" || tr.Attributes[tracing.AttrInputTokens] == "") {
			t.Fatalf("a model call is billed and carries its token counts: %v", tr.Attributes)
		}
	}
	if o := intent.Verify(second.Intents[0], testKeyring(t)); o != intent.OK {
		t.Fatalf("emitted intent verifies as %v", o)
	}
}

// A digest-only cache entry whose fresh answer differs is reported as provider divergence.
func TestProviderDivergence(t *testing.T) {
	ctx := context.Background()
	deps := host.Deps{Keyring: testKeyring(t)}
	first, _ := scenarioAgent(t, "reply")
	res, err := host.Activate(ctx, first, host.MapStore{}, ext(1000, "hi"), deps)
	if err != nil {
		t.Fatal(err)
	}
	cache, err := statecodec.DecodeCache(res.Writes[statecodec.CellLLMCache], statecodec.CacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	blob := cache.Proto()
	blob.Entries[0].Response, blob.Entries[0].DigestOnly = nil, true
	b, _ := proto.Marshal(blob)
	other, _ := scenarioAgent(t, "named_like_a_binding") // answers step 0 of seq 0 differently
	res, err = host.Activate(ctx, other, host.MapStore{statecodec.CellLLMCache: b}, ext(1000, "hi"), deps)
	if err != nil {
		t.Fatal(err)
	}
	var llm *pb.TraceEvent
	for _, tr := range res.Traces {
		if tr.EventType == pb.TraceEvent_LLM_CALL {
			llm = tr
		}
	}
	if llm == nil || llm.Attributes[tracing.AttrDivergence] != "true" || llm.Attributes[tracing.AttrCache] != "digest_only_hit" {
		t.Fatalf("no divergence reported: %v", llm)
	}
}

// Hostile model output never becomes an intent.
func TestHostileProposalsNeverProduceAnIntent(t *testing.T) {
	for _, name := range []string{"proposal_refused", "named_like_a_binding", "final_too_large"} {
		t.Run(name, func(t *testing.T) {
			sc := loadScenario(t, filepath.Join("testdata", "scenarios", name+".json"))
			a := newTestAgent(t, sc.script(t), sc.Limits, false)
			st := host.MapStore{}
			for i := range sc.Inputs {
				env := &pb.AgentEnvelope{}
				if err := protojsonUnmarshal(sc.Inputs[i].Envelope, env); err != nil {
					t.Fatal(err)
				}
				res, _ := host.Activate(context.Background(), a, st, env, host.Deps{Keyring: testKeyring(t)})
				if len(res.Intents) != 0 {
					t.Fatalf("input %d produced intent %v", i, res.Intents[0])
				}
				st.Apply(res)
			}
		})
	}
}

func TestNewValidatesBindings(t *testing.T) {
	m, _ := model.ParseScript(nil)
	base := func() bindings.Definition {
		return bindings.Definition{Definition: agent.Definition{Name: "assist", Schema: testSchema(t), Model: m}, Bindings: testBindings()}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*bindings.Definition)
		want   string
	}{
		{"valid", func(*bindings.Definition) {}, ""},
		{"a handler", func(d *bindings.Definition) { d.Handler = func(*agent.Context, agent.Trigger) error { return nil } }, "has no handler"},
		{"no name", func(d *bindings.Definition) { d.Name = "" }, "no name"},
		{"no schema", func(d *bindings.Definition) { d.Schema = nil }, "no proposal schema"},
		{"no model", func(d *bindings.Definition) { d.Model = nil }, "no model"},
		{"unbound case", func(d *bindings.Definition) { delete(d.Bindings, "assist.lookup") }, "case assist.lookup has no binding"},
		{"binding names no case", func(d *bindings.Definition) { d.Bindings["assist.final"] = bindings.Final() }, "binding assist.final names no case"},
		{"tool without name", func(d *bindings.Definition) { d.Bindings["assist.lookup"] = bindings.Tool("") }, "without a tool name"},
		{"remember non-string key", func(d *bindings.Definition) {
			d.Bindings["assist.refund"] = bindings.Remember("assist.refund.amount", "assist.refund.order_id")
		}, "not a string field"},
		{"tool arguments under FAIL_FAST with a delta", func(d *bindings.Definition) {
			d.Tools = map[string]agent.ToolDecl{"lookup_order": {Args: lookupArgsSchema(t), Agreement: negotiate.Agreement{
				Protocol: negotiate.FailFast, Moves: map[string]string{"assist.lookup.order_id": "tools.lookup_order.order_id"}}}}
		}, "binding assist.lookup to tool lookup_order: negotiate_fail_fast"},
		{"tool arguments without an agreement", func(d *bindings.Definition) {
			d.Tools = map[string]agent.ToolDecl{"lookup_order": {Args: lookupArgsSchema(t)}}
		}, "negotiation_required"},
		{"tool arguments under TRANSFORM_ALL", func(d *bindings.Definition) {
			d.Tools = map[string]agent.ToolDecl{"lookup_order": {Args: lookupArgsSchema(t), Agreement: negotiate.Agreement{
				Protocol: negotiate.TransformAll, Moves: map[string]string{"assist.lookup.order_id": "tools.lookup_order.order_id"}}}}
		}, ""},
		{"a state schema", func(d *bindings.Definition) { d.StateSchema = testschema.V2() }, ""},
		{"the same state schema in the limits", func(d *bindings.Definition) {
			d.StateSchema, d.Limits.Memory.Schema, d.Limits.Cache.Schema = testschema.V2(), testschema.V2(), testschema.V2()
		}, ""},
		{"another state schema in the limits", func(d *bindings.Definition) {
			d.StateSchema, d.Limits.Cache.Schema = testschema.V2(), migrate.Default()
		}, "Limits.Cache.Schema differs from StateSchema"},
		{"remember field of another case", func(d *bindings.Definition) {
			d.Bindings["assist.note"] = bindings.Remember("assist.reply.text", "assist.note.value")
		}, "not a string field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := base()
			tc.mutate(&d)
			_, err := bindings.New(d)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, agent.ErrDefinition) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want a definition error about %q", err, tc.want)
			}
		})
	}
}

func TestRenderFinal(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{}\n", `{"kind":"final","message":"{}\n"}` + "\n"},
		{`{"a":"q\"b\\"}` + "\n", `{"kind":"final","message":"{\"a\":\"q\\\"b\\\\\"}\n"}` + "\n"},
		{"tab\tcr\r\x01é", `{"kind":"final","message":"tab\tcr\r\u0001é"}` + "\n"},
	} {
		if got := string(agent.RenderFinal(tc.in)); got != tc.want {
			t.Errorf("RenderFinal(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// Reads and writes per path: an activation touches only the cells it needs.
func TestCellAccessPerPath(t *testing.T) {
	a, _ := scenarioAgent(t, "export_snapshot")
	deps := host.Deps{Keyring: testKeyring(t)}
	ctx := context.Background()
	step := func(st host.MapStore, env *pb.AgentEnvelope) *host.Result {
		res, err := host.Activate(ctx, a, st, env, deps)
		if err != nil {
			t.Fatal(err)
		}
		st.Apply(res)
		return res
	}
	other := host.MapStore{}
	replyOnly, _ := scenarioAgent(t, "reply")
	reply, err := host.Activate(ctx, replyOnly, other, ext(1000, "hi"), deps)
	if err != nil {
		t.Fatal(err)
	}
	st := host.MapStore{}
	tool := step(st, ext(1000, "I am Ada, where is A-1?")) // remember, then tool call: suspends
	queued := step(st, ext(1001, "are you there?"))        // waits in the inbox
	export := step(st, &pb.AgentEnvelope{EntityKey: []byte(entity), EventTimeMs: 1002, Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{}}})
	resume := step(st, toolResult(1003, 0, 1, "ok")) // resume to a reply, then the queued event fails (no script)
	for _, tc := range []struct {
		name          string
		res           *host.Result
		reads, writes []statecodec.Cell
	}{
		{"reply", reply, []statecodec.Cell{"continuation.v1", "seq.v1", "memory.v1", "llm_cache.v1"}, []statecodec.Cell{"llm_cache.v1", "seq.v1"}},
		{"tool call", tool, []statecodec.Cell{"continuation.v1", "seq.v1", "memory.v1", "llm_cache.v1", "pending.v1"},
			[]statecodec.Cell{"continuation.v1", "llm_cache.v1", "memory.v1", "pending.v1"}},
		{"external event while suspended", queued, []statecodec.Cell{"continuation.v1", "inbox.v1"}, []statecodec.Cell{"inbox.v1"}},
		{"export", export, []statecodec.Cell{"seq.v1", "memory.v1", "llm_cache.v1", "continuation.v1", "pending.v1", "inbox.v1"}, nil},
		{"resume", resume, []statecodec.Cell{"continuation.v1", "pending.v1", "memory.v1", "llm_cache.v1", "inbox.v1"},
			[]statecodec.Cell{"continuation.v1", "inbox.v1", "llm_cache.v1", "pending.v1", "seq.v1"}},
	} {
		writes := slices.Sorted(maps.Keys(tc.res.Writes))
		if !slices.Equal(tc.res.Reads, tc.reads) || !slices.Equal(writes, tc.writes) {
			t.Errorf("%s: reads %v writes %v; want %v and %v", tc.name, tc.res.Reads, writes, tc.reads, tc.writes)
		}
	}
}

// A suspended key's snapshot carries its inbox: restored into a fresh key, the result
// resumes it and the queued event runs after it, with the same outputs, byte for byte, as
// in the key that never left. A restore whose inbox is not the key's own external events is
// refused.
func TestSnapshotCarriesTheInbox(t *testing.T) {
	a, _ := scenarioAgent(t, "export_snapshot")
	deps := host.Deps{Keyring: testKeyring(t)}
	ctx := context.Background()
	step := func(st host.MapStore, env *pb.AgentEnvelope) *host.Result {
		res, _ := host.Activate(ctx, a, st, env, deps)
		st.Apply(res)
		return res
	}
	st := host.MapStore{}
	step(st, ext(1000, "I am Ada, where is A-1?"))
	step(st, ext(1001, "are you there?"))
	export := step(st, &pb.AgentEnvelope{EntityKey: []byte(entity), EventTimeMs: 1002, Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{}}})
	snap := export.Snapshots[0]
	if len(snap.GetInbox()) != 1 || string(snap.GetInbox()[0].GetExternalEvent()) != "are you there?" {
		t.Fatalf("snapshot inbox %v", snap.GetInbox())
	}
	restored := host.MapStore{}
	res, err := host.Restore(ctx, a, restored, snap)
	if err != nil {
		t.Fatal(err)
	}
	restored.Apply(res)
	want := step(st, toolResult(1003, 0, 1, "ok"))
	got := step(restored, toolResult(1003, 0, 1, "ok"))
	if len(got.DeadLetters) != len(want.DeadLetters) || len(got.Finals) != len(want.Finals) ||
		len(want.Finals) != 1 || !proto.Equal(got.Finals[0], want.Finals[0]) || !slices.EqualFunc(got.DeadLetters, want.DeadLetters, func(x, y *pb.ActivationErrorRecord) bool { return proto.Equal(x, y) }) {
		t.Fatalf("resumed from the snapshot: finals %v dead letters %v; in place: finals %v dead letters %v", got.Finals, got.DeadLetters, want.Finals, want.DeadLetters)
	}
	if len(want.DeadLetters) != 1 || len(want.Traces) == 0 {
		t.Fatalf("the queued event did not run after the resumption: %v", want.DeadLetters)
	}

	for name, inbox := range map[string][]*pb.AgentEnvelope{
		"another key's event": {{EntityKey: []byte("someone-else"), EventTimeMs: 1001, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("x")}}},
		"a tool result":       {toolResult(1001, 0, 1, "ok")},
	} {
		bad := proto.CloneOf(snap)
		bad.Inbox = inbox
		if _, err := host.Restore(ctx, a, host.MapStore{}, bad); !isReason(err, records.ReasonRestoreRefused) {
			t.Errorf("%s: %v", name, err)
		}
	}
	noSuspension := proto.CloneOf(snap)
	noSuspension.Continuation, noSuspension.Pending = nil, nil
	if _, err := host.Restore(ctx, a, host.MapStore{}, noSuspension); !isReason(err, records.ReasonRestoreRefused) {
		t.Errorf("an inbox without a suspension: %v", err)
	}
}

// isReason reports whether err is an agent error of reason r.
func isReason(err error, r records.Reason) bool {
	var e *agent.Error
	return errors.As(err, &e) && e.Reason == r
}

func TestDeadLetterDetailIsStable(t *testing.T) {
	err := &agent.Error{Reason: records.ReasonStateCorrupt, Err: errors.New("proto:\u00a0cannot parse \xff")}
	d := host.DeadLetter([]byte("k"), 5, err)
	if d.Reason != "state_corrupt" || d.Detail != "state_corrupt: proto: cannot parse \ufffd" || d.EventTimeMs != 5 {
		t.Fatalf("dead letter %v", d)
	}
	if host.DeadLetter(nil, 0, errors.New("untyped")).Reason != string(records.ReasonInternalPanic) {
		t.Fatal("an untyped error must not invent a reason")
	}
}
