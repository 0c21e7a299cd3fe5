package drive

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// RestoreMark starts an input value that is a state restore (a binary StateSnapshot) rather
// than an envelope. A serialized AgentEnvelope never starts with a zero byte (no protobuf
// field has number 0), so the two cannot be confused.
const RestoreMark = 0x00

// RestoreValue is the input value that restores snap.
func RestoreValue(snap *pb.StateSnapshot) []byte {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(snap)
	return append([]byte{RestoreMark}, b...)
}

// Input is one input value of a key, decoded: exactly one field is set.
type Input struct {
	Env      *pb.AgentEnvelope
	Snapshot *pb.StateSnapshot
	// Dead is the dead letter of a value that does not decode.
	Dead *pb.ActivationErrorRecord
}

// DecodeInput decodes one input value of key: a restore, or a binary envelope.
func DecodeInput(key, value []byte) Input {
	if len(value) > 0 && value[0] == RestoreMark {
		snap := &pb.StateSnapshot{}
		if err := proto.Unmarshal(value[1:], snap); err != nil {
			return Input{Dead: DeadLetter(key, 0, records.ReasonRestoreRefused, err, value[1:])}
		}
		return Input{Snapshot: snap}
	}
	env := &pb.AgentEnvelope{}
	if err := proto.Unmarshal(value, env); err != nil {
		return Input{Dead: DeadLetter(key, 0, records.ReasonEnvelopeInvalid,
			&agent.Error{Reason: records.ReasonEnvelopeInvalid, Detail: "keyed envelope", Err: err}, value)}
	}
	return Input{Env: env}
}

// DecodeEnvelope decodes one envelope record of format and checks that the envelope is
// actionable (records.DecodeEnvelope). It returns the envelope (possibly partial, for the dead
// letter's entity key and event time) and its deterministic binary serialization. Errors are
// *agent.Error with reason envelope_invalid.
func DecodeEnvelope(format records.Format, rec []byte) (*pb.AgentEnvelope, []byte, error) {
	env, canon, err := records.DecodeEnvelope(format, rec)
	return env, canon, invalid(err)
}

// invalid is the activation error of records' envelope error err (records.CodeEnvelope):
// reason envelope_invalid, with err's detail and cause, so that the dead letter reads as
// host.Activate's refusal of the same envelope. Any other error, nil included, is returned
// as it is.
func invalid(err error) error {
	var e *records.Error
	if !errors.As(err, &e) || e.Code != records.CodeEnvelope {
		return err
	}
	return &agent.Error{Reason: records.ReasonEnvelopeInvalid, Detail: e.Detail, Err: e.Err}
}

// DecodeSnapshot decodes one StateSnapshot record of format (a restore) and checks it names a
// key. It returns the snapshot (possibly partial, for the dead letter's entity key) and an
// *agent.Error.
func DecodeSnapshot(format records.Format, rec []byte) (*pb.StateSnapshot, error) {
	snap := &pb.StateSnapshot{}
	var err error
	if format == records.JSON {
		err = protojson.Unmarshal(rec, snap)
	} else {
		err = proto.Unmarshal(rec, snap)
	}
	if err == nil && len(snap.GetEntityKey()) == 0 {
		err = &agent.Error{Reason: records.ReasonEnvelopeInvalid, Detail: "snapshot has no entity key"}
	}
	return snap, err
}

// DeadLetter is the dead letter of an input that failed before reaching the core: err
// (wrapped in an *agent.Error of reason unless it already is one) and the raw record.
func DeadLetter(entity []byte, atMs int64, reason records.Reason, err error, raw []byte) *pb.ActivationErrorRecord {
	if !errors.Is(err, &agent.Error{Reason: reason}) {
		err = &agent.Error{Reason: reason, Err: err}
	}
	return records.WithRawRecord(host.DeadLetter(entity, atMs, err), raw)
}

// corruptBuffer is the dead letter of n ordering-buffer entries that do not decode.
func corruptBuffer(key []byte, n int) *pb.ActivationErrorRecord {
	return host.DeadLetter(key, 0, &agent.Error{Reason: records.ReasonStateCorrupt,
		Detail: fmt.Sprintf("%d ordering-buffer entries do not decode", n)})
}

// Emit serializes a result's outputs deterministically, in a fixed order: intents, traces,
// finals, snapshots, dead letters.
func Emit(res *host.Result, emit func(kind int64, b []byte)) {
	for _, m := range res.Intents {
		emit(records.OutIntent, Marshal(m))
	}
	for _, m := range res.Traces {
		emit(records.OutTrace, Marshal(m))
	}
	for _, m := range res.Finals {
		emit(records.OutFinal, Marshal(m))
	}
	for _, m := range res.Snapshots {
		emit(records.OutSnapshot, Marshal(m))
	}
	for _, m := range res.DeadLetters {
		emit(records.OutDeadLetter, Marshal(m))
	}
}
