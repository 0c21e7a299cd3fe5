package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
)

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// TestMain removes the binary the tests built: each is hundreds of megabytes, and a
// directory left per run fills the disk.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary builds the command once per test binary.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "beamagents-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binDir, binPath = dir, filepath.Join(dir, "beamagents")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func runBin(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("beamagents %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

const (
	devicesKey = "sk-devices-2b4d6f8a0c1e3a5c7e9b1d3f5a7c9e1b"
	t0         = int64(1767225600000)
)

func envLine(t *testing.T, env *pb.AgentEnvelope) string {
	t.Helper()
	b, err := protojson.MarshalOptions{}.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	c.Write(b)
	return strings.Join(strings.Fields(c.String()), "") + "\n"
}

func reading(key []byte, at int64, milliC int) *pb.AgentEnvelope {
	ev := fmt.Sprintf(`{"device_id":"9007199254740993","milli_c":%d}`, milliC)
	return &pb.AgentEnvelope{EntityKey: key, EventTimeMs: at, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(ev)}}
}

func export(key []byte, at int64, id string) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: key, EventTimeMs: at, Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{RequestId: id}}}
}

// The bundled devices agent against an OpenAI-compatible server that answers with a native
// tool call: a quiet reading makes no request; the anomaly makes one request declaring the
// tools, and the dispatch intent's args_json holds 9007199254740993 exactly, signed; its
// ToolResult, fed to a run restored from the first run's snapshot, resumes to the model's
// answer with a second request carrying the tool message; replaying the traffic from the
// exported snapshot makes no model call and writes the same finals.
func TestDevicesAgainstOpenAI(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.New(llmtest.OpenAI, func(n int, _ []byte) llmtest.Reply {
		if n == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "devices_dispatch", // devices.dispatch as it is sent (provider.WireName)
				Arguments: `{"device_id":9007199254740993,"reason":"boiler at 91.0 °C"}`}}, InputTokens: 120, OutputTokens: 20}
		}
		return llmtest.Reply{Text: "Technician dispatched to device 9007199254740993: ticket T-77.", InputTokens: 160, OutputTokens: 15}
	})
	defer srv.Close()
	t.Setenv("BEAMAGENTS_DEVICES_KEY", devicesKey)
	secret := bytes.Repeat([]byte{0x42}, 32)
	ring := filepath.Join(dir, "keyring.json")
	os.WriteFile(ring, []byte(`{"active":"d1","keys":[{"id":"d1","secret":"`+base64.StdEncoding.EncodeToString(secret)+`"}]}`), 0o600)
	kr, err := intent.NewKeyring("d1", map[string][]byte{"d1": secret})
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("dev-9007199254740993")
	traffic := filepath.Join(dir, "traffic")
	os.MkdirAll(traffic, 0o755)
	in1 := filepath.Join(traffic, "1-readings.jsonl")
	os.WriteFile(in1, []byte(envLine(t, reading(key, t0, 21000))+envLine(t, reading(key, t0+1000, 91000))+envLine(t, export(key, t0+5000, "after-anomaly"))), 0o644)
	model := []string{"--model", "openai", "--model_name", "gpt-test", "--base_url", srv.BaseURL(), "--api_key", "env:BEAMAGENTS_DEVICES_KEY"}
	out1 := filepath.Join(dir, "out1")
	// --at_end fail: the dispatch's deadline escalates at the end of the input (the attempts
	// this test reads); the key's state travels by the export request, not by parking.
	runBin(t, append([]string{"run", "--agent", "devices", "--input", in1, "--output_dir", out1, "--keyring", "file:" + ring, "--at_end", "fail"}, model...)...)

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests after the readings, want 1 (the anomaly's)", len(reqs))
	}
	for _, want := range []string{`"tools":[`, `"name":"devices_lookup"`, `"name":"devices_dispatch"`, `"strict":true`} { // the wire names (provider.WireName)
		if !bytes.Contains(reqs[0], []byte(want)) {
			t.Errorf("the request does not declare %s:\n%s", want, reqs[0])
		}
	}
	intents := readIntents(t, filepath.Join(out1, "intents.jsonl"))
	// The bounded input ends with the watermark past every time: the suspension escalates
	// (the intent again, attempts 1 and 2) and fails closed. The snapshot was taken before.
	if len(intents) != 3 {
		t.Fatalf("%d intents, want the dispatch and its two escalations", len(intents))
	}
	var ti *pb.ToolIntent
	attempts := 0
	for _, re := range intents {
		if re.GetAttempt() == 0 {
			ti = re
		}
		attempts |= 1 << re.GetAttempt()
		if re.GetIntentId() != intents[0].GetIntentId() || intent.Verify(re, kr) != intent.OK {
			t.Errorf("intent %s attempt %d", re.GetIntentId(), re.GetAttempt())
		}
	}
	if attempts != 7 || ti == nil {
		t.Fatalf("attempts %b, want 0, 1 and 2", attempts)
	}
	if ti.GetToolName() != "devices.dispatch" || !strings.Contains(ti.GetArgsJson(), `"device_id":"9007199254740993"`) {
		t.Fatalf("intent %s %s", ti.GetToolName(), ti.GetArgsJson())
	}
	if o := intent.Verify(ti, kr); o != intent.OK {
		t.Fatalf("the dispatch intent verifies as %v", o)
	}

	in2 := filepath.Join(traffic, "2-result.jsonl")
	result := &pb.AgentEnvelope{EntityKey: key, EventTimeMs: t0 + 10000, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
		IntentId: ti.GetIntentId(), EntityKey: key, Seq: ti.GetSeq(), Status: pb.ToolResult_OK, Payload: []byte(`{"ticket":"T-77"}`), CompletedAtMs: t0 + 9000,
	}}}
	// The effector signs the result for the intent it answers; the run requires it.
	if err := intent.SignResult(result.GetToolResult(), ti, kr); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(in2, []byte(envLine(t, result)+envLine(t, export(key, t0+20000, "after-result"))), 0o644)
	out2 := filepath.Join(dir, "out2")
	runBin(t, append([]string{"run", "--agent", "devices", "--input", in2, "--restore", filepath.Join(out1, "snapshots.binpb"),
		"--output_dir", out2, "--keyring", "file:" + ring}, model...)...)
	reqs = srv.Requests()
	if len(reqs) != 2 {
		dl, _ := os.ReadFile(filepath.Join(out2, "dead_letters.jsonl"))
		t.Fatalf("%d model requests after the result, want 2; dead letters:\n%s", len(reqs), dl)
	}
	for _, want := range []string{`"role":"tool"`, `"tool_call_id":"call_1"`, `T-77`, `"tool_calls":[{"id":"call_1"`} {
		if !bytes.Contains(reqs[1], []byte(want)) {
			t.Errorf("the second request lacks %s:\n%s", want, reqs[1])
		}
	}
	finals, err := os.ReadFile(filepath.Join(out2, "finals.jsonl"))
	if err != nil || !bytes.Contains(finals, []byte("ticket T-77")) {
		t.Fatalf("finals %s (%v)", finals, err)
	}

	// Replays answer the model from the snapshots' replay caches only, as documented: no flag
	// names the model the run was launched with; the replay asks under the model id the
	// recorded traces name (gpt-test), not the agent's own (devices-scripted-1).
	for _, rp := range []struct{ name, input, restore, cache, recorded, atEnd string }{
		{"first run", in1, "", filepath.Join(out1, "snapshots.binpb"), out1, "fail"},
		{"from the exported snapshot", in2, filepath.Join(out1, "snapshots.binpb"), filepath.Join(out2, "snapshots.binpb"), out2, "park"},
	} {
		replayed := filepath.Join(dir, "replayed", strings.ReplaceAll(rp.name, " ", "_"))
		args := []string{"replay", "--agent", "devices", "--keyring", "file:" + ring, "--cache_from", rp.cache,
			"--input", rp.input, "--recorded", rp.recorded, "--output_dir", replayed, "--at_end", rp.atEnd}
		if rp.restore != "" {
			args = append(args, "--restore", rp.restore)
		}
		out := runBin(t, args...)
		if !strings.Contains(out, "0 cache misses, 0 provider calls; 0 keys diverged") {
			t.Errorf("replay %s: %s", rp.name, out)
		}
		if n := len(srv.Requests()); n != 2 {
			t.Errorf("replay %s made %d model requests", rp.name, n-2)
		}
		got, err := os.ReadFile(filepath.Join(replayed, "finals.jsonl"))
		want, _ := os.ReadFile(filepath.Join(rp.recorded, "finals.jsonl"))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("replay %s: finals differ:\n%s\n---\n%s", rp.name, got, want)
		}
	}
}

func readIntents(t *testing.T, path string) []*pb.ToolIntent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*pb.ToolIntent
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		m := &pb.ToolIntent{}
		if err := protojson.Unmarshal(sc.Bytes(), m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
	return out
}
