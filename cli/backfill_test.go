package cli

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beamagents/beamagents/console"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
)

// A backfill through files: a customer's message whose event time is 4 hours old is `run`
// (the key suspends on its orders.lookup intent and, at the end of the input, is parked: one
// snapshot, no escalation, no dead letter), the `effector` with --expiry emission:24h executes
// the lookup (the default --expiry clock answers it EXPIRED, the tool never running), and
// `run --resume` of the parked state with the results as input ends the key with its final
// reply and no dead letter. The same intents in a
// file written an hour ago (a live run's intents delivered long after their emission) are
// refused EXPIRED under the same policy, and so are intents whose event times are more than
// MAXLAG behind the clock.
func TestBackfillThroughFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ring := write("ring.json", []byte(`{"active":"t","keys":[{"id":"t","secret":"`+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32))+`"}]}`))
	key := []byte("customer-2") // the support agent's recorded model looks its order up, then replies
	// The input's event times are 4 hours behind the clock the effector reads.
	t0 := time.Now().Add(-4 * time.Hour).Truncate(time.Second).UnixMilli()
	line := func(env *pb.AgentEnvelope) []byte { b, _ := console.AppendEnvelope(nil, env, true); return b }
	in1 := write("in1/events.jsonl",
		line(&pb.AgentEnvelope{EntityKey: key, EventTimeMs: t0, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("Where is my order A-1001?")}}))
	out1 := filepath.Join(dir, "out1")
	runOK(t, "run", "--agent", support.Name, "--keyring", "file:"+ring, "--input", in1, "--output_dir", out1)

	intents, err := readOutput(out1, pipeline.IntentsName, func() *pb.ToolIntent { return &pb.ToolIntent{} })
	if err != nil || len(intents) != 1 {
		t.Fatalf("run 1 wrote %d intents, want the one call and no escalation (%v)", len(intents), err)
	}
	parked, err := readOutput(out1, pipeline.SnapshotsName, func() *pb.StateSnapshot { return &pb.StateSnapshot{} })
	if err != nil || len(parked) != 1 || parked[0].GetRequestId() != "beamagents.parked" || parked[0].GetSnapshotAtMs() != t0 {
		t.Fatalf("run 1 parked %v (%v)", parked, err)
	}
	if dead, err := readDeadLetters(filepath.Join(out1, pipeline.DeadLettersName+".binpb")); err != nil || len(dead) != 0 {
		t.Fatalf("run 1 dead-lettered %v (%v)", dead, err)
	}
	deadline := int64(0) // the first attempt's: the restored suspension's deadline
	for _, ti := range intents {
		if ti.GetToolName() != support.ToolLookupOrder || ti.GetCreatedAtMs() != t0 || ti.GetExpiresAtMs() <= t0 {
			t.Fatalf("intent %v", ti)
		}
		if ti.GetAttempt() == 0 {
			deadline = ti.GetExpiresAtMs()
		}
	}
	effector := func(out, glob string, extra ...string) string {
		t.Helper()
		return runOK(t, append([]string{"effector", "--input", glob, "--output_dir", filepath.Join(dir, out), "--keyring", "file:" + ring,
			"--dedup", "bbolt:" + filepath.Join(dir, out+".db")}, extra...)...)
	}
	results := func(out string) []*pb.AgentEnvelope {
		t.Helper()
		envs, err := readOutput(filepath.Join(dir, out), "results", func() *pb.AgentEnvelope { return &pb.AgentEnvelope{} })
		if err != nil || len(envs) != len(intents) {
			t.Fatalf("%d results for %d intents (%v)", len(envs), len(intents), err)
		}
		return envs
	}
	allExpired := func(name, out, stdout string) {
		t.Helper()
		for _, env := range results(out) {
			if s := env.GetToolResult().GetStatus(); s != pb.ToolResult_EXPIRED {
				t.Fatalf("%s: a result is %v", name, s)
			}
		}
		if !strings.Contains(stdout, counter("executed", 0)) {
			t.Fatalf("%s: a tool ran:\n%s", name, stdout)
		}
	}

	// The default policy compares the deadlines with the clock: nothing runs.
	allExpired("--expiry clock", "clock", effector("clock", filepath.Join(out1, "intents.*"), "--expiry", "clock"))

	// The documented backfill: the window of each intent from its emission.
	stdout := effector("backfill", filepath.Join(out1, "intents.*"), "--expiry", "emission:24h")
	if !strings.Contains(stdout, counter("executed", 1)) || !strings.Contains(stdout, counter("expired", 0)) {
		t.Fatalf("the backfill's effector:\n%s", stdout)
	}
	// The one attempt of the call gets its one recorded result; the next run takes it.
	var distinct []*pb.AgentEnvelope
	last := int64(0)
	for _, env := range results("backfill") {
		r := env.GetToolResult()
		if r.GetStatus() != pb.ToolResult_OK || env.GetEventTimeMs() < t0 || env.GetEventTimeMs() >= deadline {
			t.Fatalf("result %v at event time %d: not OK inside the intent's window [%d, %d)", r, env.GetEventTimeMs(), t0, deadline)
		}
		if !slices.ContainsFunc(distinct, func(d *pb.AgentEnvelope) bool { return bytes.Equal(marshalDet(t, d), marshalDet(t, env)) }) {
			distinct = append(distinct, env)
		}
		last = max(last, env.GetEventTimeMs())
	}
	if len(distinct) != 1 {
		t.Fatalf("%d distinct results for one call", len(distinct))
	}
	if last >= deadline {
		t.Fatalf("the result at %d is after the deadline %d", last, deadline)
	}
	out2 := filepath.Join(dir, "out2")
	runOK(t, "run", "--agent", support.Name, "--keyring", "file:"+ring, "--input", filepath.Join(dir, "backfill", "results.jsonl"),
		"--resume", out1, "--output_dir", out2)
	finals, err := readOutput(out2, pipeline.FinalsName, func() *pb.FinalReply { return &pb.FinalReply{} })
	if err != nil || len(finals) != 1 || !bytes.Equal(finals[0].GetEntityKey(), key) || !strings.Contains(finals[0].GetMessage(), "Order A-1001 shipped") {
		t.Fatalf("finals %v (%v)", finals, err)
	}
	if dead, err := readDeadLetters(filepath.Join(out2, pipeline.DeadLettersName+".binpb")); err != nil || len(dead) != 0 {
		t.Fatalf("the resumed run dead-lettered %v (%v)", dead, err)
	}
	if again, err := readOutput(out2, pipeline.IntentsName, func() *pb.ToolIntent { return &pb.ToolIntent{} }); err != nil || len(again) != 0 {
		t.Fatalf("the resumed run emitted intents %v (%v)", again, err)
	}

	// The same intents in a file written an hour ago: stale, refused.
	stale := filepath.Join(dir, "stale", "intents.binpb")
	data, err := os.ReadFile(filepath.Join(out1, "intents.binpb"))
	if err != nil {
		t.Fatal(err)
	}
	write("stale/intents.binpb", data)
	hourAgo := time.Now().Add(-time.Hour)
	if err := os.Chtimes(stale, hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	allExpired("a file written an hour ago", "stale-out", effector("stale-out", stale, "--expiry", "emission:24h"))
	// Event times further behind the clock than MAXLAG: refused whatever the file says.
	allExpired("--expiry emission:1h", "lag-out", effector("lag-out", filepath.Join(out1, "intents.*"), "--expiry", "emission:1h"))
}

// counter is a counter's line as the effector prints it.
func counter(name string, n int) string { return fmt.Sprintf("  %-28s %d\n", name, n) }

func runOK(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("%s: exit %d\n%s\n%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout
}
