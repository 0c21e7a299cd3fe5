package agent

import (
	"maps"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/internal/bind"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// handlerKind is the kind of an agent built by New from Definition.Handler: its suspensions
// keep a binary HandlerJournal of journalVersion within Limits.MaxJournalBytes, its
// operations may read the memory at any position, await signals and call any declared tool.
type handlerKind struct {
	tools           []string // the declared tools' names, sorted
	maxJournalBytes int
}

func newHandlerKind(def Definition, limits Limits) handlerKind {
	return handlerKind{tools: slices.Sorted(maps.Keys(def.Tools)), maxJournalBytes: limits.MaxJournalBytes}
}

func (handlerKind) Adapter() string { return handlerAdapter }

func (handlerKind) ReadJournal(snapshot []byte) (*pb.HandlerJournal, error) {
	j := &pb.HandlerJournal{}
	if err := proto.Unmarshal(snapshot, j); err != nil {
		return nil, fail(records.ReasonStateCorrupt, err, "handler journal")
	}
	if v := j.GetJournalVersion(); v != journalVersion {
		if v > journalVersion {
			return nil, fail(records.ReasonStateVersionUnsupported, nil, "handler journal version %d; this build reads %d", v, journalVersion)
		}
		return nil, fail(records.ReasonStateCorrupt, nil, "handler journal version %d", v)
	}
	return j, nil
}

func (k handlerKind) WriteJournal(j *pb.HandlerJournal) ([]byte, error) {
	snap, err := proto.MarshalOptions{Deterministic: true}.Marshal(j)
	if err != nil {
		return nil, fail(records.ReasonStateCorrupt, err, "encoding the handler journal")
	}
	if len(snap) > k.maxJournalBytes {
		return nil, fail(records.ReasonJournalTooLarge, nil, "the journal of %d operations is %d bytes; the limit (MaxJournalBytes) is %d", len(j.Entries), len(snap), k.maxJournalBytes)
	}
	return snap, nil
}

func (handlerKind) ReadsStateUpFront() bool { return true }

func (handlerKind) AwaitsSignals() bool { return true }

// EmitsIntents is true: a handler decides in code whether it calls tools.
func (handlerKind) EmitsIntents() bool { return true }

// Tools are the declared ones: a handler calls them in code, each by its declared arguments.
func (k handlerKind) Tools() []bind.Tool {
	out := make([]bind.Tool, len(k.tools))
	for i, name := range k.tools {
		out[i] = bind.Tool{Name: name}
	}
	return out
}

func (handlerKind) Rebuild(def any) (any, error) { return New(def.(Definition)) }
