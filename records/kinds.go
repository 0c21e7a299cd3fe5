package records

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// Output tags: how one stream of (tag, bytes) pairs carries every output.
const (
	OutIntent int64 = iota + 1
	OutTrace
	OutFinal
	OutSnapshot
	OutDeadLetter
)

// Output names: the stems of an output's files (NAME.binpb, NAME.jsonl, NAME-….binpb).
const (
	IntentsName     = "intents"
	TracesName      = "traces"
	FinalsName      = "finals"
	SnapshotsName   = "snapshots"
	DeadLettersName = "dead_letters"
)

// ResultsName is the stem of the effector's output files (results.binpb, results.jsonl): the
// result and approval envelopes it writes back.
const ResultsName = "results"

// Kind is one of a step's five outputs.
type Kind struct {
	Out  int64                 // its tag on the step's one output stream (OutIntent …)
	Name string                // its name, the stem of its files (IntentsName …)
	Noun string                // one record, in messages: "intent", "dead letter"
	Type protoreflect.FullName // its records' message type
	// Topic is the flag of `run` naming its Pub/Sub topic: NAME_topic, except errors_topic for
	// dead letters (that topic also takes the input messages that were refused).
	Topic string
	// Code is the one byte naming the kind in the console's store keys ('i', 't', 'f', 's',
	// 'd'); it is part of the store's layout and never changes.
	Code byte
	zero proto.Message
}

// New returns an empty record of k's type.
func (k Kind) New() proto.Message { return k.zero.ProtoReflect().New().Interface() }

// kinds is the one table of the outputs, in their fixed order (the order of drive.Emit and of
// every file, topic and Beam output listing them).
var kinds = []Kind{
	kind(OutIntent, IntentsName, "intent", "intents_topic", 'i', &pb.ToolIntent{}),
	kind(OutTrace, TracesName, "trace", "traces_topic", 't', &pb.TraceEvent{}),
	kind(OutFinal, FinalsName, "final reply", "finals_topic", 'f', &pb.FinalReply{}),
	kind(OutSnapshot, SnapshotsName, "snapshot", "snapshots_topic", 's', &pb.StateSnapshot{}),
	kind(OutDeadLetter, DeadLettersName, "dead letter", "errors_topic", 'd', &pb.ActivationErrorRecord{}),
}

func kind(out int64, name, noun, topic string, code byte, zero proto.Message) Kind {
	return Kind{Out: out, Name: name, Noun: noun, Type: zero.ProtoReflect().Descriptor().FullName(),
		Topic: topic, Code: code, zero: zero}
}

// Kinds lists the outputs in their fixed order.
func Kinds() []Kind { return append([]Kind(nil), kinds...) }

// KindOf returns the kind tagged out.
func KindOf(out int64) (Kind, bool) {
	if out < OutIntent || out > OutDeadLetter {
		return Kind{}, false
	}
	return kinds[out-OutIntent], true
}

// KindOfType returns the kind whose records are of the message type t.
func KindOfType(t protoreflect.FullName) (Kind, bool) {
	for _, k := range kinds {
		if k.Type == t {
			return k, true
		}
	}
	return Kind{}, false
}

// KindOfCode returns the kind named by the store code c.
func KindOfCode(c byte) (Kind, bool) {
	for _, k := range kinds {
		if k.Code == c {
			return k, true
		}
	}
	return Kind{}, false
}

// envelopeType is the type of the records of input files, results and redriven envelopes.
var envelopeType = (&pb.AgentEnvelope{}).ProtoReflect().Descriptor().FullName()

// Set is a typed set of outputs: one T per kind, in the order of Kinds (a step's output
// collections, the topics they go to).
type Set[T any] [OutDeadLetter]T

// Of returns the element of the output tagged out; any other tag is the dead letters'.
func (s Set[T]) Of(out int64) T {
	if out < OutIntent || out > OutDeadLetter {
		out = OutDeadLetter
	}
	return s[out-OutIntent]
}
