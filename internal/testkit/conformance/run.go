package conformance

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/replay"
	"github.com/beamagents/beamagents/transforms"
)

// Subject is one implementation of the conformance agent.
type Subject struct {
	// Framework names the subject's column in the matrix: "native", "langchaingo", …
	Framework string
	// Agent is the subject's registered agent name.
	Agent string
	// Lacks maps the scenarios the subject cannot run to the reason; they are skipped as
	// "n/a: reason".
	Lacks map[string]string
}

// Scenario names, in the matrix's order: the stable names of Run's subtests.
const (
	QuietNoModelCall       = "quiet_no_model_call"
	FinalReply             = "final_reply"
	ToolSuspendResume      = "tool_suspend_resume"
	ApprovalApproved       = "approval_approved"
	ApprovalDenied         = "approval_denied"
	ApprovalTimedOut       = "approval_timed_out"
	ReplayZeroModelCalls   = "replay_zero_model_calls"
	ExportRestoreSuspended = "export_restore_suspended"
	ShuffledInputIdentical = "shuffled_input_identical"
	TokenBudgetExceeded    = "token_budget_exceeded"
	ExactInteger           = "exact_integer_2_53_plus_1"
	HostileOutputRefused   = "hostile_output_refused"
)

// The traffic's clock: every time is an event time from t0.
const t0 = int64(1767225600000)

// apiKeyEnv holds the loopback server's API key, which the hosted provider reads by
// reference.
const apiKeyEnv = "BEAMAGENTS_CONFORMANCE_KEY"

// key is a scenario's entity key.
func key(scenario string) []byte { return []byte("conformance-" + scenario) }

// anomalies maps the keys that read an anomaly to its value.
var anomalies = []struct {
	scenario string
	milliC   int64
}{
	{FinalReply, finalMilliC},
	{ToolSuspendResume, toolMilliC},
	{ExportRestoreSuspended, exportMilliC},
	{TokenBudgetExceeded, budgetMilliC},
	{"hostile-tool", hostileToolMilliC},
	{"hostile-args", hostileArgsMilliC},
	{"hostile-int", hostileIntMilliC},
	{ApprovalApproved, approvedMilliC},
	{ApprovalDenied, deniedMilliC},
	{ApprovalTimedOut, timedOutMilliC},
}

// replayed are the keys replayed from the recorded caches: every key whose activations
// committed (a failed activation commits no cache entry, so its replay has nothing to
// answer from).
var replayed = []string{QuietNoModelCall, FinalReply, ToolSuspendResume, ExportRestoreSuspended, ApprovalApproved, ApprovalDenied, ApprovalTimedOut}

// phase is one pipeline run: its inputs and what came out.
type phase struct {
	restores []*pb.StateSnapshot
	input    []*pb.AgentEnvelope
	out      *outputs
	reqs     [][]byte // the model requests made during the run
}

// run is a subject's traffic, run once; the scenarios check what it produced.
type run struct {
	s      Subject
	api    string // the model API: llmtest.OpenAI or llmtest.Anthropic
	dir    string
	kr     *intent.Keyring
	ring   string
	srv    *llmtest.Server
	phases []*phase
	// shuffled is phase 1's input run again in another order; replays are the replays of
	// every phase; replayReqs the requests the server saw during them.
	shuffled   *outputs
	replays    [][]replay.Key
	misses     int
	replayReqs int
}

// APIs are the model APIs every subject runs against, each on a strict loopback stand-in
// (llmtest): a request either vendor's API would refuse fails the scenario that made it.
var APIs = []string{llmtest.OpenAI, llmtest.Anthropic}

// Run runs every scenario for s, as subtests TestX/<framework>/<scenario>/<api>: for each
// model API it runs the traffic on Prism (three pipeline runs chained by exported snapshots,
// the first run's input again shuffled) and replays it offline, then checks each scenario
// against each API's run.
func Run(t *testing.T, s Subject) {
	t.Run(s.Framework, func(t *testing.T) {
		runs := make([]*run, len(APIs))
		errs := make([]error, len(APIs))
		for i, api := range APIs {
			runs[i], errs[i] = start(t, s, api)
		}
		for _, sc := range scenarios {
			t.Run(sc.name, func(t *testing.T) {
				if why, ok := s.Lacks[sc.name]; ok {
					t.Skip("n/a: " + why)
				}
				for i, api := range APIs {
					t.Run(api, func(t *testing.T) {
						if errs[i] != nil {
							t.Fatal(errs[i])
						}
						sc.check(t, runs[i])
					})
				}
			})
		}
	})
}

func start(t *testing.T, s Subject, api string) (*run, error) {
	t.Helper()
	r := &run{s: s, api: api, dir: t.TempDir()}
	r.srv = Server(api)
	t.Cleanup(r.srv.Close)
	t.Setenv(apiKeyEnv, "sk-conformance-7f3a9c1e5b2d4f6a8c0e")
	var err error
	if r.kr, r.ring, err = keyring(r.dir); err != nil {
		return nil, err
	}
	p1 := &phase{input: phase1()}
	if err := r.exec("phase1", p1); err != nil {
		return nil, err
	}
	p2, err := r.phase2(p1)
	if err != nil {
		return nil, err
	}
	if len(p2.input) == 0 {
		r.none(p2)
	} else if err := r.exec("phase2", p2); err != nil {
		return nil, err
	}
	p3, err := r.phase3(p2)
	if err != nil {
		return nil, err
	}
	if len(p3.input) == 0 {
		r.none(p3)
	} else if err := r.exec("phase3", p3); err != nil {
		return nil, err
	}
	if err := r.replay(); err != nil {
		return nil, err
	}
	shuffled := &phase{input: shuffle(p1.input)}
	if err := r.exec("phase1-shuffled", shuffled); err != nil {
		return nil, err
	}
	r.shuffled = shuffled.out
	return r, nil
}

// keyring writes the run's keyring file and returns it and its reference.
func keyring(dir string) (*intent.Keyring, string, error) {
	secret := bytes.Repeat([]byte{0x5c}, 32)
	kr, err := intent.NewKeyring("conformance", map[string][]byte{"conformance": secret})
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(dir, "keyring.json")
	doc := fmt.Sprintf(`{"active":"conformance","keys":[{"id":"conformance","secret":"%s"}]}`, b64(secret))
	return kr, "file:" + path, os.WriteFile(path, []byte(doc), 0o600)
}

// config is the factory configuration of every run and replay.
func config() []byte {
	return Config{ModelID: modelID, MaxTokens: maxTokens, ApproveOverMilliC: approveOver}.JSON()
}

// exec runs p on Prism.
func (r *run) exec(name string, p *phase) error {
	in := filepath.Join(r.dir, name+"-input.jsonl")
	if err := writeJSONLines(in, p.input); err != nil {
		return err
	}
	require := intent.ModeRequire
	o := pipeline.Options{
		Options: transforms.Options{Agent: r.s.Agent, Config: config(), Keyring: r.ring, VerifyResults: &require,
			Model: hosted.Options{Provider: r.api, Name: modelID, BaseURL: r.srv.BaseURL(), APIKey: "env:" + apiKeyEnv, MaxAttempts: 1}},
		Input: in, OutputDir: filepath.Join(r.dir, name),
	}
	if len(p.restores) > 0 {
		o.Restore = filepath.Join(r.dir, name+"-restore.jsonl")
		if err := writeJSONLines(o.Restore, p.restores); err != nil {
			return err
		}
	}
	before := len(r.srv.Requests())
	if _, err := pipeline.Run(context.Background(), "prism", o); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	p.reqs = r.srv.Requests()[before:]
	out, err := readOutputs(o.OutputDir)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	p.out = out
	r.phases = append(r.phases, p)
	return nil
}

// none records p, which has nothing to run (the subject lacks its scenarios, or the run
// before left nothing to answer), as a run without outputs.
func (r *run) none(p *phase) {
	p.out = &outputs{raw: map[int64][][]byte{}, files: map[string][]byte{}}
	r.phases = append(r.phases, p)
}

func reading(k []byte, at, milliC int64) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: k, EventTimeMs: at, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: readingEvent(milliC)}}
}

func exportReq(k []byte, at int64, id string) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: k, EventTimeMs: at, Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{RequestId: id}}}
}

// phase1 is the first run's input: per key a quiet reading, its anomaly (the quiet key reads
// a second quiet value) and an export request before any deadline.
func phase1() []*pb.AgentEnvelope {
	var in []*pb.AgentEnvelope
	q := key(QuietNoModelCall)
	in = append(in, reading(q, t0, quietMilliC), reading(q, t0+1000, quietMilliC+500), exportReq(q, t0+5000, "phase-1"))
	for i, a := range anomalies {
		k, d := key(a.scenario), int64(i+1)
		in = append(in, reading(k, t0+d, quietMilliC), reading(k, t0+1000+d, a.milliC), exportReq(k, t0+5000+d, "phase-1"))
	}
	return in
}

// snapshotOf is the snapshot a phase exported for k.
func (p *phase) snapshotOf(k []byte) (*pb.StateSnapshot, error) {
	snaps := of(p.out.snaps, k)
	if len(snaps) != 1 {
		return nil, fmt.Errorf("key %s: %d snapshots, want 1", k, len(snaps))
	}
	return snaps[0], nil
}

// firstIntent is k's attempt-0 intent of kind in p.
func (p *phase) firstIntent(k []byte, kind pb.ToolIntent_Kind) (*pb.ToolIntent, error) {
	for _, ti := range of(p.out.intents, k) {
		if ti.GetKind() == kind && ti.GetAttempt() == 0 {
			return ti, nil
		}
	}
	return nil, fmt.Errorf("key %s: no %v intent", k, kind)
}

// result answers ti with the kit's ticket, signed as an effector signs it.
func (r *run) result(ti *pb.ToolIntent, at int64) (*pb.AgentEnvelope, error) {
	res := &pb.ToolResult{IntentId: ti.GetIntentId(), EntityKey: ti.GetEntityKey(), Seq: ti.GetSeq(), Status: pb.ToolResult_OK,
		Payload: []byte(ticketPayload), CompletedAtMs: at - 1000}
	if err := intent.SignResult(res, ti, r.kr); err != nil {
		return nil, err
	}
	return &pb.AgentEnvelope{EntityKey: ti.GetEntityKey(), EventTimeMs: at, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: res}}, nil
}

// decision answers the approval ti, signed.
func (r *run) decision(ti *pb.ToolIntent, at int64, approved bool) (*pb.AgentEnvelope, error) {
	ap := &pb.AgentEnvelope_Approval{IntentId: ti.GetIntentId(), Approved: approved, Approver: "operator@example.com", DecidedAtMs: at - 1000}
	if err := intent.SignApproval(ap, ti, r.kr); err != nil {
		return nil, err
	}
	return &pb.AgentEnvelope{EntityKey: ti.GetEntityKey(), EventTimeMs: at, Payload: &pb.AgentEnvelope_Approval_{Approval: ap}}, nil
}

// phase2 restores the keys that continue and answers their intents: the two dispatches,
// the approval granted and the approval denied. A key whose first run did not leave what its
// answer needs (a snapshot, the intent) is left out: its scenario's checks fail on their own,
// and the other scenarios still run.
func (r *run) phase2(p1 *phase) (*phase, error) {
	p := &phase{}
	const at = t0 + 10000
	for i, sc := range []string{ToolSuspendResume, ExportRestoreSuspended, ApprovalApproved, ApprovalDenied} {
		if _, lacks := r.s.Lacks[sc]; lacks {
			continue
		}
		k := key(sc)
		snap, err := p1.snapshotOf(k)
		if err != nil {
			continue
		}
		var env *pb.AgentEnvelope
		switch sc {
		case ToolSuspendResume, ExportRestoreSuspended:
			ti, err := p1.firstIntent(k, pb.ToolIntent_TOOL)
			if err != nil {
				continue
			}
			env, err = r.result(ti, at+int64(i))
			if err != nil {
				return nil, err
			}
		default:
			ti, err := p1.firstIntent(k, pb.ToolIntent_APPROVAL)
			if err != nil {
				continue
			}
			if env, err = r.decision(ti, at+int64(i), sc == ApprovalApproved); err != nil {
				return nil, err
			}
		}
		p.restores = append(p.restores, snap)
		p.input = append(p.input, env, exportReq(k, t0+20000+int64(i), "phase-2"))
	}
	return p, nil
}

// phase3 answers the dispatch the approval released (nothing when there is none).
func (r *run) phase3(p2 *phase) (*phase, error) {
	k := key(ApprovalApproved)
	if _, lacks := r.s.Lacks[ApprovalApproved]; lacks {
		return &phase{}, nil
	}
	snap, err := p2.snapshotOf(k)
	if err != nil {
		return &phase{}, nil
	}
	ti, err := p2.firstIntent(k, pb.ToolIntent_TOOL)
	if err != nil {
		return &phase{}, nil
	}
	env, err := r.result(ti, t0+30000)
	if err != nil {
		return nil, err
	}
	return &phase{restores: []*pb.StateSnapshot{snap}, input: []*pb.AgentEnvelope{env, exportReq(k, t0+40000, "phase-3")}}, nil
}

// replay replays every phase of the replayed keys offline, the model answered only from the
// caches of the snapshots the phase exported, against the phase's recorded outputs.
func (r *run) replay() error {
	a, err := agent.Build(r.s.Agent, config())
	if err != nil {
		return err
	}
	before := len(r.srv.Requests())
	for _, p := range r.phases {
		if len(p.input) == 0 {
			continue // a phase with nothing to run
		}
		var traces []*pb.TraceEvent
		traces = append(traces, p.out.traces...)
		m := replay.NewModel(p.out.snaps, traces)
		var inputs []replay.Input
		for _, sc := range replayed {
			k := key(sc)
			in := replay.Input{Entity: k}
			for _, s := range of(p.restores, k) {
				in.Values = append(in.Values, drive.RestoreValue(s))
			}
			for _, env := range p.input {
				if bytes.Equal(env.GetEntityKey(), k) {
					b, err := proto.MarshalOptions{Deterministic: true}.Marshal(env)
					if err != nil {
						return err
					}
					in.Values = append(in.Values, b)
				}
			}
			if len(in.Values) > 0 {
				inputs = append(inputs, in)
			}
		}
		keys, err := replay.Run(context.Background(), a, host.Deps{Keyring: r.kr}, m, inputs, p.out.raw)
		if err != nil {
			return err
		}
		r.replays = append(r.replays, keys)
		r.misses += len(m.Misses())
	}
	r.replayReqs = len(r.srv.Requests()) - before
	return nil
}

// shuffle returns in in another order, the same on every run (event-time ordering restores
// each key's order).
func shuffle(in []*pb.AgentEnvelope) []*pb.AgentEnvelope {
	out := append([]*pb.AgentEnvelope(nil), in...)
	rng := rand.New(rand.NewPCG(26, 53))
	for out[0] == in[0] {
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	return out
}
