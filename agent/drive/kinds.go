package drive

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// Output kinds: how one stream of (kind, bytes) pairs carries every output.
const (
	OutIntent int64 = iota + 1
	OutTrace
	OutFinal
	OutSnapshot
	OutDeadLetter
)

// Output names: the stems of an output's files (NAME.binpb, NAME.jsonl). The topic flags of
// run are --intents_topic, --traces_topic, --finals_topic and --snapshots_topic, and
// --errors_topic for dead letters (it also takes the input messages that were refused).
const (
	IntentsName     = "intents"
	TracesName      = "traces"
	FinalsName      = "finals"
	SnapshotsName   = "snapshots"
	DeadLettersName = "dead_letters"
)

// Kind is one of a step's five outputs.
type Kind struct {
	Out  int64                 // its tag on the step's one output stream (OutIntent …)
	Name string                // its name (IntentsName …)
	Noun string                // one record, in messages: "intent", "dead letter"
	Type protoreflect.FullName // its records' message type
	zero proto.Message
}

// New returns an empty record of k's type.
func (k Kind) New() proto.Message { return k.zero.ProtoReflect().New().Interface() }

// kinds is the one table of the outputs, in their fixed order (the order of Emit and of
// every file, topic and Beam output listing them).
var kinds = []Kind{
	kind(OutIntent, IntentsName, "intent", &pb.ToolIntent{}),
	kind(OutTrace, TracesName, "trace", &pb.TraceEvent{}),
	kind(OutFinal, FinalsName, "final reply", &pb.FinalReply{}),
	kind(OutSnapshot, SnapshotsName, "snapshot", &pb.StateSnapshot{}),
	kind(OutDeadLetter, DeadLettersName, "dead letter", &pb.ActivationErrorRecord{}),
}

func kind(out int64, name, noun string, zero proto.Message) Kind {
	return Kind{Out: out, Name: name, Noun: noun, Type: zero.ProtoReflect().Descriptor().FullName(), zero: zero}
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
