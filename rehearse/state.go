package rehearse

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/statecodec"
)

// CheckState decodes and migrates snap's cells as candidate a would read them (its memory and
// cache limits, its state schema), and restores it into an empty key: a restore never
// migrates (blobs go in verbatim), so a state the candidate cannot read would otherwise
// surface only in the middle of its traffic. Errors are ErrState.
func CheckState(ctx context.Context, a *agent.Agent, snap *pb.StateSnapshot) error {
	fail := func(what string, err error) error {
		return &Error{Code: CodeState, Detail: fmt.Sprintf("key %q: %s", snap.GetEntityKey(), what), Err: err}
	}
	lim := a.Limits()
	cells := []struct {
		name   string
		m      proto.Message
		decode func([]byte) error
	}{
		{"memory", snap.GetMemory(), func(b []byte) error { _, err := statecodec.DecodeMemory(b, lim.Memory); return err }},
		{"replay cache", snap.GetLlmCache(), func(b []byte) error { _, err := statecodec.DecodeCache(b, lim.Cache); return err }},
		{"continuation", snap.GetContinuation(), func(b []byte) error {
			_, err := statecodec.ContinuationOptions{Schema: lim.Memory.Schema}.Decode(b)
			return err
		}},
	}
	for _, c := range cells {
		if !c.m.ProtoReflect().IsValid() {
			continue
		}
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(c.m)
		if err == nil {
			err = c.decode(b)
		}
		if err != nil {
			return fail(c.name, err)
		}
	}
	if _, err := host.Restore(ctx, a, host.MapStore{}, snap); err != nil {
		return fail("restore", err)
	}
	return nil
}
