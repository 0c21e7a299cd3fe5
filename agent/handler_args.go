package agent

import (
	"bytes"
	"errors"
	"slices"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/jsontext"
	"github.com/beamagents/beamagents/records"
)

// errNotObject refuses tool-call arguments that are not one JSON object.
var errNotObject = errors.New("the arguments are not one JSON object")

// admitArgs admits one call's arguments by its tool's schema: the one admission of tool
// arguments, whoever wrote them. args is the record's fields object: by stable ids (a
// handler's ArgsJSON, or a model's under the provider projection), or, when presented, by
// property names as a model writes them under a presented schema's projection
// (interaction.Schema.ReadPresented maps them back). The admitter then canonicalizes JSON
// numbers losslessly and decodes strictly.
func admitArgs(u *schemaUse, args []byte, presented bool) (*interaction.Value, error) {
	args = bytes.TrimSpace(args)
	if n, _, err := jsontext.Parse(string(args), jsontext.Options{}); err != nil || n.Kind != jsontext.Object {
		return nil, errNotObject
	}
	value := slices.Concat([]byte(`{"fields":`), args, []byte(`}`))
	if presented {
		var err error
		if value, err = u.schema.ReadPresented(args); err != nil {
			return nil, err
		}
	}
	out, err := u.admitter.Admit(value)
	if err != nil {
		return nil, err
	}
	return out.Value, nil
}

// declaredArgs admits a call a handler makes (Context.Tools) by the argument schema the agent
// declares for its tool (Definition.Tools), exactly as a model's call is admitted, and
// returns its canonical fields, what the intent carries. A call of a tool declared without a
// schema, or not declared, keeps its ArgsJSON as written. Arguments the schema refuses fail
// the activation as proposal_refused.
func (hc *Context) declaredArgs(call ToolCall) (string, error) {
	a := hc.act.c.a
	d, ok := a.def.Tools[call.Tool]
	if !ok || d.Args == nil {
		return call.ArgsJSON, nil
	}
	u, err := a.argsUseOf(d.Args)
	if err != nil {
		return "", fail(records.ReasonInternalPanic, err, "arguments of tool %s", call.Tool)
	}
	v, err := admitArgs(u, []byte(call.ArgsJSON), false)
	if err != nil {
		return "", fail(records.ReasonProposalRefused, err, "arguments of the call of tool %s", call.Tool)
	}
	return string(v.FieldsJSON()), nil
}

// toolDigest names a tool's parameters in a request (and so in its replay-cache key): the
// presented projection's digest for a presented schema, which shares its schema digest with a
// projection by stable ids of the same types.
func toolDigest(s *interaction.Schema) string {
	if s.Presented() {
		return s.PresentedDigest()
	}
	return s.Digest()
}
