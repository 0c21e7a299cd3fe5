package replay

import (
	"fmt"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/drive"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// ReadRecorded reads a recorded run's outputs from its output folder (raw records by kind)
// and its traces; a folder without output files gives none (nothing to compare with).
func ReadRecorded(dir string) (map[int64][][]byte, []*pb.TraceEvent, error) {
	rec := map[int64][][]byte{}
	for _, k := range records.Kinds() {
		file := filepath.Join(dir, k.Name+".binpb")
		data, err := records.ReadCapped(file, records.MaxFileBytes)
		if os.IsNotExist(err) {
			return nil, nil, nil
		}
		if err != nil {
			return nil, nil, err
		}
		if rec[k.Out], err = records.Records(file, data, k.Type); err != nil {
			return nil, nil, err
		}
	}
	var traces []*pb.TraceEvent
	for _, r := range rec[records.OutTrace] {
		t := &pb.TraceEvent{}
		if err := proto.Unmarshal(r, t); err != nil {
			return nil, nil, err
		}
		traces = append(traces, t)
	}
	return rec, traces, nil
}

// ReadInputs reads the envelope records of inputGlob and the snapshots of restoreGlob (none
// when empty), decodes them as the pipeline does, and groups them by key, restores first;
// the records that do not decode are dead letters, as the pipeline's.
func ReadInputs(inputGlob, restoreGlob string) ([]Input, [][]byte, error) {
	var inputs []Input
	index := map[string]int{}
	add := func(key, v []byte) {
		i, ok := index[string(key)]
		if !ok {
			i = len(inputs)
			index[string(key)] = i
			inputs = append(inputs, Input{Entity: key})
		}
		inputs[i].Values = append(inputs[i].Values, v)
	}
	var dead [][]byte
	if restoreGlob != "" {
		files, err := records.Glob(restoreGlob)
		if err != nil {
			return nil, nil, fmt.Errorf("--restore: %v", err)
		}
		for _, f := range files {
			recs, err := records.ReadFile(f, snapshotType)
			if err != nil {
				return nil, nil, err
			}
			for _, r := range recs {
				snap, err := drive.DecodeSnapshot(records.FormatOf(f), r)
				if err != nil {
					dead = append(dead, drive.Marshal(drive.DeadLetter(snap.GetEntityKey(), 0, records.ReasonRestoreRefused, err, r)))
					continue
				}
				add(snap.GetEntityKey(), drive.RestoreValue(snap))
			}
		}
	}
	files, err := records.Glob(inputGlob)
	if err != nil {
		return nil, nil, fmt.Errorf("--input: %v", err)
	}
	for _, f := range files {
		recs, err := records.ReadFile(f, envelopeType)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range recs {
			env, canon, err := drive.DecodeEnvelope(records.FormatOf(f), r)
			if err != nil {
				dead = append(dead, drive.Marshal(drive.DeadLetter(env.GetEntityKey(), env.GetEventTimeMs(), records.ReasonEnvelopeInvalid, err, r)))
				continue
			}
			add(env.GetEntityKey(), canon)
		}
	}
	return inputs, dead, nil
}

var (
	envelopeType = (&pb.AgentEnvelope{}).ProtoReflect().Descriptor().FullName()
	snapshotType = (&pb.StateSnapshot{}).ProtoReflect().Descriptor().FullName()
)
