package rehearse

import (
	"fmt"
	"maps"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/replay"
	"github.com/beamagents/beamagents/tracing"
)

// recording is the baseline's output records as a rehearsal reads them, each snapshot decoded
// once, and of the traces only the model calls and tool calls: traces are most of a run's
// records and the costliest to decode (their attribute maps), and a rehearsal compares none.
type recording struct {
	model  *replay.Model                 // answers from the snapshots' caches, usage from the traces
	byKey  map[string]map[int64][][]byte // the records but traces by entity, as replay.ByEntity groups them
	inline map[string]map[string]bool    // the tools each entity ran inline (TOOL_CALL traces)
}

// readRecording decodes baseline. A snapshot or a model or tool call trace that does not
// decode fails it; another record that does not decode is left out, as replay.ByEntity leaves
// it.
func readRecording(baseline map[int64][][]byte) (*recording, error) {
	rest := maps.Clone(baseline)
	delete(rest, records.OutSnapshot)
	delete(rest, records.OutTrace)
	r := &recording{byKey: replay.ByEntity(rest), inline: map[string]map[string]bool{}}
	var snaps []*pb.StateSnapshot
	for i, b := range baseline[records.OutSnapshot] {
		s := &pb.StateSnapshot{}
		if err := proto.Unmarshal(b, s); err != nil {
			return nil, fmt.Errorf("baseline snapshot %d: %w", i+1, err)
		}
		snaps = append(snaps, s)
		r.add(s.GetEntityKey(), records.OutSnapshot, b)
	}
	var traces []*pb.TraceEvent
	for i, b := range baseline[records.OutTrace] {
		if typ, ok := traceType(b); ok && typ != pb.TraceEvent_LLM_CALL && typ != pb.TraceEvent_TOOL_CALL {
			continue
		}
		t := &pb.TraceEvent{}
		if err := proto.Unmarshal(b, t); err != nil {
			return nil, fmt.Errorf("baseline trace %d: %w", i+1, err)
		}
		traces = append(traces, t)
		e := string(t.GetEntityKey())
		if a := t.GetAttributes(); t.GetEventType() == pb.TraceEvent_TOOL_CALL && a[tracing.AttrInline] == "true" {
			if r.inline[e] == nil {
				r.inline[e] = map[string]bool{}
			}
			r.inline[e][a[tracing.AttrToolName]] = true
		}
	}
	r.model = replay.NewModel(snaps, traces)
	return r, nil
}

func (r *recording) add(entity []byte, kind int64, b []byte) {
	e := string(entity)
	if r.byKey[e] == nil {
		r.byKey[e] = map[int64][][]byte{}
	}
	r.byKey[e][kind] = append(r.byKey[e][kind], b)
}

var (
	eventTypeField = (&pb.TraceEvent{}).ProtoReflect().Descriptor().Fields().ByName("event_type").Number()
	pendingField   = (&pb.StateSnapshot{}).ProtoReflect().Descriptor().Fields().ByName("pending").Number()
)

// traceType reads a serialized trace event's type without decoding the rest; false when it
// cannot tell (b is not well formed, or the field not a varint), and the event is to be decoded.
func traceType(b []byte) (pb.TraceEvent_EventType, bool) {
	v, typ, found, ok := field(b, eventTypeField)
	if !ok || !found {
		return pb.TraceEvent_EVENT_TYPE_UNSPECIFIED, ok
	}
	n, m := protowire.ConsumeVarint(v)
	return pb.TraceEvent_EventType(n), typ == protowire.VarintType && m > 0
}

// field finds the last top-level occurrence of field num in the serialized message b (the one
// decoding keeps of a scalar) without decoding the rest: its value as protowire consumes it
// and its wire type, whether it is there, and false when b is not well formed.
func field(b []byte, num protowire.Number) (value []byte, typ protowire.Type, found, ok bool) {
	for len(b) > 0 {
		n, t, m := protowire.ConsumeTag(b)
		if m < 0 {
			return nil, 0, false, false
		}
		b = b[m:]
		size := protowire.ConsumeFieldValue(n, t, b)
		if size < 0 {
			return nil, 0, false, false
		}
		if n == num {
			value, typ, found = b[:size], t, true
		}
		b = b[size:]
	}
	return value, typ, found, true
}
