package cli_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/canary"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/tracing"
)

// supportCandidate is the support agent under another name, the canary's candidate.
const supportCandidate = "support-next"

func init() { agent.Register(supportCandidate, support.NewNamed(supportCandidate)) }

// execSelf runs this test binary as beamagents (with the agents its tests register).
func execSelf(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCLI+"=1")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stdout.String(), stderr.String()
}

func envLine(key string, ms int64, payload string) string {
	return fmt.Sprintf(`{"entityKey":%q,"eventTimeMs":"%d",%s}`, base64.StdEncoding.EncodeToString([]byte(key)), ms, payload)
}

func eventLine(key string, ms int64, text string) string {
	return envLine(key, ms, fmt.Sprintf(`"externalEvent":%q`, base64.StdEncoding.EncodeToString([]byte(text))))
}

// ranOn maps "key/seq" to the agents the traces name.
func ranOn(traces []*pb.TraceEvent) map[string]string {
	m := map[string]string{}
	for _, e := range traces {
		k := fmt.Sprintf("%s/%d", e.GetEntityKey(), e.GetSeq())
		a := e.GetAttributes()[tracing.AttrAgent]
		if prev, ok := m[k]; ok && prev != a {
			a = prev + "+" + a
		}
		m[k] = a
	}
	return m
}

// A rollback from 50% to 20% while keys wait: the relaunch (run --resume, the real command)
// finishes customer-2's activation on the candidate that started it, although customer-2 has
// left the slice, and its next activation, like every new one, follows the new slice.
func TestCanaryRelaunchKeepsActivations(t *testing.T) {
	s50, _ := canary.FromPercent(50)
	s20, _ := canary.FromPercent(20)
	for key, want := range map[string][2]bool{"customer-2": {true, false}, "customer-3": {false, false}, "customer-5": {true, false}} {
		if s50.Contains([]byte(key)) != want[0] || s20.Contains([]byte(key)) != want[1] {
			t.Fatalf("%s is not where the test expects it in the 50%% and 20%% slices", key)
		}
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "script.jsonl")
	thanks := `{"entity":"customer-2","seq":1,"step":0,"response":{"case":"support.reply","fields":{"support.reply.text":"You are welcome."}}}` + "\n"
	if err := os.WriteFile(script, append(append([]byte{}, support.ModelScript...), thanks...), 0o644); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "config.json")
	if err := os.WriteFile(config, []byte(`{"script":"`+script+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(support.Envelopes, []byte("\n"))
	write := func(name string, ls ...string) string {
		p := filepath.Join(dir, name)
		var b bytes.Buffer
		for _, l := range ls {
			b.WriteString(l + "\n")
		}
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Run 1 at 50%: customer-2 (in the slice) asks about its order and waits on the lookup,
	// customer-3 (not in it) asks for a refund and waits on the approval; both park.
	first := write("first.jsonl", string(lines[1]), string(lines[3]))
	// Run 2 at 20%: the lookup's result, customer-2's thanks, customer-3's approval and refund
	// result, and customer-5's first event.
	second := write("second.jsonl", string(lines[2]), eventLine("customer-2", 1767225670000, "Thanks!"),
		string(lines[4]), string(lines[5]), string(lines[7]))
	base := []string{"run", "--agent", support.Name, "--canary_agent", supportCandidate, "--agent_config", config, "--allow_unsigned_intents"}
	out1, out2 := filepath.Join(dir, "out1"), filepath.Join(dir, "out2")
	if code, stdout, stderr := execSelf(t, append(base, "--canary_percent", "50", "--input", first, "--output_dir", out1)...); code != 0 {
		t.Fatalf("run at 50%%: exit %d\n%s\n%s", code, stdout, stderr)
	}
	got := ranOn(readTyped(t, out1, pipeline.TracesName, func() *pb.TraceEvent { return &pb.TraceEvent{} }))
	want := map[string]string{"customer-2/0": supportCandidate, "customer-3/0": support.Name}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("run at 50%%: activations ran on %v, want %v", got, want)
	}
	if n := len(readTyped(t, out1, pipeline.SnapshotsName, func() *pb.StateSnapshot { return &pb.StateSnapshot{} })); n != 2 {
		t.Fatalf("%d parked keys, want 2", n)
	}

	if code, stdout, stderr := execSelf(t, append(base, "--canary_percent", "20", "--resume", out1, "--input", second, "--output_dir", out2)...); code != 0 {
		t.Fatalf("relaunch at 20%%: exit %d\n%s\n%s", code, stdout, stderr)
	}
	got = ranOn(readTyped(t, out2, pipeline.TracesName, func() *pb.TraceEvent { return &pb.TraceEvent{} }))
	want = map[string]string{
		"customer-2/0": supportCandidate, // resumed: the agent that started it
		"customer-2/1": support.Name,     // new: the 20% slice no longer holds customer-2
		"customer-3/0": support.Name,
		"customer-5/0": support.Name, // new: in the 50% slice, not in the 20% one
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("relaunch at 20%%: activations ran on %v, want %v", got, want)
	}
	finals := readTyped(t, out2, pipeline.FinalsName, func() *pb.FinalReply { return &pb.FinalReply{} })
	dead := readTyped(t, out2, pipeline.DeadLettersName, func() *pb.ActivationErrorRecord { return &pb.ActivationErrorRecord{} })
	if len(finals) != 4 || len(dead) != 0 {
		t.Fatalf("relaunch: %d finals and dead letters %v; want 4 and none", len(finals), dead)
	}
}

// The canary's flags are checked at launch.
func TestCanaryFlagsRefused(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(in, support.Envelopes, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, flags := range map[string][]string{
		"itself":        {"--canary_agent", support.Name, "--canary_percent", "10"},
		"unknown":       {"--canary_agent", "no-such-agent", "--canary_percent", "10"},
		"no percent":    {"--canary_agent", supportCandidate},
		"percent alone": {"--canary_percent", "10"},
		"over 100":      {"--canary_agent", supportCandidate, "--canary_percent", "100.5"},
		"not a number":  {"--canary_agent", supportCandidate, "--canary_percent", "half"},
		"negative":      {"--canary_agent", supportCandidate, "--canary_percent", "-1"},
	} {
		args := append([]string{"run", "--agent", support.Name, "--allow_unsigned_intents", "--input", in, "--output_dir", filepath.Join(t.TempDir(), "out")}, flags...)
		if code, _, stderr := execSelf(t, args...); code != 2 {
			t.Errorf("%s: exit %d, want 2\n%s", name, code, stderr)
		}
	}
}

// bashBlocks returns the bash blocks of the section of the markdown file at path that starts
// at heading, in order.
func bashBlocks(t *testing.T, path, heading string) []string {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no section %q", path, heading)
	}
	rest, _, _ = strings.Cut(rest, "\n## ")
	var blocks []string
	for {
		_, after, ok := strings.Cut(rest, "\n```bash\n")
		if !ok {
			return blocks
		}
		block, tail, ok := strings.Cut(after, "\n```")
		if !ok {
			t.Fatalf("%s: a bash block is not closed", path)
		}
		blocks, rest = append(blocks, block), tail
	}
}

// The canary section's commands, run verbatim in an empty folder with a beamagents that
// registers support-next (this test binary): at 50% customer-2 starts on support-next and the
// others on support; the rollback to 0% completes customer-2's activation on support-next.
func TestCanaryDoc(t *testing.T) {
	blocks := bashBlocks(t, filepath.Join("..", "docs", "changes.md"), "## Canary by key")
	if len(blocks) != 2 {
		t.Fatalf("the canary section has %d bash blocks, this test reads 2", len(blocks))
	}
	binDir, dir := t.TempDir(), t.TempDir()
	wrapper := "#!/bin/sh\n" + asCLI + "=1 exec '" + os.Args[0] + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(binDir, "beamagents"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, block := range blocks {
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", block)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("block %d: %v\n%s\n%s", i+1, err, block, out)
		}
	}
	for _, tc := range []struct {
		out  string
		want map[string]string
	}{
		{"canary-50", map[string]string{"customer-1/0": support.Name, "customer-2/0": supportCandidate, "customer-3/0": support.Name}},
		{"canary-0", map[string]string{"customer-2/0": supportCandidate}},
	} {
		got := ranOn(readTyped(t, filepath.Join(dir, tc.out), pipeline.TracesName, func() *pb.TraceEvent { return &pb.TraceEvent{} }))
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: activations ran on %v, want %v", tc.out, got, tc.want)
		}
	}
	finals := readTyped(t, filepath.Join(dir, "canary-0"), pipeline.FinalsName, func() *pb.FinalReply { return &pb.FinalReply{} })
	if len(finals) != 1 || string(finals[0].GetEntityKey()) != "customer-2" {
		t.Errorf("the rollback's finals: %v, want customer-2's reply", finals)
	}
}
