package bindings

import (
	"maps"
	"slices"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/internal/bind"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/negotiate"
)

// adapter is the Continuation.adapter of a suspended bindings agent; its snapshot is a binary
// AgentResume, the journal's bindings form (journalOfResume, resumeOfJournal).
const adapter = "beamagents.agent.v1"

// defaultMaxSteps is the step budget of an activation of an agent that sets none.
const defaultMaxSteps = 8

// kind is a bindings agent as the activation core sees it (bind.Kind), and its runtime: the
// handler run, the prompt builder, the bindings, the step budget and the negotiated boundary
// of each case bound to a declared tool.
type kind struct {
	schema     *interaction.Schema
	prompt     PromptBuilder
	bindings   map[string]Action
	maxSteps   uint32
	boundaries map[string]*negotiate.Boundary // by case id
}

func (*kind) Adapter() string { return adapter }

func (*kind) ReadJournal(snapshot []byte) (*pb.HandlerJournal, error) {
	return journalOfResume(snapshot)
}

func (*kind) WriteJournal(j *pb.HandlerJournal) ([]byte, error) { return resumeOfJournal(j) }

// ReadsStateUpFront is false: a step reads the memory and the cache when it asks the model,
// not before.
func (*kind) ReadsStateUpFront() bool { return false }

// AwaitsSignals is false: a bindings agent has no action that awaits a signal.
func (*kind) AwaitsSignals() bool { return false }

// EmitsIntents reports whether a case is bound to a tool or an approval.
func (k *kind) EmitsIntents() bool {
	for _, act := range k.bindings {
		if calls(act) {
			return true
		}
	}
	return false
}

// Tools are the bound ones, in stable-id order of their cases.
func (k *kind) Tools() []bind.Tool {
	var out []bind.Tool
	for _, caseID := range slices.Sorted(maps.Keys(k.bindings)) {
		if act := k.bindings[caseID]; calls(act) {
			out = append(out, bind.Tool{Name: act.Tool, CaseID: caseID})
		}
	}
	return out
}

// Rebuild builds def's agent with the same prompt, bindings and step budget. def's Handler is
// this agent's runtime; the new agent gets a runtime of its own.
func (k *kind) Rebuild(def any) (any, error) {
	d := def.(agent.Definition)
	d.Handler = nil
	return build(d, k.prompt, k.bindings, k.maxSteps)
}

// calls reports whether act emits an intent: a tool call or an approval of one.
func calls(act Action) bool { return act.Kind == ActTool || act.Kind == ActApproval }
