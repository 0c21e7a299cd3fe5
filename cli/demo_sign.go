package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/records"
)

// signDemoAnswers signs the tool results and approvals of the demo's envelopes (JSON Lines)
// with kr, as the effector and its approval console sign theirs, each bound to the intent it
// answers. That intent is found by running the demo agent's core in memory (package drive,
// exactly as the pipeline runs it) over the key's earlier envelopes, so the demo runs with
// --verify_results require. Other lines, undecodable ones included, are kept as they are.
func signDemoAnswers(ctx context.Context, name string, envelopes []byte, kr *intent.Keyring) ([]byte, error) {
	a, err := agent.Build(name, nil)
	if err != nil {
		return nil, err
	}
	require := intent.ModeRequire
	d := &drive.Driver{Core: drive.Core{Agent: a, Deps: host.Deps{Keyring: kr, VerifyResults: &require}}, OutputsOnly: true}
	lines := bytes.Split(envelopes, []byte("\n"))
	envs := make([]*pb.AgentEnvelope, len(lines))
	for i, line := range lines {
		env := &pb.AgentEnvelope{}
		if protojson.Unmarshal(line, env) == nil {
			envs[i] = env
		}
	}
	for i, env := range envs {
		id := env.GetToolResult().GetIntentId() + env.GetApproval().GetIntentId()
		if id == "" {
			continue
		}
		ti, err := answered(ctx, d, envs, env, id)
		if err != nil {
			return nil, fmt.Errorf("demo envelope %d: %w", i+1, err)
		}
		if r := env.GetToolResult(); r != nil {
			err = intent.SignResult(r, ti, kr)
		} else {
			err = intent.SignApproval(env.GetApproval(), ti, kr)
		}
		if err != nil {
			return nil, err
		}
		b, err := protojson.Marshal(env)
		if err != nil {
			return nil, err
		}
		var line bytes.Buffer
		if err := json.Compact(&line, b); err != nil { // protojson varies its spacing on purpose
			return nil, err
		}
		lines[i] = line.Bytes()
	}
	return bytes.Join(lines, []byte("\n")), nil
}

// answered runs the key of env over its envelopes before env and returns the intent id it
// emitted.
func answered(ctx context.Context, d *drive.Driver, envs []*pb.AgentEnvelope, env *pb.AgentEnvelope, id string) (*pb.ToolIntent, error) {
	var values [][]byte
	for _, e := range envs {
		if e != nil && bytes.Equal(e.GetEntityKey(), env.GetEntityKey()) && e.GetEventTimeMs() < env.GetEventTimeMs() {
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(e)
			if err != nil {
				return nil, err
			}
			values = append(values, b)
		}
	}
	var found *pb.ToolIntent
	d.Run(ctx, env.GetEntityKey(), values, func(kind int64, b []byte) {
		ti := &pb.ToolIntent{}
		if kind == records.OutIntent && proto.Unmarshal(b, ti) == nil && ti.GetIntentId() == id && found == nil {
			found = ti
		}
	})
	if found == nil {
		return nil, fmt.Errorf("no earlier envelope of key %q makes the agent emit intent %s", env.GetEntityKey(), id)
	}
	return found, nil
}
