package bindings

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
)

// frozenResumes are the AgentResume snapshots of the frozen bindings suspensions in
// agent/testdata/suspended.
func frozenResumes(tb testing.TB) [][]byte {
	tb.Helper()
	paths, _ := filepath.Glob(filepath.Join("..", "testdata", "suspended", "*.json"))
	var out [][]byte
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		var list []struct {
			Cells map[string][]byte `json:"cells"`
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			tb.Fatal(err)
		}
		for _, s := range list {
			cont := &pb.Continuation{}
			if err := proto.Unmarshal(s.Cells[string(statecodec.CellContinuation)], cont); err != nil {
				tb.Fatal(err)
			}
			out = append(out, cont.GetSnapshot())
		}
	}
	if len(out) == 0 {
		tb.Fatal("no frozen suspensions")
	}
	return out
}

// TestBindingsJournalKeepsTheResumeForm: every AgentResume the step loop wrote reads as a
// journal that encodes back to the same bytes.
func TestBindingsJournalKeepsTheResumeForm(t *testing.T) {
	for i, snap := range frozenResumes(t) {
		j, err := journalOfResume(snap)
		if err != nil {
			t.Fatalf("snapshot %d: %v", i, err)
		}
		back, err := resumeOfJournal(j)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back, snap) {
			t.Errorf("snapshot %d changed:\n got %x\nwant %x", i, back, snap)
		}
	}
	cases := map[string]*pb.AgentResume{
		"step index not its position": {Steps: []*pb.StepRecord{{StepIndex: 1, Proposal: "p"}}},
	}
	for name, r := range cases {
		b, _ := proto.Marshal(r)
		if _, err := journalOfResume(b); !isReason(err, records.ReasonStateCorrupt) {
			t.Errorf("%s: %v, want state_corrupt", name, err)
		}
	}
	if _, err := journalOfResume([]byte{0xff}); !isReason(err, records.ReasonStateCorrupt) {
		t.Errorf("undecodable: %v, want state_corrupt", err)
	}
}

func isReason(err error, r records.Reason) bool {
	e, ok := err.(*agent.Error)
	return ok && e.Reason == r
}

// FuzzBindingsJournal: any bytes either fail as state_corrupt or read as a journal whose
// AgentResume form is a fixed point (it reads back to a journal that encodes the same).
func FuzzBindingsJournal(f *testing.F) {
	for _, s := range frozenResumes(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		j, err := journalOfResume(b)
		if err != nil {
			if !isReason(err, records.ReasonStateCorrupt) {
				t.Fatalf("untyped failure %v", err)
			}
			return
		}
		once, err := resumeOfJournal(j)
		if err != nil {
			t.Fatal(err)
		}
		j2, err := journalOfResume(once)
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		twice, err := resumeOfJournal(j2)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("not a fixed point: %v\n%x\n%x", err, once, twice)
		}
	})
}
