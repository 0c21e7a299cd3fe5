package agent_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/goldenfile"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
)

var update = flag.Bool("update", false, "rewrite testdata/scenarios/*.golden from the current behaviour")

// scenario is one data-driven test: a model script, an initial state, and a sequence of
// inputs (envelopes and timer firings) for the entity key "k". In the scenario text,
// ${intent:SEQ:STEP} stands for the intent id of that step of the key, and in raw model
// output ${digest} for the proposal schema's digest. With verify_results the core checks
// results and approvals in that mode (host.Deps.VerifyResults); an input's sign signs its
// result or approval for the pending intent it names, with the test keyring ("keyring") or a
// key of the same id the keyring does not hold ("other_key"), or with the test keyring for
// another call that carries the same intent id ("other_intent"). A signal is signed for
// itself (no intent).
type scenario struct {
	Limits      agentLimits `json:"limits"`
	Protocol    string      `json:"protocol"`
	Stream      bool        `json:"stream"`
	ToolArgs    bool        `json:"declare_lookup_args"`
	NoKeyring   bool        `json:"no_keyring"`
	PanicPrompt bool        `json:"panic_prompt"`
	StateSchema string      `json:"state_schema"` // "v2": internal/testkit/testschema
	Verify      string      `json:"verify_results"`
	Handler     string      `json:"handler"` // a handler agent of handlers_test.go instead of the bindings
	Shards      int         `json:"shards"`  // Definition.Shards (a sharded agent declares no memory bounds)
	// TenantBudget, when set, is the agent's tenant budget per hour (budget.DegradeFail), its
	// every key of tenant "acme"; the inputs carry their grants.
	TenantBudget int64 `json:"tenant_budget"`

	State  map[string]json.RawMessage `json:"state"`
	Model  []modelRule                `json:"model"`
	Inputs []input                    `json:"inputs"`
}

type agentLimits struct {
	MaxSteps          uint32 `json:"max_steps"`
	MaxModelCalls     uint32 `json:"max_model_calls"`
	MaxInbox          int    `json:"max_inbox"`
	MaxFinalBytes     int    `json:"max_final_bytes"`
	MaxEscalations    uint32 `json:"max_escalations"`
	ToolTimeoutMs     int64  `json:"tool_timeout_ms"`
	ApprovalTimeoutMs int64  `json:"approval_timeout_ms"`
	IdleTTLMs         int64  `json:"idle_ttl_ms"`
	MaxRequestBytes   int    `json:"max_request_bytes"`
	MaxTokens         int64  `json:"max_tokens"`
	MaxJournalBytes   int    `json:"max_journal_bytes"`
	MaxOperations     int    `json:"max_operations"`
}

// modelRule answers step Step of activation Seq, or, with Contains, any request whose
// messages contain that text: Value is the proposal's value part, wrapped by the harness into
// the canonical value document; Raw is returned verbatim.
type modelRule struct {
	Seq      int64           `json:"seq"`
	Step     uint32          `json:"step"`
	Contains string          `json:"contains"`
	Value    json.RawMessage `json:"value"`
	Raw      *string         `json:"raw"`
	// ToolCalls answers a request with native tools ([{"id","name","arguments"}]), with Text.
	ToolCalls json.RawMessage `json:"tool_calls"`
	Text      string          `json:"text"`
}

type input struct {
	Envelope json.RawMessage `json:"envelope"`
	Sign     string          `json:"sign"`
	Restore  json.RawMessage `json:"restore"`
	Timer    *struct {
		Tag  string `json:"tag"`
		AtMs int64  `json:"at_ms"`
	} `json:"timer"`
}

const entity = "k"

var intentRef = regexp.MustCompile(`\$\{intent:(\d+):(\d+)\}`)

func loadScenario(t testing.TB, path string) *scenario {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw = intentRef.ReplaceAllFunc(raw, func(m []byte) []byte {
		sub := intentRef.FindSubmatch(m)
		seq, _ := strconv.ParseInt(string(sub[1]), 10, 64)
		step, _ := strconv.ParseUint(string(sub[2]), 10, 32)
		return []byte(intent.ID([]byte(entity), seq, uint32(step)))
	})
	sc := &scenario{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(sc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return sc
}

// script renders the scenario's model rules as a model.Scripted script.
func (sc *scenario) script(t testing.TB) *model.Scripted {
	t.Helper()
	s := testSchema(t)
	var b bytes.Buffer
	for _, r := range sc.Model {
		text := ""
		if r.Value == nil && r.Raw == nil {
			text = r.Text
		} else if r.Raw != nil {
			text = strings.ReplaceAll(*r.Raw, "${digest}", s.Digest())
		} else {
			var v bytes.Buffer
			if err := json.Compact(&v, r.Value); err != nil {
				t.Fatal(err)
			}
			text = fmt.Sprintf(`{"schema":%q,"root_type_id":%q,"schema_digest":%q,"value":%s}`+"\n",
				interaction.ValueFormat, s.RootTypeID(), s.Digest(), v.String())
		}
		rule := map[string]any{"entity": entity, "seq": r.Seq, "step": r.Step, "response_text": text,
			"input_tokens": 100 + r.Step, "output_tokens": 10 + r.Step}
		if r.ToolCalls != nil {
			rule["tool_calls"] = r.ToolCalls
		}
		if r.Contains != "" {
			delete(rule, "seq")
			delete(rule, "step")
			rule["contains"] = r.Contains
		}
		line, _ := json.Marshal(rule)
		b.Write(append(line, '\n'))
	}
	m, err := model.ParseScript(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (sc *scenario) store(t *testing.T) host.MapStore {
	t.Helper()
	st := host.MapStore{}
	for cell, raw := range sc.State {
		var b []byte
		var r struct {
			Base64 *string `json:"base64"`
		}
		if json.Unmarshal(raw, &r) == nil && r.Base64 != nil {
			b, _ = base64.StdEncoding.DecodeString(*r.Base64)
		} else {
			b = cellFromJSON(t, statecodec.Cell(cell), raw)
		}
		st[statecodec.Cell(cell)] = b
	}
	return st
}

func cellFromJSON(t *testing.T, cell statecodec.Cell, raw json.RawMessage) []byte {
	t.Helper()
	if cell == statecodec.CellSeq {
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil {
			t.Fatal(err)
		}
		b, _ := statecodec.EncodeSeq(n)
		return b
	}
	m := cellMessage(cell)
	if m == nil {
		t.Fatalf("no JSON form for cell %s", cell)
	}
	if err := protojson.Unmarshal(raw, m); err != nil {
		t.Fatalf("state %s: %v", cell, err)
	}
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	return b
}

func cellMessage(cell statecodec.Cell) proto.Message {
	switch cell {
	case statecodec.CellMemory:
		return &pb.MemoryBlob{}
	case statecodec.CellLLMCache:
		return &pb.LlmCacheBlob{}
	case statecodec.CellContinuation:
		return &pb.Continuation{}
	case host.CellInbox:
		return &pb.AgentInbox{}
	}
	return nil
}

func TestScenarios(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "scenarios", "*.json"))
	if len(paths) == 0 {
		t.Fatal("no scenarios")
	}
	covered := map[records.Reason]bool{}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			sc := loadScenario(t, path)
			got, reasons := runScenario(t, sc)
			for _, r := range reasons {
				covered[r] = true
			}
			checkGolden(t, strings.TrimSuffix(path, ".json")+".golden", got)
		})
	}
	for _, r := range records.Reasons {
		if r == records.ReasonEnvelopeInvalid && !covered[r] {
			continue // covered by TestActivateRejectsInvalidEnvelopes below as well
		}
		if !covered[r] {
			t.Errorf("no scenario ends in dead letter %s", r)
		}
	}
}

func runScenario(t *testing.T, sc *scenario) ([]byte, []records.Reason) {
	t.Helper()
	return runScenarioFrom(t, sc, sc.store(t), 0, nil)
}

// runScenarioFrom runs the scenario's inputs from input from on state st; after, when set, is
// called with the state after each input.
func runScenarioFrom(t *testing.T, sc *scenario, st host.MapStore, from int, after func(i int, st host.MapStore)) ([]byte, []records.Reason) {
	t.Helper()
	a := newTestAgentWith(t, sc.script(t), sc)
	deps := host.Deps{Keyring: testKeyring(t)}
	if sc.NoKeyring {
		deps.Keyring = nil
	}
	if sc.Verify != "" {
		m, err := intent.ParseMode(sc.Verify)
		if err != nil {
			t.Fatal(err)
		}
		deps.VerifyResults = &m
	}
	var out bytes.Buffer
	var reasons []records.Reason
	for i, in := range sc.Inputs {
		if i < from {
			continue
		}
		var res *host.Result
		var err error
		switch {
		case in.Envelope != nil:
			env := &pb.AgentEnvelope{}
			if err := protojson.Unmarshal(in.Envelope, env); err != nil {
				t.Fatalf("input %d: %v", i, err)
			}
			if in.Sign != "" {
				signAnswer(t, st, env, in.Sign)
			}
			fmt.Fprintf(&out, "== input %d: %s at %d\n", i, payloadName(env), env.GetEventTimeMs())
			res, err = host.Activate(context.Background(), a, st, env, deps)
		case in.Restore != nil:
			snap := &pb.StateSnapshot{}
			if err := protojson.Unmarshal(in.Restore, snap); err != nil {
				t.Fatalf("input %d: %v", i, err)
			}
			fmt.Fprintf(&out, "== input %d: restore seq %d\n", i, snap.GetSeq())
			res, err = host.Restore(context.Background(), a, st, snap)
		case in.Timer != nil:
			fmt.Fprintf(&out, "== input %d: timer %s at %d\n", i, in.Timer.Tag, in.Timer.AtMs)
			res, err = host.Fire(context.Background(), a, st, []byte(entity), in.Timer.Tag, in.Timer.AtMs, deps)
		default:
			t.Fatalf("input %d is empty", i)
		}
		if err != nil {
			var ae *agent.Error
			if !errorsAs(err, &ae) {
				t.Fatalf("input %d: untyped error %v", i, err)
			}
			fmt.Fprintf(&out, "error %s\n", ae.Reason)
			if len(res.Writes) != 0 {
				t.Fatalf("input %d failed but wrote %v", i, slices.Collect(mapKeys(res.Writes)))
			}
		}
		for _, d := range res.DeadLetters {
			reasons = append(reasons, records.Reason(d.Reason))
		}
		checkTraceIdentity(t, res.Traces)
		renderResult(&out, res)
		st.Apply(res)
		if after != nil {
			after(i, st)
		}
	}
	out.WriteString("== final state\n")
	for _, c := range host.Cells() {
		if b, ok := st[c]; ok {
			fmt.Fprintf(&out, "%s = %s\n", c, renderCell(c, b))
		}
	}
	return out.Bytes(), reasons
}

// signAnswer signs env's result or approval for the pending intent it names, with the test
// keyring ("keyring") or with a key of the same id that the keyring does not hold ("other_key").
func signAnswer(t *testing.T, st host.MapStore, env *pb.AgentEnvelope, with string) {
	t.Helper()
	kr := testKeyring(t)
	other := false
	switch with {
	case "keyring":
	case "other_intent":
		other = true
	case "other_key":
		var err error
		if kr, err = intent.NewKeyring(kr.Active(), map[string][]byte{kr.Active(): bytes.Repeat([]byte{0x3c}, 32)}); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("sign %q: want keyring or other_key", with)
	}
	if sig := env.GetSignal(); sig != nil {
		if err := intent.SignSignal(sig, kr); err != nil {
			t.Fatal(err)
		}
		return
	}
	pending, err := statecodec.DecodePending(st[statecodec.CellPending])
	if err != nil {
		t.Fatal(err)
	}
	id := env.GetToolResult().GetIntentId() + env.GetApproval().GetIntentId()
	ti, ok := pending.Get(id)
	if !ok {
		t.Fatalf("sign: no pending intent %s", id)
	}
	if other {
		ti = proto.CloneOf(ti)
		ti.ArgsJson, ti.CreatedAtMs = `{"assist.refund.order_id":"A-1","assist.refund.amount":"990"}`, 0
	}
	if r := env.GetToolResult(); r != nil {
		err = intent.SignResult(r, ti, kr)
	} else {
		err = intent.SignApproval(env.GetApproval(), ti, kr)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func payloadName(env *pb.AgentEnvelope) string {
	if p := env.ProtoReflect().WhichOneof(env.ProtoReflect().Descriptor().Oneofs().ByName("payload")); p != nil {
		return string(p.Name())
	}
	return "no payload"
}

func renderResult(w *bytes.Buffer, r *host.Result) {
	for _, m := range r.Intents {
		fmt.Fprintf(w, "intent %s\n", compact(m))
	}
	for _, m := range r.Traces {
		fmt.Fprintf(w, "trace %s\n", compact(m))
	}
	for _, m := range r.Finals {
		fmt.Fprintf(w, "final %s\n", compact(m))
	}
	for _, m := range r.Snapshots {
		fmt.Fprintf(w, "snapshot %s\n", compact(m))
	}
	for _, m := range r.DeadLetters {
		fmt.Fprintf(w, "dead_letter %s\n", compact(m))
	}
	for _, c := range slices.Sorted(mapKeys(r.Writes)) {
		if len(r.Writes[c]) == 0 {
			fmt.Fprintf(w, "write %s cleared\n", c)
			continue
		}
		fmt.Fprintf(w, "write %s = %s\n", c, renderCell(c, r.Writes[c]))
	}
	for _, op := range r.Timers {
		if op.Set {
			fmt.Fprintf(w, "timer %s set %d\n", op.Tag, op.AtMs)
		} else {
			fmt.Fprintf(w, "timer %s clear\n", op.Tag)
		}
	}
	fmt.Fprintf(w, "reads %v model_calls %d\n", r.Reads, r.ModelCalls)
}

func renderCell(c statecodec.Cell, b []byte) string {
	switch c {
	case statecodec.CellSeq:
		n, err := statecodec.DecodeSeq(b)
		if err != nil {
			return "corrupt: " + err.Error()
		}
		return strconv.FormatInt(n, 10)
	case statecodec.CellPending:
		p, err := statecodec.DecodePending(b)
		if err != nil {
			return "corrupt: " + err.Error()
		}
		var ids []string
		for ti := range p.All() {
			ids = append(ids, fmt.Sprintf("%s(%s attempt %d)", ti.IntentId, ti.Kind, ti.Attempt))
		}
		return "[" + strings.Join(ids, " ") + "]"
	}
	m := cellMessage(c)
	if err := proto.Unmarshal(b, m); err != nil {
		return "corrupt: " + base64.StdEncoding.EncodeToString(b)
	}
	s := compact(m)
	if cont, ok := m.(*pb.Continuation); ok && cont.GetAdapter() == "beamagents.agent.v1" {
		resume := &pb.AgentResume{}
		proto.Unmarshal(cont.GetSnapshot(), resume)
		s += " resume " + compact(resume)
	}
	if cont, ok := m.(*pb.Continuation); ok && cont.GetAdapter() == "beamagents.agent.handler.v1" {
		j := &pb.HandlerJournal{}
		proto.Unmarshal(cont.GetSnapshot(), j)
		s += " journal " + compact(j)
	}
	return s
}

func compact(m proto.Message) string {
	b, err := protojson.Marshal(m)
	if err != nil {
		return "unrenderable: " + err.Error()
	}
	var c bytes.Buffer
	json.Compact(&c, b)
	return c.String()
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	goldenfile.Check(t, path, got, *update)
}
