package statecodec

import (
	"fmt"
	"iter"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// pendingIntentsField is the field number of each intent in the [CellPending] encoding, which
// is the wire form of `message PendingIntents { repeated ToolIntent intents = 1; }`.
const pendingIntentsField protowire.Number = 1

// Pending is the set of intents a key awaits a result or an approval for (cell [CellPending]),
// in emission order, unique by intent_id. ToolIntent is a wire message (additive only), so
// the cell carries no state_schema_version; fields of the cell other than 1 are kept and
// re-emitted. It is not safe for concurrent use.
type Pending struct {
	intents []*pb.ToolIntent
	unknown []byte
	stats   Stats
}

// NewPending returns an empty set.
func NewPending() *Pending { return &Pending{} }

// DecodePending decodes a [CellPending] cell. Empty bytes give an empty set. An intent id
// listed twice keeps its later intent (counted in Stats.DuplicatesDropped). Bytes that do not
// parse give [ErrCorrupt]; b is never modified.
func DecodePending(b []byte) (*Pending, error) {
	p := &Pending{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, corruptPending(protowire.ParseError(n))
		}
		vn := protowire.ConsumeFieldValue(num, typ, b[n:])
		if vn < 0 {
			return nil, corruptPending(protowire.ParseError(vn))
		}
		if num != pendingIntentsField {
			p.unknown = append(p.unknown, b[:n+vn]...)
			b = b[n+vn:]
			continue
		}
		if typ != protowire.BytesType {
			return nil, corruptPending(fmt.Errorf("field 1 has wire type %d", typ))
		}
		raw, _ := protowire.ConsumeBytes(b[n:])
		ti := &pb.ToolIntent{}
		if err := proto.Unmarshal(raw, ti); err != nil {
			return nil, corruptPending(err)
		}
		p.intents = append(p.intents, ti)
		b = b[n+vn:]
	}
	var dropped []*pb.ToolIntent
	p.intents, dropped = dedupeKeepLast(p.intents, (*pb.ToolIntent).GetIntentId)
	p.stats.DuplicatesDropped += int64(len(dropped))
	return p, nil
}

func corruptPending(err error) error { return &Error{Code: CodeCorrupt, Cell: CellPending, Err: err} }

// Encode returns the deterministic bytes of the cell; an empty set encodes as no bytes.
func (p *Pending) Encode() ([]byte, error) {
	var out []byte
	for _, ti := range p.intents {
		b, err := marshal.Marshal(ti)
		if err != nil {
			return nil, &Error{Code: CodeEncode, Cell: CellPending, Err: err}
		}
		out = protowire.AppendBytes(protowire.AppendTag(out, pendingIntentsField, protowire.BytesType), b)
	}
	return append(out, p.unknown...), nil
}

// Add appends a copy of ti. It refuses with [ErrInvalidArgument] a nil intent, an empty
// intent_id, an id already pending, and an intent that cannot be serialized (a string field
// that is not UTF-8).
func (p *Pending) Add(ti *pb.ToolIntent) error {
	switch {
	case ti == nil || ti.GetIntentId() == "":
		return invalid(CellPending, "an intent needs an intent_id")
	case p.index(ti.GetIntentId()) >= 0:
		return invalid(CellPending, "intent %s is already pending", ti.GetIntentId())
	}
	if _, err := marshal.Marshal(ti); err != nil {
		return &Error{Code: CodeInvalidArgument, Cell: CellPending, Detail: "intent cannot be serialized", Err: err}
	}
	p.intents = append(p.intents, proto.Clone(ti).(*pb.ToolIntent))
	return nil
}

func (p *Pending) index(id string) int {
	return slices.IndexFunc(p.intents, func(ti *pb.ToolIntent) bool { return ti.GetIntentId() == id })
}

// Get returns a copy of the pending intent with intentID.
func (p *Pending) Get(intentID string) (*pb.ToolIntent, bool) {
	i := p.index(intentID)
	if i < 0 {
		return nil, false
	}
	return proto.Clone(p.intents[i]).(*pb.ToolIntent), true
}

// Remove removes the intent with intentID and returns it.
func (p *Pending) Remove(intentID string) (*pb.ToolIntent, bool) {
	i := p.index(intentID)
	if i < 0 {
		return nil, false
	}
	ti := p.intents[i]
	p.intents = slices.Delete(p.intents, i, i+1)
	return ti, true
}

// Len returns the number of pending intents.
func (p *Pending) Len() int { return len(p.intents) }

// All yields a copy of every pending intent, in emission order.
func (p *Pending) All() iter.Seq[*pb.ToolIntent] {
	return func(yield func(*pb.ToolIntent) bool) {
		for _, ti := range p.intents {
			if !yield(proto.Clone(ti).(*pb.ToolIntent)) {
				return
			}
		}
	}
}

// Stats returns what was repaired at decode.
func (p *Pending) Stats() Stats { return p.stats }
