package transforms_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/transforms"
)

func TestMain(m *testing.M) { ptest.Main(m) }

const t0 = int64(1767225600000)

var testKey = bytes.Repeat([]byte{0x42}, 32)

// keyringRef writes the test keyring and returns its reference.
func keyringRef(t testing.TB) (string, *intent.Keyring) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ring.json")
	doc := `{"active":"t","keys":[{"id":"t","secret":"` + base64.StdEncoding.EncodeToString(testKey) + `"}]}`
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	kr, err := intent.LoadKeyring("file:" + p)
	if err != nil {
		t.Fatal(err)
	}
	return "file:" + p, kr
}

// answer is one recorded model answer of the support agent: the value part of the proposal.
type answer struct {
	entity string
	seq    int64
	step   uint32
	value  string
}

func reply(text string) string {
	return fmt.Sprintf(`{"case":"support.reply","fields":{"support.reply.text":%q}}`, text)
}

func lookup(order string) string {
	return fmt.Sprintf(`{"case":"support.lookup_order","fields":{"support.lookup_order.order_id":%q}}`, order)
}

func refund(order string, cents int) string {
	return fmt.Sprintf(`{"case":"support.refund","fields":{"support.refund.order_id":%q,"support.refund.amount_cents":"%d","support.refund.reason":"broken"}}`, order, cents)
}

func remember(k, v string) string {
	return fmt.Sprintf(`{"case":"support.remember","fields":{"support.remember.key":%q,"support.remember.value":%q}}`, k, v)
}

// agentConfig writes a model script of answers and returns the support agent's config.
func agentConfig(t testing.TB, answers []answer) []byte {
	t.Helper()
	s, err := support.Schema()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, a := range answers {
		doc := fmt.Sprintf(`{"schema":%q,"root_type_id":%q,"schema_digest":%q,"value":%s}`+"\n", interaction.ValueFormat, s.RootTypeID(), s.Digest(), a.value)
		fmt.Fprintf(&b, "{\"entity\":%q,\"seq\":%d,\"step\":%d,\"response_text\":%q}\n", a.entity, a.seq, a.step, doc)
	}
	p := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return []byte(fmt.Sprintf(`{"script":%q}`, p))
}

func ext(key string, t int64, text string) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: t, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(text)}}
}

func result(key string, t int64, seq int64, step uint32, payload string) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: t, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
		IntentId: intent.ID([]byte(key), seq, step), EntityKey: []byte(key), Seq: seq, Status: pb.ToolResult_OK, Payload: []byte(payload)}}}
}

func approval(key string, t int64, seq int64, step uint32, ok bool) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: t, Payload: &pb.AgentEnvelope_Approval_{Approval: &pb.AgentEnvelope_Approval{
		IntentId: intent.ID([]byte(key), seq, step), Approved: ok, Approver: "ops"}}}
}

func export(key string, t int64, id string) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: t, Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{RequestId: id}}}
}

// outputs are what one pipeline run wrote, decoded, plus the raw files and counters.
type outputs struct {
	intents  []*pb.ToolIntent
	traces   []*pb.TraceEvent
	finals   []*pb.FinalReply
	snaps    []*pb.StateSnapshot
	dead     []*pb.ActivationErrorRecord
	files    map[string][]byte
	counters map[string]int64
}

func (o *outputs) reasons() map[string]int {
	m := map[string]int{}
	for _, d := range o.dead {
		m[d.GetReason()]++
	}
	return m
}

type run struct {
	answers  []answer
	records  [][]byte
	restores []*pb.StateSnapshot
	opts     transforms.Options
}

func envelopes(envs ...*pb.AgentEnvelope) [][]byte {
	var out [][]byte
	for _, e := range envs {
		b, _ := proto.Marshal(e)
		out = append(out, b)
	}
	return out
}

// runBeam runs decode → RunAgent (support agent) → file sinks on Prism and reads the files.
func runBeam(t testing.TB, r run) *outputs {
	t.Helper()
	ref, _ := keyringRef(t)
	opts := r.opts
	opts.Agent, opts.Config, opts.Keyring = support.Name, agentConfig(t, r.answers), ref
	dir := t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	keyed, dead := transforms.DecodeEnvelopes(s, transforms.Binary, beam.CreateList(s, r.records))
	if len(r.restores) > 0 {
		var snaps [][]byte
		for _, sn := range r.restores {
			b, _ := proto.Marshal(sn)
			snaps = append(snaps, b)
		}
		restores, _ := transforms.DecodeSnapshots(s, transforms.Binary, beam.CreateList(s, snaps))
		keyed = beam.Flatten(s, keyed, restores)
	}
	out := transforms.RunAgent(s, opts, keyed)
	cols := map[string]beam.PCollection{pipeline.IntentsName: out.Intents, pipeline.TracesName: out.Traces,
		pipeline.FinalsName: out.Finals, pipeline.SnapshotsName: out.Snapshots, pipeline.DeadLettersName: beam.Flatten(s, dead, out.DeadLetters)}
	for _, o := range pipeline.Outputs() {
		pipeline.WriteRecords(s, dir, o.Name, o.Type, cols[o.Name])
	}
	pr, err := ptest.RunWithMetrics(p)
	if err != nil {
		t.Fatal(err)
	}
	res := &outputs{files: map[string][]byte{}, counters: map[string]int64{}}
	for _, c := range pr.Metrics().AllMetrics().Counters() {
		if c.Key.Namespace == "beamagents" {
			res.counters[c.Key.Name] += c.Result()
		}
	}
	for _, o := range pipeline.Outputs() {
		b, err := os.ReadFile(filepath.Join(dir, o.Name+".binpb"))
		if err != nil {
			t.Fatal(err)
		}
		res.files[o.Name] = b
	}
	res.intents = decodeAll(t, res.files[pipeline.IntentsName], func() *pb.ToolIntent { return &pb.ToolIntent{} })
	res.traces = decodeAll(t, res.files[pipeline.TracesName], func() *pb.TraceEvent { return &pb.TraceEvent{} })
	res.finals = decodeAll(t, res.files[pipeline.FinalsName], func() *pb.FinalReply { return &pb.FinalReply{} })
	res.snaps = decodeAll(t, res.files[pipeline.SnapshotsName], func() *pb.StateSnapshot { return &pb.StateSnapshot{} })
	res.dead = decodeAll(t, res.files[pipeline.DeadLettersName], func() *pb.ActivationErrorRecord { return &pb.ActivationErrorRecord{} })
	return res
}

func decodeAll[M proto.Message](t testing.TB, b []byte, newM func() M) []M {
	t.Helper()
	var out []M
	_, b, err := records.Split(b) // the typed file's header
	if err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(b)
	for r.Len() > 0 {
		m := newM()
		if err := protodelim.UnmarshalFrom(r, m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func finalText(t testing.TB, f *pb.FinalReply) string {
	t.Helper()
	s, _ := support.Schema()
	v, err := s.Decode([]byte(f.GetMessage()))
	if err != nil {
		t.Fatal(err)
	}
	fv, _ := v.Lookup("support.reply.text")
	return fv.Text()
}

func TestReply(t *testing.T) {
	o := runBeam(t, run{
		answers: []answer{{"c1", 0, 0, reply("Hello!")}},
		records: envelopes(ext("c1", t0, "hi")),
	})
	if len(o.finals) != 1 || finalText(t, o.finals[0]) != "Hello!" || len(o.intents)+len(o.dead) != 0 {
		t.Fatalf("finals %v intents %d dead %v", o.finals, len(o.intents), o.dead)
	}
}

// The tool result is listed before the event that causes its intent: event-time ordering
// processes it after, as its event time says.
func TestToolRoundTripAndPerKeyOrdering(t *testing.T) {
	_, kr := keyringRef(t)
	o := runBeam(t, run{
		answers: []answer{{"c2", 0, 0, lookup("A-1")}, {"c2", 0, 1, reply("A-1 shipped.")}},
		records: envelopes(result("c2", t0+60000, 0, 0, `{"status":"shipped"}`), ext("c2", t0, "where is A-1?")),
	})
	if len(o.dead) != 0 || len(o.intents) != 1 || len(o.finals) != 1 {
		t.Fatalf("dead %v intents %d finals %d", o.dead, len(o.intents), len(o.finals))
	}
	ti := o.intents[0]
	if ti.GetToolName() != support.ToolLookupOrder || ti.GetArgsJson() != `{"support.lookup_order.order_id":"A-1"}` || intent.Verify(ti, kr) != intent.OK {
		t.Fatalf("intent %v", ti)
	}
	if finalText(t, o.finals[0]) != "A-1 shipped." || o.finals[0].GetStepIndex() != 1 {
		t.Fatalf("final %v", o.finals[0])
	}
}

func TestApprovalGrantedAndRejected(t *testing.T) {
	o := runBeam(t, run{
		answers: []answer{
			{"yes", 0, 0, refund("A-2", 4599)}, {"yes", 0, 2, reply("Refunded.")},
			{"no", 0, 0, refund("A-3", 99000)}, {"no", 0, 1, reply("Your refund was declined.")},
		},
		records: envelopes(
			ext("yes", t0, "refund A-2"), approval("yes", t0+60000, 0, 0, true), result("yes", t0+120000, 0, 1, `{"refund_id":"R-1"}`),
			ext("no", t0, "refund A-3"), approval("no", t0+60000, 0, 0, false),
		),
	})
	if len(o.dead) != 0 {
		t.Fatalf("dead letters %v", o.dead)
	}
	kinds := map[string][]pb.ToolIntent_Kind{}
	for _, ti := range o.intents {
		kinds[string(ti.GetEntityKey())] = append(kinds[string(ti.GetEntityKey())], ti.GetKind())
	}
	if fmt.Sprint(kinds["yes"]) != "[APPROVAL TOOL]" && fmt.Sprint(kinds["yes"]) != "[TOOL APPROVAL]" {
		t.Fatalf("approved key intents %v", kinds["yes"])
	}
	if fmt.Sprint(kinds["no"]) != "[APPROVAL]" {
		t.Fatalf("rejected key intents %v", kinds["no"])
	}
	texts := map[string]string{}
	for _, f := range o.finals {
		texts[string(f.GetEntityKey())] = finalText(t, f)
	}
	if texts["yes"] != "Refunded." || texts["no"] != "Your refund was declined." {
		t.Fatalf("finals %v", texts)
	}
}

// An approval that never comes: the deadline escalates twice, then fails closed; an approval
// arriving after that is refused and nothing executes.
func TestDeadlineEscalationThenFailClosed(t *testing.T) {
	late := t0 + 24*60*60*1000
	o := runBeam(t, run{
		answers: []answer{{"c4", 0, 0, refund("A-4", 100)}},
		records: envelopes(ext("c4", t0, "refund A-4"), approval("c4", late, 0, 0, true)),
	})
	if len(o.intents) != 3 {
		t.Fatalf("want the approval intent and 2 escalations, got %d intents", len(o.intents))
	}
	attempts := map[uint32]bool{}
	for _, ti := range o.intents {
		if ti.GetKind() != pb.ToolIntent_APPROVAL {
			t.Fatalf("a %v intent was emitted", ti.GetKind())
		}
		attempts[ti.GetAttempt()] = true
	}
	if !attempts[0] || !attempts[1] || !attempts[2] {
		t.Fatalf("attempts %v", attempts)
	}
	if r := o.reasons(); r["approval_timeout"] != 1 || r["approval_unknown"] != 1 || len(o.dead) != 2 {
		t.Fatalf("dead letters %v", r)
	}
}

func TestOrphanedResultAndMalformedEnvelope(t *testing.T) {
	records := envelopes(result("c6", t0, 0, 0, "nobody asked"))
	records = append(records, []byte("\xff\xfe not an envelope"), []byte{})
	o := runBeam(t, run{records: records})
	if r := o.reasons(); r["orphaned_result"] != 1 || r["envelope_invalid"] != 2 || len(o.dead) != 3 {
		t.Fatalf("dead letters %v", o.dead)
	}
}

// A key whose memory blob was written by a newer binary: every activation becomes a dead
// letter and the state stays exactly as it was.
func TestFutureStateSchemaVersion(t *testing.T) {
	future := &pb.MemoryBlob{StateSchemaVersion: 99, Entries: []*pb.MemoryEntry{{Key: "k", Value: []byte("from the future")}}, TotalValueBytes: 15}
	o := runBeam(t, run{
		answers:  []answer{{"c7", 5, 0, reply("never")}},
		restores: []*pb.StateSnapshot{{StateSchemaVersion: 1, EntityKey: []byte("c7"), Seq: 5, Memory: future}},
		records:  envelopes(ext("c7", t0, "hi"), ext("c7", t0+1, "hello?"), export("c7", t0+2, "check")),
	})
	if r := o.reasons(); r["state_version_unsupported"] != 2 || len(o.dead) != 2 || len(o.finals) != 0 {
		t.Fatalf("dead letters %v, finals %d", o.dead, len(o.finals))
	}
	if len(o.snaps) != 1 || !proto.Equal(o.snaps[0].GetMemory(), future) || o.snaps[0].GetSeq() != 5 {
		t.Fatalf("state changed: %v", o.snaps)
	}
}

// The snapshot a Beam run exports equals the state the pure core computes for the same
// inputs: the DoFn adds no state of its own and loses none.
func TestExportSnapshotEqualsStateWritten(t *testing.T) {
	answers := []answer{{"c5", 0, 0, remember("contact", "email")}, {"c5", 0, 1, lookup("A-5")}, {"c5", 0, 2, reply("Sent by email.")}}
	envs := []*pb.AgentEnvelope{ext("c5", t0, "email me about A-5"), result("c5", t0+1000, 0, 1, "ok"), export("c5", t0+2000, "e1")}
	o := runBeam(t, run{answers: answers, records: envelopes(envs...)})
	if len(o.snaps) != 1 {
		t.Fatalf("snapshots %d", len(o.snaps))
	}

	a, err := agent.Build(support.Name, agentConfig(t, answers))
	if err != nil {
		t.Fatal(err)
	}
	_, kr := keyringRef(t)
	st := host.MapStore{}
	var want *pb.StateSnapshot
	for _, env := range envs {
		res, err := host.Activate(context.Background(), a, st, env, host.Deps{Keyring: kr})
		if err != nil {
			t.Fatal(err)
		}
		st.Apply(res)
		if len(res.Snapshots) == 1 {
			want = res.Snapshots[0]
		}
	}
	if !proto.Equal(o.snaps[0], want) {
		t.Fatalf("Beam snapshot\n%v\ncore snapshot\n%v", o.snaps[0], want)
	}
	if len(want.GetMemory().GetEntries()) != 1 || want.GetSeq() != 1 {
		t.Fatalf("unexpected state %v", want)
	}
}

// Many keys in one run: each key's state is its own.
func TestManyKeysAreIndependent(t *testing.T) {
	var answers []answer
	var envs []*pb.AgentEnvelope
	for i := range 40 {
		k := fmt.Sprintf("k%02d", i)
		answers = append(answers, answer{k, 0, 0, remember("me", k)}, answer{k, 0, 1, reply("hi " + k)})
		envs = append(envs, ext(k, t0+int64(i), "I am "+k), export(k, t0+10000, "x"))
	}
	o := runBeam(t, run{answers: answers, records: envelopes(envs...)})
	if len(o.finals) != 40 || len(o.snaps) != 40 || len(o.dead) != 0 {
		t.Fatalf("finals %d snapshots %d dead %v", len(o.finals), len(o.snaps), o.dead)
	}
	for _, s := range o.snaps {
		entries := s.GetMemory().GetEntries()
		if len(entries) != 1 || string(entries[0].GetValue()) != string(s.GetEntityKey()) || s.GetSeq() != 1 {
			t.Fatalf("key %s has memory %v", s.GetEntityKey(), entries)
		}
	}
}

// Running the same input twice writes byte-identical output files.
func TestReplayDeterminismThroughBeam(t *testing.T) {
	r := run{
		answers: []answer{{"c2", 0, 0, lookup("A-1")}, {"c2", 0, 1, reply("A-1 shipped.")}, {"c1", 0, 0, reply("Hello")}},
		records: envelopes(ext("c2", t0, "where is A-1?"), result("c2", t0+60000, 0, 0, "ok"), ext("c1", t0, "hi"), export("c2", t0+70000, "x")),
	}
	first, second := runBeam(t, r), runBeam(t, r)
	for name, b := range first.files {
		if !bytes.Equal(b, second.files[name]) {
			t.Errorf("%s differs between two runs of the same input", name)
		}
		if len(b) == 0 && name != pipeline.DeadLettersName {
			t.Errorf("%s is empty", name)
		}
	}
}
