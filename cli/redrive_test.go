package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/console"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
)

// flakyAgent is the support agent whose model is down for chosen keys, optionally with
// another system prompt: config {"script": PATH, "down": ["key", …], "prompt": "…"}.
const flakyAgent = "support-flaky"

func init() {
	agent.Register(flakyAgent, func(config []byte) (*agent.Agent, error) {
		var cfg struct {
			Script string   `json:"script"`
			Down   []string `json:"down"`
			Prompt string   `json:"prompt"`
		}
		if err := json.Unmarshal(config, &cfg); err != nil {
			return nil, err
		}
		script, err := os.ReadFile(cfg.Script)
		if err != nil {
			return nil, err
		}
		def, err := support.Definition(script)
		if err != nil {
			return nil, err
		}
		def.Model = downFor{def.Model, cfg.Down}
		if cfg.Prompt != "" {
			def.Prompt = bindings.DefaultPrompt(cfg.Prompt)
		}
		return bindings.New(def)
	})
}

// downFor is a model that fails for the keys of an outage.
type downFor struct {
	model.Model
	down []string
}

func (d downFor) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if slices.Contains(d.down, string(req.EntityKey)) {
		return nil, &model.Error{Code: model.CodeProvider, Detail: "provider unavailable"}
	}
	return d.Model.Generate(ctx, req)
}

// A run where the model is down for some keys, then a redrive of their dead letters into a
// run restored from the first one's exports, ends with every key exactly as in a run where the
// model never failed.
func TestRedriveAfterOutage(t *testing.T) {
	dir := t.TempDir()
	keys := []string{"k0", "k1", "k2", "k3", "k4"}
	down := []string{"k1", "k3"}
	script, events, exports := outageTraffic(t, keys)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	scriptPath := write("script.jsonl", script)
	up := write("up.json", []byte(fmt.Sprintf(`{"script":%q}`, scriptPath)))
	outage := write("outage.json", []byte(fmt.Sprintf(`{"script":%q,"down":["k1","k3"]}`, scriptPath)))
	ring := write("ring.json", []byte(`{"active":"t","keys":[{"id":"t","secret":"`+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))+`"}]}`))
	write("in/events.jsonl", events)
	write("in/exports.jsonl", exports)
	write("again/exports.jsonl", exports)
	run := func(out, config, input, restore string) {
		t.Helper()
		code, stdout, stderr := runCLI(t, "", "run", "--agent", flakyAgent, "--agent_config", config, "--keyring", "file:"+ring,
			"--input", input, "--restore", restore, "--output_dir", filepath.Join(dir, out), "--mode", "streaming")
		if code != 0 {
			t.Fatalf("run %s: exit %d\n%s\n%s", out, code, stdout, stderr)
		}
	}
	run("never_failed", up, filepath.Join(dir, "in", "*.jsonl"), "")
	run("outage", outage, filepath.Join(dir, "in", "*.jsonl"), "")

	dead, err := readDeadLetters(filepath.Join(dir, "outage", "dead_letters.binpb"))
	if err != nil || len(dead) == 0 {
		t.Fatalf("the outage left no dead letters (%v)", err)
	}
	for _, d := range dead {
		if d.GetReason() != string(records.ReasonModelError) || !slices.Contains(down, string(d.GetEntityKey())) || d.GetEnvelope() == nil {
			t.Fatalf("unexpected dead letter %v", d)
		}
	}
	code, stdout, stderr := runCLI(t, "", "redrive", "--input", filepath.Join(dir, "outage", "dead_letters.binpb"),
		"--reason", "model_error", "--output", filepath.Join(dir, "again", "redriven.jsonl"))
	if code != 0 || !strings.Contains(stdout, fmt.Sprintf("%d envelopes written", len(dead))) {
		t.Fatalf("redrive: exit %d\n%s\n%s", code, stdout, stderr)
	}
	run("recovered", up, filepath.Join(dir, "again", "*.jsonl"), filepath.Join(dir, "outage", "snapshots.binpb"))

	want, err := os.ReadFile(filepath.Join(dir, "never_failed", "snapshots.binpb"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "recovered", "snapshots.binpb"))
	if err != nil {
		t.Fatal(err)
	}
	outageSnaps, _ := os.ReadFile(filepath.Join(dir, "outage", "snapshots.binpb"))
	if bytes.Equal(outageSnaps, want) {
		t.Fatal("the outage changed no state: the test proves nothing")
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("after the redrive the keys' exported state differs from the run that never failed")
	}
}

// outageTraffic is three events per key, each answered by a remember step and a reply, and an
// export request per key after them.
func outageTraffic(t *testing.T, keys []string) (script, events, exports []byte) {
	s, err := support.Schema()
	if err != nil {
		t.Fatal(err)
	}
	doc := func(v string) string {
		return fmt.Sprintf(`{"schema":%q,"root_type_id":%q,"schema_digest":%q,"value":%s}`, interaction.ValueFormat, s.RootTypeID(), s.Digest(), v)
	}
	line := func(m proto.Message) []byte {
		b, err := protojson.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var c bytes.Buffer
		json.Compact(&c, b)
		return append(c.Bytes(), '\n')
	}
	const t0 = int64(1767225600000)
	for _, k := range keys {
		for seq := range 3 {
			script = fmt.Appendf(script, "{\"entity\":%q,\"seq\":%d,\"step\":0,\"response_text\":%q}\n", k, seq,
				doc(fmt.Sprintf(`{"case":"support.remember","fields":{"support.remember.key":"note%d","support.remember.value":"v%d"}}`, seq, seq)))
			script = fmt.Appendf(script, "{\"entity\":%q,\"seq\":%d,\"step\":1,\"response_text\":%q}\n", k, seq,
				doc(fmt.Sprintf(`{"case":"support.reply","fields":{"support.reply.text":"noted %d"}}`, seq)))
			events = append(events, line(&pb.AgentEnvelope{EntityKey: []byte(k), EventTimeMs: t0 + int64(seq)*5000,
				Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(fmt.Sprintf("message %d", seq))}})...)
		}
		exports = append(exports, line(&pb.AgentEnvelope{EntityKey: []byte(k), EventTimeMs: t0 + 60000,
			Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{RequestId: "end"}}})...)
	}
	return script, events, exports
}

func TestRedriveFilter(t *testing.T) {
	d := &pb.ActivationErrorRecord{EntityKey: []byte("k"), Reason: "model_error", EventTimeMs: 1000}
	for _, tc := range []struct {
		name string
		f    redriveFilter
		want bool
	}{
		{"everything", redriveFilter{}, true},
		{"reason", redriveFilter{reason: "model_error"}, true},
		{"other reason", redriveFilter{reason: "inbox_full"}, false},
		{"key", redriveFilter{key: "k"}, true},
		{"other key", redriveFilter{key: "j"}, false},
		{"since inclusive", redriveFilter{since: 1000}, true},
		{"until exclusive", redriveFilter{until: 1000}, false},
		{"window", redriveFilter{since: 999, until: 1001}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.f.match(d); got != tc.want {
				t.Fatalf("match = %v", got)
			}
		})
	}
	if ms, err := parseTime("2026-01-01T00:00:00Z"); err != nil || ms != 1767225600000 {
		t.Fatalf("RFC 3339: %d %v", ms, err)
	}
	if _, err := parseTime("yesterday"); err == nil {
		t.Fatal("a bad time parsed")
	}
}

// Dead letters without an envelope are counted, not written; JSON Lines output round-trips.
func TestRedriveSkipsAndJSONLines(t *testing.T) {
	dir := t.TempDir()
	env := &pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: 5, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("hi")}}
	envBytes, _ := proto.Marshal(env)
	var in []byte
	for _, d := range []*pb.ActivationErrorRecord{
		{EntityKey: []byte("k"), Reason: "model_error", EventTimeMs: 5, FailedInput: &pb.ActivationErrorRecord_Envelope{Envelope: envBytes}},
		{EntityKey: []byte("k"), Reason: "activation_timeout"},
		{Reason: "envelope_invalid", FailedInput: &pb.ActivationErrorRecord_RawRecord{RawRecord: []byte("{not json")}},
		{Reason: "envelope_invalid", FailedInput: &pb.ActivationErrorRecord_RawRecord{RawRecord: []byte(`{"entityKey":"aw==","externalEvent":"aGk="}`)}},
	} {
		b, _ := proto.Marshal(d)
		in = append(binary.AppendUvarint(in, uint64(len(b))), b...)
	}
	p := filepath.Join(dir, "dead.binpb")
	os.WriteFile(p, in, 0o644)
	out := filepath.Join(dir, "env.jsonl")
	code, stdout, stderr := runCLI(t, "", "redrive", "--input", p, "--output", out)
	if code != 0 || !strings.Contains(stdout, "4 dead letters chosen, 2 envelopes written") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	data, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	got := &pb.AgentEnvelope{}
	if len(lines) != 2 || protojson.Unmarshal([]byte(lines[0]), got) != nil || !proto.Equal(got, env) {
		t.Fatalf("output %q", data)
	}
	code, stdout, stderr = runCLI(t, "", "redrive", "--input", p, "--reason", "model_error", "--key", "k", "--since", "5",
		"--until", "2026-01-01T00:00:00Z", "--output", filepath.Join(dir, "env.binpb"))
	if code != 0 || !strings.Contains(stdout, "1 dead letters chosen, 1 envelopes written") {
		t.Fatalf("filtered: exit %d\n%s\n%s", code, stdout, stderr)
	}
	wantBin := append(records.Header(envelopeType), append([]byte{byte(len(envBytes))}, envBytes...)...)
	if bin, _ := os.ReadFile(filepath.Join(dir, "env.binpb")); !bytes.Equal(bin, wantBin) {
		t.Fatalf("binary output %x", bin)
	}
	if code, _, _ := runCLI(t, "", "redrive", "--input", filepath.Join(dir, "none*"), "--output", out); code != 2 {
		t.Fatalf("no input: exit %d", code)
	}
}

func FuzzRedriveEnvelope(f *testing.F) {
	env, _ := proto.Marshal(&pb.AgentEnvelope{EntityKey: []byte("k"), Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("x")}})
	d1, _ := proto.Marshal(&pb.ActivationErrorRecord{FailedInput: &pb.ActivationErrorRecord_Envelope{Envelope: env}})
	d2, _ := proto.Marshal(&pb.ActivationErrorRecord{FailedInput: &pb.ActivationErrorRecord_RawRecord{RawRecord: []byte(`{"entityKey":"aw=="}`)}})
	f.Add(d1)
	f.Add(d2)
	f.Fuzz(func(t *testing.T, b []byte) {
		d := &pb.ActivationErrorRecord{}
		if proto.Unmarshal(b, d) != nil {
			return
		}
		env, err := console.RedriveEnvelope(d)
		if err != nil {
			return
		}
		if len(env.GetEntityKey()) == 0 || env.GetPayload() == nil {
			t.Fatal("redrove an envelope that cannot run")
		}
		if _, err := console.AppendEnvelope(nil, env, true); err != nil {
			t.Fatal(err)
		}
	})
}
