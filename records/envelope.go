package records

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/jsontext"
)

// Format names how envelope records are encoded.
type Format string

// Record formats.
const (
	// Binary: each record is one binary-serialized AgentEnvelope.
	Binary Format = "binary"
	// JSON: each record is one AgentEnvelope in protojson (one line of a JSON Lines file).
	JSON Format = "json"
)

// MaxApprovalNoteBytes bounds the note of an approval decision.
const MaxApprovalNoteBytes = 4096

// MaxApprovalArgsBytes bounds the edited arguments of an approval decision.
const MaxApprovalArgsBytes = 64 << 10

// CheckApprovalArgs refuses edited arguments of an approval that are over
// MaxApprovalArgsBytes or not one JSON object (their form is a ToolIntent's args_json; the
// tool's schema admits them when the gated call runs). Its errors are *Error values of
// CodeEnvelope.
func CheckApprovalArgs(args string) error {
	if len(args) > MaxApprovalArgsBytes {
		return invalid(nil, fmt.Sprintf("the approval's edited arguments are %d bytes; at most %d", len(args), MaxApprovalArgsBytes))
	}
	if n, _, err := jsontext.Parse(args, jsontext.Options{}); err != nil || n.Kind != jsontext.Object {
		return invalid(err, "the approval's edited arguments are not one JSON object")
	}
	return nil
}

// Bounds of a signal (CheckSignal).
const (
	MaxSignalNameBytes    = 256
	MaxSignalIDBytes      = 256
	MaxSignalPayloadBytes = 64 << 10
)

// CheckEnvelope refuses an envelope that is not actionable: one without an entity key or a
// payload, a decision whose note is over MaxApprovalNoteBytes or whose edited arguments are a
// rejection's or refused by CheckApprovalArgs, or a signal CheckSignal refuses. Its errors are
// *Error values of CodeEnvelope.
func CheckEnvelope(env *pb.AgentEnvelope) error {
	switch {
	case env == nil:
		return invalid(nil, "no envelope")
	case len(env.GetEntityKey()) == 0:
		return invalid(nil, "entity_key is empty")
	case env.GetPayload() == nil:
		return invalid(nil, "no payload")
	case len(env.GetApproval().GetNote()) > MaxApprovalNoteBytes:
		return invalid(nil, fmt.Sprintf("the approval's note is %d bytes; at most %d", len(env.GetApproval().GetNote()), MaxApprovalNoteBytes))
	case env.GetApproval().GetArgsJson() != "":
		if !env.GetApproval().GetApproved() {
			return invalid(nil, "a rejection carries edited arguments")
		}
		return CheckApprovalArgs(env.GetApproval().GetArgsJson())
	}
	if sig := env.GetSignal(); sig != nil {
		return CheckSignal(sig, env.GetEntityKey())
	}
	return nil
}

// CheckSignal refuses a signal that is not actionable for the key entity: a name that is not
// 1-MaxSignalNameBytes bytes of UTF-8, an id that is not 1-MaxSignalIDBytes bytes, a payload
// over MaxSignalPayloadBytes, or an entity_key other than entity (the signature covers the
// signal's own key, so it must be the envelope's). Its errors are *Error values of
// CodeEnvelope.
func CheckSignal(sig *pb.AgentEnvelope_Signal, entity []byte) error {
	name, id := sig.GetName(), sig.GetSignalId()
	switch {
	case len(name) == 0 || len(name) > MaxSignalNameBytes || !utf8.ValidString(name):
		return invalid(nil, fmt.Sprintf("the signal's name must be 1-%d bytes of UTF-8", MaxSignalNameBytes))
	case len(id) == 0 || len(id) > MaxSignalIDBytes:
		return invalid(nil, fmt.Sprintf("the signal's id must be 1-%d bytes", MaxSignalIDBytes))
	case len(sig.GetPayload()) > MaxSignalPayloadBytes:
		return invalid(nil, fmt.Sprintf("the signal's payload is %d bytes; at most %d", len(sig.GetPayload()), MaxSignalPayloadBytes))
	case !bytes.Equal(sig.GetEntityKey(), entity):
		return invalid(nil, "the signal's entity_key is not the envelope's")
	}
	return nil
}

// DecodeEnvelope decodes one envelope record of format and checks that the envelope is
// actionable (CheckEnvelope) and carries no budget_grant (only the runtime's tenant budget
// admission sets one, docs/budgets.md). It returns the envelope (possibly partial, for the dead
// letter's entity key and event time; nil when the record does not decode) and its
// deterministic binary serialization. Its errors are *Error values of CodeEnvelope.
func DecodeEnvelope(format Format, rec []byte) (*pb.AgentEnvelope, []byte, error) {
	env := &pb.AgentEnvelope{}
	var err error
	switch format {
	case JSON:
		err = protojson.Unmarshal(rec, env)
	case Binary:
		err = proto.Unmarshal(rec, env)
	default:
		return nil, nil, invalid(nil, fmt.Sprintf("unknown record format %q", format))
	}
	if err != nil {
		return nil, nil, invalid(err, fmt.Sprintf("not a %s AgentEnvelope", format))
	}
	if err := CheckEnvelope(env); err != nil {
		return env, nil, err
	}
	if env.GetBudgetGrant() != nil {
		return env, nil, invalid(nil, "budget_grant is set by the runtime's tenant budget admission, never on input")
	}
	canon, err := proto.MarshalOptions{Deterministic: true}.Marshal(env)
	if err != nil {
		return env, nil, invalid(err, "re-encoding")
	}
	return env, canon, nil
}

func invalid(err error, detail string) error {
	return &Error{Code: CodeEnvelope, Detail: detail, Err: err}
}

// FormatOf is the format of the records of a file (or a glob of files) by its name: JSON for
// *.jsonl and *.json (IsJSONL), Binary otherwise.
func FormatOf(name string) Format {
	if IsJSONL(name) {
		return JSON
	}
	return Binary
}
