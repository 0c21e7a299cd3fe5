package bind

import (
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/model"
)

// Kind is what sets one kind of agent apart in the activation core, which asks it instead of
// branching on the kind: a handler agent's (package agent) and a bindings agent's (package
// agent/bindings). Every method is a pure function of the agent's definition.
type Kind interface {
	// Adapter is the Continuation.adapter of the kind's suspensions.
	Adapter() string
	// ReadJournal decodes the snapshot of a suspension as the activation's journal;
	// WriteJournal encodes the journal as the snapshot of a suspension. Their errors are
	// *agent.Error values.
	ReadJournal(snapshot []byte) (*pb.HandlerJournal, error)
	WriteJournal(j *pb.HandlerJournal) ([]byte, error)
	// ReadsStateUpFront reports whether a run reads the key's memory and replay cache before
	// it starts (a handler's operations may need them at any position) or when it first asks
	// the model (Run.Memory).
	ReadsStateUpFront() bool
	// AwaitsSignals reports whether a suspension of the kind may await a signal.
	AwaitsSignals() bool
	// EmitsIntents reports whether the agent's activations may emit intents, which need a
	// keyring to be signed.
	EmitsIntents() bool
	// Tools lists the tools the agent's intents call, in the order their shapes are chosen:
	// a tool already listed keeps its first shape.
	Tools() []Tool
	// Rebuild builds the agent of def (an agent.Definition: this agent's with another
	// model) as this kind, checked as the first was.
	Rebuild(def any) (any, error)
}

// Tool is a tool an agent's intents call: by the tool's declared argument schema when it has
// one, else, when CaseID is set, by the fields of that case of the proposal schema.
type Tool struct {
	Name   string
	CaseID string
}

// Run is what a bindings step (and agent/memory's Cell) needs of the running activation
// beyond the public operations of agent.Context (Trigger, Position, ReplyValue). RunOf gives
// it for the Context a handler is handed. An operation that fails fails the activation: its error is the
// activation's, to be returned at once.
type Run interface {
	// Next takes the next position when the journal holds it, which must be of kind op
	// (else state_corrupt); it reports whether it did.
	Next(op pb.JournalEntry_Op) (*pb.JournalEntry, bool, error)
	// Memory reads the key's memory and replay cache and returns the memory, least recently
	// used first (nil when empty).
	Memory() ([]MemoryItem, error)
	// Entries are the journal's entries so far.
	Entries() []*pb.JournalEntry
	// Propose asks the model for the answer to msgs at the next position through the replay
	// cache and admits it by the agent's proposal schema. Nothing is journaled.
	Propose(msgs []model.Message) (*interaction.Value, error)
	// Admit admits a journaled proposal again by the agent's proposal schema.
	Admit(doc []byte) (*interaction.Value, error)
	// Append journals e at the next position.
	Append(e *pb.JournalEntry)
	// Intent signs the intent of e, the last journaled position: a call of tool with args
	// (kind TOOL or APPROVAL, under its deadline limit), whose emission carries the
	// conformance receipt's attributes. e records its id, and the run suspends: Intent
	// returns agent.ErrSuspended.
	Intent(e *pb.JournalEntry, tool, args string, kind pb.ToolIntent_Kind, receipt map[string]string) error
	// Put writes the memory entry key without journaling the write: a step that writes is
	// journaled whole.
	Put(key string, value []byte) error
	// Evictions and Replace are the two journaled operations of package agent/memory's Cell,
	// a handler's compaction of the memory cell. Evictions reads the least recently used
	// entries that must leave the cell before a write of size bytes under key, beside an
	// entry keep that never leaves and may grow to reserve bytes: none when that fits the
	// cell's bounds, else as many as bring it within fill percent of them, values included
	// (a write that cannot fit even alone fails the activation as budget_exceeded). Replace
	// deletes the entries drop, then writes puts in order, once.
	Evictions(key string, size int, keep string, reserve, fill int) ([]MemoryItem, error)
	Replace(drop []string, puts ...MemoryItem) error
}

// RunOf is set by package agent when it is initialized: the Run of the *agent.Context a
// handler is handed. The type is erased because package agent imports this one.
var RunOf func(hc any) Run

// Build is set by package agent when it is initialized: it builds the *agent.Agent of def (an
// agent.Definition whose Handler is the kind's runtime) run as kind k. It checks what every
// agent needs (a name, declared tool names), then check's refusal, then check's problems
// with the state schema's (sorted, in one error), then the proposal schema's admission; its
// errors match agent.ErrDefinition. The types are erased because package agent imports this
// one.
var Build func(def any, k Kind, check func() (problems []string, refusal error)) (any, error)
