package bindings

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/internal/bind"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/negotiate"
)

// build validates def (without a Handler) with its prompt, bindings and step budget, and
// builds the agent whose handler is the runtime's own: what every agent needs, checked by
// package agent, then a schema, a model and the bindings, then each case bound to a declared
// tool negotiated against it.
func build(def agent.Definition, prompt PromptBuilder, bindings map[string]Action, maxSteps uint32) (*agent.Agent, error) {
	if prompt == nil {
		prompt = DefaultPrompt("")
	}
	if maxSteps == 0 {
		maxSteps = defaultMaxSteps
	}
	k := &kind{schema: def.Schema, prompt: prompt, bindings: bindings, maxSteps: maxSteps}
	handled := def.Handler != nil
	run := def
	run.Handler = k.run
	a, err := bind.Build(run, k, func() ([]string, error) {
		switch {
		case handled:
			return nil, defErr("agent %s: an agent of bindings has no handler", def.Name)
		case def.Schema == nil:
			return nil, defErr("agent %s has no proposal schema", def.Name)
		case def.Model == nil:
			return nil, defErr("agent %s has no model", def.Name)
		}
		return bindingProblems(def.Schema, bindings), nil
	})
	if err != nil {
		return nil, err
	}
	if err := k.negotiate(def); err != nil {
		return nil, err
	}
	return a.(*agent.Agent), nil
}

// negotiate checks every binding to a declared tool (negotiate.CheckBinding), keeping each
// boundary its case's intents cross.
func (k *kind) negotiate(def agent.Definition) error {
	k.boundaries = map[string]*negotiate.Boundary{}
	var problems []string
	for _, caseID := range slices.Sorted(maps.Keys(k.bindings)) {
		act := k.bindings[caseID]
		spec, ok := def.Tools[act.Tool]
		if !calls(act) || !ok {
			continue
		}
		b, err := negotiate.CheckBinding(def.Schema, caseID, spec.Args, spec.Agreement)
		if err != nil {
			problems = append(problems, fmt.Sprintf("binding %s to tool %s: %v", caseID, act.Tool, err))
			continue
		}
		k.boundaries[caseID] = b
	}
	if len(problems) > 0 {
		return defErr("agent %s: %s", def.Name, strings.Join(problems, "; "))
	}
	return nil
}

// bindingProblems lists what is wrong with the bindings of schema's cases: a case without a
// binding, a binding naming no case, an action its case's fields cannot carry.
func bindingProblems(schema *interaction.Schema, bindings map[string]Action) []string {
	cases := caseFields(schema)
	var problems []string
	for id := range cases {
		if _, ok := bindings[id]; !ok {
			problems = append(problems, fmt.Sprintf("case %s has no binding", id))
		}
	}
	for id, act := range bindings {
		fields, ok := cases[id]
		if !ok {
			problems = append(problems, fmt.Sprintf("binding %s names no case of %s", id, schema.RootTypeID()))
			continue
		}
		if err := checkAction(act, fields); err != "" {
			problems = append(problems, fmt.Sprintf("binding %s: %s", id, err))
		}
	}
	return problems
}

// caseFields maps each bindable id to its fields: the cases of a variant root, or the root
// type id of a record root.
func caseFields(s *interaction.Schema) map[string][]*interaction.Field {
	root := s.Root()
	out := map[string][]*interaction.Field{}
	if root.Kind() == interaction.Record {
		for i := range root.NumFields() {
			out[root.StableID()] = append(out[root.StableID()], root.Field(i))
		}
		return out
	}
	for i := range root.NumCases() {
		c := root.Case(i)
		out[c.StableID()] = []*interaction.Field{}
		for j := range c.NumFields() {
			out[c.StableID()] = append(out[c.StableID()], c.Field(j))
		}
	}
	return out
}

func checkAction(act Action, fields []*interaction.Field) string {
	switch act.Kind {
	case ActFinal:
		return ""
	case ActTool, ActApproval:
		if act.Tool == "" {
			return act.Kind.String() + " action without a tool name"
		}
		return ""
	case ActRemember:
		if !hasField(fields, act.KeyField, interaction.String) {
			return fmt.Sprintf("remember key field %q is not a string field of the case", act.KeyField)
		}
		if !hasField(fields, act.ValueField, interaction.String, interaction.Bytes) {
			return fmt.Sprintf("remember value field %q is not a string or bytes field of the case", act.ValueField)
		}
		return ""
	}
	return fmt.Sprintf("unknown action kind %d", act.Kind)
}

func hasField(fields []*interaction.Field, id string, reps ...interaction.Representation) bool {
	for _, f := range fields {
		if f.StableID() == id {
			return slices.Contains(reps, f.Representation())
		}
	}
	return false
}

// defErr is an invalid definition, as every error New returns (agent.ErrDefinition).
func defErr(format string, args ...any) error {
	return &agent.DefinitionError{Detail: fmt.Sprintf(format, args...)}
}
