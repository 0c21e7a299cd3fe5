package agent

import (
	"github.com/beamagents/beamagents/model"
)

// defaultDenied is the tool message of a gated call the approver rejected, for a tool whose
// ToolDecl.Denied is empty.
const defaultDenied = "REJECTED: the call was not approved"

// RunTools answers a turn's tool calls (RunCalls) and returns the messages that continue the
// conversation: the assistant's turn with its calls, then one tool message per call in call
// order.
func (hc *Context) RunTools(turn *Turn, decls []ToolDecl) ([]model.Message, error) {
	answers, err := hc.RunCalls(decls, turn.Calls...)
	if err != nil {
		return nil, err
	}
	return append([]model.Message{turn.Message()}, answers...), nil
}

// RunCalls answers admitted tool calls by their declarations (a call of a tool decls does not
// declare is side-effecting) and returns one tool message per call, in call order. The
// operations take their positions in a fixed order, whatever the calls' outcomes:
//
//  1. each side-effecting call's gate (ToolDecl.NeedsApproval) is asked, in call order;
//  2. inline tools run inline, in call order;
//  3. the ungated side-effecting calls become intents of one suspension (Tools);
//  4. each gated call, in call order, is an APPROVAL intent, then once approved its TOOL
//     intent at the next position (Approved); a rejected call is answered with its tool's
//     Denied message and the approver's note, and takes no more positions.
//
// A tool message is an inline tool's output (or "error: " and its failure), a tool result's
// payload (or its status and error message: resultContent), or the denial. Without gated
// calls the positions are those of the inline runs and one Tools call, as they always were.
func (hc *Context) RunCalls(decls []ToolDecl, calls ...ToolCall) ([]model.Message, error) {
	byName := make(map[string]ToolDecl, len(decls))
	for _, d := range decls {
		byName[d.Name] = d
	}
	gated := make([]bool, len(calls))
	for i, call := range calls {
		d := byName[call.Tool]
		gated[i] = d.Inline == nil && d.NeedsApproval != nil && d.NeedsApproval(hc, call)
	}
	content := make([]string, len(calls))
	var plain []ToolCall
	var at []int
	for i, call := range calls {
		d := byName[call.Tool]
		switch {
		case d.Inline != nil:
			out, err := hc.Inline(call.Tool, []byte(call.ArgsJSON), d.Inline)
			if ie, ok := err.(*InlineError); ok {
				content[i] = "error: " + ie.Message
				continue
			} else if err != nil {
				return nil, err
			}
			content[i] = string(out)
		case !gated[i]:
			plain, at = append(plain, call), append(at, i)
		}
	}
	if len(plain) > 0 {
		results, err := hc.Tools(plain...)
		if err != nil {
			return nil, err
		}
		for k, r := range results {
			content[at[k]] = resultContent(r)
		}
	}
	for i, call := range calls {
		if !gated[i] {
			continue
		}
		c, err := hc.gatedCall(call, byName[call.Tool])
		if err != nil {
			return nil, err
		}
		content[i] = c
	}
	msgs := make([]model.Message, len(calls))
	for i, call := range calls {
		msgs[i] = ToolMessage(call.ID, content[i])
	}
	return msgs, nil
}

// gatedCall runs call behind an approval (Approved) and returns its tool message.
func (hc *Context) gatedCall(call ToolCall, d ToolDecl) (string, error) {
	// The APPROVAL operation takes the next position: its entry holds the decision and the note.
	pos := hc.pos
	res, approved, err := hc.Approved(call.Tool, call.ArgsJSON)
	switch {
	case err != nil:
		return "", err
	case approved:
		return resultContent(res), nil
	}
	denied := d.Denied
	if denied == "" {
		denied = defaultDenied
	}
	if note := hc.j.Entries[pos].GetApproval().GetNote(); note != "" {
		denied += " (note: " + note + ")"
	}
	return denied, nil
}
