package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// ErrNotRedrivable: the dead letter carries no envelope (a timer's failure, a corrupt buffer,
// a refused restore, or a record that was never an envelope).
var ErrNotRedrivable = errors.New("the dead letter carries no envelope")

// RedriveEnvelope returns the envelope a dead letter carries: its envelope field, or a raw
// record that decodes as an actionable envelope (binary or protojson).
func RedriveEnvelope(d *pb.ActivationErrorRecord) (*pb.AgentEnvelope, error) {
	var raw []byte
	switch in := d.GetFailedInput().(type) {
	case *pb.ActivationErrorRecord_Envelope:
		raw = in.Envelope
	case *pb.ActivationErrorRecord_RawRecord:
		raw = in.RawRecord
	default:
		return nil, ErrNotRedrivable
	}
	env := &pb.AgentEnvelope{}
	if err := proto.Unmarshal(raw, env); err != nil || !actionable(env) {
		env.Reset()
		if err := protojson.Unmarshal(raw, env); err != nil || !actionable(env) {
			return nil, ErrNotRedrivable
		}
	}
	return env, nil
}

func actionable(env *pb.AgentEnvelope) bool { return records.CheckEnvelope(env) == nil }

// AppendEnvelope appends env as a JSON line (compact protojson) or a length-delimited
// deterministic binary record: the two envelope file formats a run reads.
func AppendEnvelope(out []byte, env *pb.AgentEnvelope, jsonl bool) ([]byte, error) {
	if !jsonl {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(env)
		if err != nil {
			return nil, err
		}
		return records.AppendFrame(out, b), nil
	}
	b, err := protojson.Marshal(env)
	if err != nil {
		return nil, err
	}
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil {
		return nil, err
	}
	return append(append(out, c.Bytes()...), '\n'), nil
}

// Redrive is where the console sends the envelopes of redriven dead letters: a new file in
// Dir (JSON Lines, for a later `beamagents run --input`), or Publish (the input topic).
type Redrive struct {
	Dir     string
	Publish func(ctx context.Context, envs []*pb.AgentEnvelope) error
}

func (r Redrive) enabled() bool { return r.Dir != "" || r.Publish != nil }

// send delivers envs and says where they went.
func (r Redrive) send(ctx context.Context, envs []*pb.AgentEnvelope, now time.Time) (string, error) {
	if r.Publish != nil {
		if err := r.Publish(ctx, envs); err != nil {
			return "", &Error{Code: CodeRedrive, Detail: "publishing", Err: err}
		}
		return "the input topic", nil
	}
	var out []byte
	for _, env := range envs {
		var err error
		if out, err = AppendEnvelope(out, env, true); err != nil {
			return "", &Error{Code: CodeRedrive, Detail: "encoding an envelope", Err: err}
		}
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return "", &Error{Code: CodeRedrive, Detail: "creating " + r.Dir, Err: err}
	}
	tmp, err := os.CreateTemp(r.Dir, ".redrive-*")
	if err != nil {
		return "", &Error{Code: CodeRedrive, Detail: "creating a file in " + r.Dir, Err: err}
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return "", &Error{Code: CodeRedrive, Detail: "writing " + tmp.Name(), Err: err}
	}
	if err := tmp.Close(); err != nil {
		return "", &Error{Code: CodeRedrive, Detail: "writing " + tmp.Name(), Err: err}
	}
	// A new name per redrive: a file a run may already have read is never rewritten.
	for i := 0; ; i++ {
		name := filepath.Join(r.Dir, fmt.Sprintf("redrive-%s-%d.jsonl", now.UTC().Format("20060102T150405.000Z"), i))
		if _, err := os.Lstat(name); err == nil {
			continue
		}
		if err := os.Link(tmp.Name(), name); err != nil {
			if os.IsExist(err) {
				continue
			}
			return "", &Error{Code: CodeRedrive, Detail: "naming the redrive file", Err: err}
		}
		return name, nil
	}
}

func protoUnmarshal(b []byte, m proto.Message) error { return proto.Unmarshal(b, m) }
