package cli_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/drive"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/records"
)

// readTyped reads NAME.binpb of dir, a typed record file, into messages of m's type.
func readTyped[M proto.Message](t *testing.T, dir, name string, newM func() M) []M {
	t.Helper()
	path := filepath.Join(dir, name+".binpb")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := records.Records(path, data, newM().ProtoReflect().Descriptor().FullName())
	if err != nil {
		t.Fatal(err)
	}
	var out []M
	for _, r := range recs {
		m := newM()
		if err := proto.Unmarshal(r, m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// shBlocks returns the fenced sh blocks of a markdown file, in order.
func shBlocks(t *testing.T, path string) []string {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	rest := string(doc)
	for {
		_, after, ok := strings.Cut(rest, "\n```sh\n")
		if !ok {
			return blocks
		}
		block, tail, ok := strings.Cut(after, "\n```")
		if !ok {
			t.Fatalf("%s: an sh block is not closed", path)
		}
		blocks, rest = append(blocks, block), tail
	}
}

// The human-in-the-loop page's commands, run verbatim in an empty folder with the built
// binary on the PATH: run 1 answers customer-1 and parks customer-2 and customer-3 (no
// escalation, no dead letter); the effector runs the lookup, approve decides the refund; run
// 2 --resume answers customer-2 and parks customer-3 on the released refund; the effector and
// run 3 --resume finish it. Across the runs each intent is emitted once, and no run writes a
// dead letter (no orphaned_result, no timeout). The page's backfill, 4 hours behind the
// clock, executes its lookup under --expiry emission:24h and resumes to its reply.
func TestHumanInTheLoopDoc(t *testing.T) {
	blocks := shBlocks(t, filepath.Join("..", "docs", "human-in-the-loop.md"))
	if len(blocks) != 7 {
		t.Fatalf("docs/human-in-the-loop.md has %d sh blocks, this test reads 7", len(blocks))
	}
	dir := t.TempDir()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.Join(blocks, "\n"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the page's commands: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "nobody can decide here") {
		t.Errorf("the first effector did not say why it exits 1:\n%s", stderr.String())
	}

	type run struct {
		finals, intents, parked int
		finalKey, intentKey     []string
	}
	seen := map[string]string{} // intent id -> the run that emitted it
	check := func(out string, want run) {
		t.Helper()
		at := filepath.Join(dir, out)
		finals := readTyped(t, at, pipeline.FinalsName, func() *pb.FinalReply { return &pb.FinalReply{} })
		intents := readTyped(t, at, pipeline.IntentsName, func() *pb.ToolIntent { return &pb.ToolIntent{} })
		snaps := readTyped(t, at, pipeline.SnapshotsName, func() *pb.StateSnapshot { return &pb.StateSnapshot{} })
		dead := readTyped(t, at, pipeline.DeadLettersName, func() *pb.ActivationErrorRecord { return &pb.ActivationErrorRecord{} })
		if len(dead) != 0 {
			t.Errorf("%s: dead letters %v", out, dead)
		}
		if len(finals) != want.finals || len(intents) != want.intents || len(snaps) != want.parked {
			t.Errorf("%s: %d finals, %d intents, %d snapshots; want %d, %d, %d", out, len(finals), len(intents), len(snaps), want.finals, want.intents, want.parked)
		}
		for i, f := range finals {
			if i < len(want.finalKey) && string(f.GetEntityKey()) != want.finalKey[i] {
				t.Errorf("%s: a final reply for %s, want %s", out, f.GetEntityKey(), want.finalKey[i])
			}
		}
		for i, ti := range intents {
			if ti.GetAttempt() != 0 {
				t.Errorf("%s: intent %s re-emitted (attempt %d)", out, ti.GetIntentId(), ti.GetAttempt())
			}
			if prev, dup := seen[ti.GetIntentId()]; dup {
				t.Errorf("%s: intent %s was already emitted by %s", out, ti.GetIntentId(), prev)
			}
			seen[ti.GetIntentId()] = out
			if i < len(want.intentKey) && string(ti.GetEntityKey()) != want.intentKey[i] {
				t.Errorf("%s: an intent for %s, want %s", out, ti.GetEntityKey(), want.intentKey[i])
			}
		}
		for _, s := range snaps {
			if s.GetRequestId() != drive.ParkedRequestID || s.GetContinuation() == nil {
				t.Errorf("%s: snapshot of %s is not a parked suspension: %v", out, s.GetEntityKey(), s)
			}
		}
	}
	check("out1", run{finals: 1, intents: 2, parked: 2, finalKey: []string{"customer-1"}})
	check("out2", run{finals: 1, intents: 1, parked: 1, finalKey: []string{"customer-2"}, intentKey: []string{"customer-3"}})
	check("out3", run{finals: 1, finalKey: []string{"customer-3"}})
	seen = map[string]string{} // the backfill's own loop
	check("old1", run{intents: 1, parked: 1, intentKey: []string{"customer-2"}})
	check("old2", run{finals: 1, finalKey: []string{"customer-2"}})

	// Every tool ran once, OK, and nothing expired.
	for _, eff := range []string{"eff1", "eff2", "oldeff"} {
		results := readTyped(t, filepath.Join(dir, eff), "results", func() *pb.AgentEnvelope { return &pb.AgentEnvelope{} })
		if len(results) != 1 || results[0].GetToolResult().GetStatus() != pb.ToolResult_OK {
			t.Errorf("%s: results %v", eff, results)
		}
	}
}
