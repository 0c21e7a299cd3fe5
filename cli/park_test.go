package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
)

// waitingTickets are customer-2's order question (a TOOL intent) and customer-3's refund
// request (an APPROVAL intent), which nothing answers: both keys wait at the end of the input.
const waitingTickets = `{"entityKey":"Y3VzdG9tZXItMg==","eventTimeMs":"1767225601000","externalEvent":"V2hlcmUgaXMgbXkgb3JkZXIgQS0xMDAxPw=="}
{"entityKey":"Y3VzdG9tZXItMw==","eventTimeMs":"1767225602000","externalEvent":"T3JkZXIgQS0yMDAyIGFycml2ZWQgYnJva2VuLCBwbGVhc2UgcmVmdW5kIGl0Lg=="}
`

// The end of a bounded input, by the real binary: by default (and with --at_end park, on the
// fast path --mode batch and in arrival order) each waiting key is parked, one snapshot with
// the parked request id, its one intent emitted once, no dead letter; with --at_end fail the
// final watermark escalates each intent twice and fails the keys closed, as before. A parked
// run replayed with --at_end park reproduces itself (with fail it diverges), and resumed with
// an input holding no envelope parks the same keys again, its snapshots file the same bytes.
func TestParkAtEndOrFail(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "tickets.jsonl")
	if err := os.WriteFile(in, []byte(waitingTickets), 0o644); err != nil {
		t.Fatal(err)
	}
	ring := []string{`PARK_RING={"active":"p","keys":[{"id":"p","secret":"cGFya2VkLWtleXMtc2lnbi13aXRoLXRoaXMtc2VjcmV0IQ=="}]}`}
	for _, tc := range []struct {
		name              string
		flags             []string
		intents, escalate int
		parked            int
		dead              []string // sorted reasons
	}{
		{name: "default", intents: 2, parked: 2},
		{name: "park", flags: []string{"--at_end", "park"}, intents: 2, parked: 2},
		{name: "park batch", flags: []string{"--at_end", "park", "--mode", "batch"}, intents: 2, parked: 2},
		{name: "park arrival", flags: []string{"--at_end", "park", "--ordering", "arrival"}, intents: 2, parked: 2},
		{name: "fail", flags: []string{"--at_end", "fail"}, intents: 6, escalate: 4, dead: []string{"activation_timeout", "approval_timeout"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			args := append([]string{"run", "--agent", support.Name, "--keyring", "env:PARK_RING", "--input", in, "--output_dir", out}, tc.flags...)
			code, stdout, stderr := execCLI(t, ring, args...)
			if code != 0 {
				t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
			}
			if tc.parked > 0 && !regexp.MustCompile(fmt.Sprintf(`(?m)^\s+snapshots\.parked\s+%d$`, tc.parked)).MatchString(stdout) {
				t.Errorf("the run did not print snapshots.parked %d:\n%s", tc.parked, stdout)
			}
			intents := readTyped(t, out, pipeline.IntentsName, func() *pb.ToolIntent { return &pb.ToolIntent{} })
			snaps := readTyped(t, out, pipeline.SnapshotsName, func() *pb.StateSnapshot { return &pb.StateSnapshot{} })
			var reasons []string
			for _, d := range readTyped(t, out, pipeline.DeadLettersName, func() *pb.ActivationErrorRecord { return &pb.ActivationErrorRecord{} }) {
				reasons = append(reasons, d.GetReason())
			}
			escalated := 0
			for _, ti := range intents {
				if ti.GetAttempt() > 0 {
					escalated++
				}
			}
			if len(intents) != tc.intents || escalated != tc.escalate || len(snaps) != tc.parked || strings.Join(reasons, ",") != strings.Join(tc.dead, ",") {
				t.Fatalf("%d intents (%d escalations), %d snapshots, dead letters %v; want %d (%d), %d, %v",
					len(intents), escalated, len(snaps), reasons, tc.intents, tc.escalate, tc.parked, tc.dead)
			}
			for _, s := range snaps {
				if s.GetRequestId() != drive.ParkedRequestID || s.GetSnapshotAtMs() != 1767225602000 || s.GetContinuation() == nil || len(s.GetPending()) != 1 {
					t.Fatalf("snapshot %v", s)
				}
			}
		})
	}

	// Replayed from the parked snapshots' replay caches, the parked run reproduces itself as
	// it ended (replay --at_end park, the default); replayed as if it had failed closed, it
	// diverges.
	for _, tc := range []struct {
		atEnd string
		code  int
	}{{"park", 0}, {"fail", 3}} {
		code, stdout, stderr := execCLI(t, ring, "replay", "--agent", support.Name, "--keyring", "env:PARK_RING", "--at_end", tc.atEnd, "--input", in,
			"--cache_from", filepath.Join(dir, "default", pipeline.SnapshotsName+".binpb"), "--output_dir", filepath.Join(dir, "replay-"+tc.atEnd))
		if code != tc.code {
			t.Fatalf("replay --at_end %s: exit %d, want %d\n%s\n%s", tc.atEnd, code, tc.code, stdout, stderr)
		}
	}

	// Resumed with no envelope, the parked keys park again, byte for byte.
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(dir, "again")
	if code, stdout, stderr := execCLI(t, ring, "run", "--agent", support.Name, "--keyring", "env:PARK_RING", "--input", empty,
		"--resume", filepath.Join(dir, "default"), "--output_dir", again); code != 0 {
		t.Fatalf("run --resume: exit %d\n%s\n%s", code, stdout, stderr)
	}
	first, _ := os.ReadFile(filepath.Join(dir, "default", pipeline.SnapshotsName+".binpb"))
	second, _ := os.ReadFile(filepath.Join(again, pipeline.SnapshotsName+".binpb"))
	if len(first) == 0 || !bytes.Equal(first, second) {
		t.Fatalf("the parked snapshots did not round-trip: %d bytes, then %d", len(first), len(second))
	}
	if n := len(readTyped(t, again, pipeline.IntentsName, func() *pb.ToolIntent { return &pb.ToolIntent{} })); n != 0 {
		t.Fatalf("the resumed run re-emitted %d intents", n)
	}
}
