package conformance

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/examples/devices"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/records"
)

// Build builds the main package in dir (for example an adapter's ./example) into a
// temporary directory and returns the binary's path.
func Build(t testing.TB, dir, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "agents")
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// CheckBinary is the end-to-end check of a built binary (cli.Main) registering agentName,
// a devices agent, against each model API's strict loopback server (--model openai, then
// --model anthropic) answering with native tool calls: a quiet reading makes no request; the
// anomaly makes one request declaring both tools, and the dispatch intent's args_json holds
// 9007199254740993 exactly, signed; its signed ToolResult, run restored from the first run's
// snapshot, resumes to the model's answer (the second request carries the tool result);
// replaying both runs from their snapshots makes no model call and writes the same finals.
func CheckBinary(t *testing.T, bin, agentName string) {
	t.Helper()
	for _, api := range APIs {
		t.Run(api, func(t *testing.T) { checkBinary(t, bin, agentName, api) })
	}
}

func checkBinary(t *testing.T, bin, agentName, api string) {
	dir := t.TempDir()
	srv := llmtest.New(api, func(n int, _ []byte) llmtest.Reply {
		if n == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: provider.WireName(devices.ToolDispatch),
				Arguments: `{"device_id":` + DeviceText + `,"reason":"boiler at 91.0 °C"}`}}, InputTokens: 120, OutputTokens: 20}
		}
		return llmtest.Reply{Text: "Technician dispatched to device " + DeviceText + ": ticket T-77.", InputTokens: 160, OutputTokens: 15}
	})
	defer srv.Close()
	t.Setenv(apiKeyEnv, "sk-conformance-binary-0e2d4c6b8a")
	kr, ring, err := keyring(dir)
	if err != nil {
		t.Fatal(err)
	}
	k := []byte("dev-" + DeviceText)
	in1 := filepath.Join(dir, "1-readings.jsonl")
	if err := writeJSONLines(in1, []*pb.AgentEnvelope{reading(k, t0, quietMilliC), reading(k, t0+1000, 91000), exportReq(k, t0+5000, "after-anomaly")}); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--agent", agentName, "--keyring", ring}
	hosted := []string{"--model", api, "--model_name", modelID, "--base_url", srv.BaseURL(), "--api_key", "env:" + apiKeyEnv}
	out1 := filepath.Join(dir, "out1")
	runBinary(t, bin, append(append([]string{"run", "--input", in1, "--output_dir", out1}, flags...), hosted...)...)

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests after the readings, want 1 (the anomaly's)", len(reqs))
	}
	for _, want := range append([]string{`"tools":[`}, wire[api].declares...) {
		if !bytes.Contains(reqs[0], []byte(want)) {
			t.Errorf("the request does not declare %s:\n%s", want, reqs[0])
		}
	}
	o1, err := readOutputs(out1)
	if err != nil {
		t.Fatal(err)
	}
	var ti *pb.ToolIntent
	for _, x := range o1.intents {
		if x.GetAttempt() == 0 {
			ti = x
		}
	}
	if ti == nil || ti.GetToolName() != devices.ToolDispatch || !strings.Contains(ti.GetArgsJson(), `"device_id":"`+DeviceText+`"`) {
		t.Fatalf("dispatch intent %v", ti)
	}
	if o := intent.Verify(ti, kr); o != intent.OK {
		t.Fatalf("the dispatch intent verifies as %v", o)
	}
	res := &pb.ToolResult{IntentId: ti.GetIntentId(), EntityKey: k, Seq: ti.GetSeq(), Status: pb.ToolResult_OK, Payload: []byte(`{"ticket":"T-77"}`), CompletedAtMs: t0 + 9000}
	if err := intent.SignResult(res, ti, kr); err != nil {
		t.Fatal(err)
	}
	in2 := filepath.Join(dir, "2-result.jsonl")
	if err := writeJSONLines(in2, []*pb.AgentEnvelope{
		{EntityKey: k, EventTimeMs: t0 + 10000, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: res}}, exportReq(k, t0+20000, "after-result"),
	}); err != nil {
		t.Fatal(err)
	}
	snaps1 := filepath.Join(out1, records.SnapshotsName+".binpb")
	out2 := filepath.Join(dir, "out2")
	runBinary(t, bin, append(append([]string{"run", "--input", in2, "--restore", snaps1, "--output_dir", out2}, flags...), hosted...)...)
	reqs = srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests after the result, want 2", len(reqs))
	}
	for _, want := range append(answers(api, "call_1"), `T-77`) {
		if !bytes.Contains(reqs[1], []byte(want)) {
			t.Errorf("the second request lacks %s:\n%s", want, reqs[1])
		}
	}
	o2, err := readOutputs(out2)
	if err != nil {
		t.Fatal(err)
	}
	if len(o2.finals) != 1 || !strings.Contains(o2.finals[0].GetMessage(), "ticket T-77") {
		t.Fatalf("finals %v, dead letters %v", o2.finals, o2.dead)
	}

	// Replays answer only from the snapshots' caches; the replayed agent names the model the
	// requests named.
	conf := filepath.Join(dir, "replay.json")
	if err := os.WriteFile(conf, Config{ModelID: modelID}.JSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, rp := range []struct{ name, input, restore, cache, recorded string }{
		{"first", in1, "", snaps1, out1},
		{"restored", in2, snaps1, filepath.Join(out2, records.SnapshotsName+".binpb"), out2},
	} {
		replayed := filepath.Join(dir, "replayed-"+rp.name)
		args := []string{"replay", "--agent", agentName, "--agent_config", conf, "--keyring", ring, "--cache_from", rp.cache,
			"--input", rp.input, "--recorded", rp.recorded, "--output_dir", replayed}
		if rp.restore != "" {
			args = append(args, "--restore", rp.restore)
		}
		if out := runBinary(t, bin, args...); !strings.Contains(out, "0 cache misses, 0 provider calls; 0 keys diverged") {
			t.Errorf("replay %s: %s", rp.name, out)
		}
		if n := len(srv.Requests()); n != 2 {
			t.Errorf("replay %s made %d model requests", rp.name, n-2)
		}
		got, err := readOutputs(replayed)
		want, _ := readOutputs(rp.recorded)
		if err != nil || len(got.finals) != len(want.finals) {
			t.Fatalf("replay %s: %v", rp.name, err)
		}
		for i := range got.finals {
			if !proto.Equal(got.finals[i], want.finals[i]) {
				t.Errorf("replay %s: final %d differs", rp.name, i)
			}
		}
	}
}

func runBinary(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return string(out)
}
