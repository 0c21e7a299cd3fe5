package conformance

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// outputs are one run's output files, decoded.
type outputs struct {
	intents []*pb.ToolIntent
	traces  []*pb.TraceEvent
	finals  []*pb.FinalReply
	snaps   []*pb.StateSnapshot
	dead    []*pb.ActivationErrorRecord
	// raw holds each output's records by kind, as replay.Run compares them; files every
	// output file's bytes by name.
	raw   map[int64][][]byte
	files map[string][]byte
}

// readOutputs reads the outputs a pipeline wrote into dir.
func readOutputs(dir string) (*outputs, error) {
	o := &outputs{raw: map[int64][][]byte{}, files: map[string][]byte{}}
	for _, k := range records.Kinds() {
		for _, ext := range []string{".binpb", ".jsonl"} {
			b, err := os.ReadFile(filepath.Join(dir, k.Name+ext))
			if err != nil {
				return nil, err
			}
			o.files[k.Name+ext] = b
		}
		file := filepath.Join(dir, k.Name+".binpb")
		recs, err := records.Records(file, o.files[k.Name+".binpb"], k.Type)
		if err != nil {
			return nil, err
		}
		o.raw[k.Out] = recs
		for _, r := range recs {
			m := k.New()
			if err := proto.Unmarshal(r, m); err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			switch m := m.(type) {
			case *pb.ToolIntent:
				o.intents = append(o.intents, m)
			case *pb.TraceEvent:
				o.traces = append(o.traces, m)
			case *pb.FinalReply:
				o.finals = append(o.finals, m)
			case *pb.StateSnapshot:
				o.snaps = append(o.snaps, m)
			case *pb.ActivationErrorRecord:
				o.dead = append(o.dead, m)
			}
		}
	}
	return o, nil
}

// of filters a key's records.
func of[M interface{ GetEntityKey() []byte }](all []M, key []byte) []M {
	var out []M
	for _, m := range all {
		if bytes.Equal(m.GetEntityKey(), key) {
			out = append(out, m)
		}
	}
	return out
}

// writeJSONLines writes messages as JSON Lines of protojson, the input format of the
// pipeline's envelopes and restores.
func writeJSONLines[M proto.Message](path string, msgs []M) error {
	var b bytes.Buffer
	for _, m := range msgs {
		line, err := protojson.MarshalOptions{}.Marshal(m)
		if err != nil {
			return err
		}
		// protojson may put spaces between members; a line is a line either way.
		b.Write(bytes.ReplaceAll(line, []byte("\n"), nil))
		b.WriteByte('\n')
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
