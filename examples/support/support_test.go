package support_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/negotiate"
)

// Every recorded answer is admitted by the agent's proposal schema.
func TestModelScriptIsAdmitted(t *testing.T) {
	s, err := support.Schema()
	if err != nil {
		t.Fatal(err)
	}
	adm, err := negotiate.NewAdmitter(s, negotiate.Agreement{Protocol: negotiate.TransformAll})
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(support.ModelScript))
	n := 0
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var r struct{ Response json.RawMessage }
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		if _, err := adm.Admit(r.Response); err != nil {
			t.Errorf("answer %s is refused: %v", r.Response, err)
		}
		n++
	}
	if n != 8 {
		t.Fatalf("%d answers", n)
	}
	if _, err := agent.Build(support.Name, nil); err != nil {
		t.Fatal(err)
	}
}

// The demo envelopes reference the intents the agent will emit, by their deterministic ids;
// all but the deliberately broken line decode.
func TestEnvelopesReferenceDeterministicIntentIDs(t *testing.T) {
	lines := bytes.Split(bytes.TrimSpace(support.Envelopes), []byte("\n"))
	broken := 0
	for _, l := range lines {
		env := &pb.AgentEnvelope{}
		if protojson.Unmarshal(l, env) != nil {
			broken++
			continue
		}
		id := env.GetToolResult().GetIntentId() + env.GetApproval().GetIntentId()
		if id == "" {
			continue
		}
		found := false
		for step := uint32(0); step < 3; step++ {
			found = found || id == intent.ID(env.GetEntityKey(), 0, step)
		}
		if !found {
			t.Errorf("envelope for %s names intent %s, which no step of activation 0 emits", env.GetEntityKey(), id)
		}
	}
	if broken != 1 {
		t.Fatalf("%d broken lines, want exactly 1", broken)
	}
}
