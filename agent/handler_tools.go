package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/beamagents/beamagents/agent/internal/hostapi"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/negotiate"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
	"github.com/beamagents/beamagents/tracing"
)

// Tool calls a side-effecting tool: see Tools.
func (hc *Context) Tool(tool, argsJSON string) (*pb.ToolResult, error) {
	res, err := hc.Tools(ToolCall{Tool: tool, ArgsJSON: argsJSON})
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// Tools calls side-effecting tools: each call not yet journaled becomes a signed TOOL intent
// (its step index is its operation's position, so its id is UUIDv5 over the key, seq and
// that position) and the activation suspends until every one is answered; Tools then returns
// ErrSuspended. When the activation resumes, Tools returns the ToolResults in call order.
// A call of a tool the agent declares with a schema (Definition.Tools) is admitted by it like
// a model's call, and its intent carries the canonical fields; a refused one fails the
// activation as proposal_refused.
func (hc *Context) Tools(calls ...ToolCall) ([]*pb.ToolResult, error) {
	return hc.tools(calls, nil)
}

// tools is Tools, and with a deadline (by) ToolsBy.
func (hc *Context) tools(calls []ToolCall, by *int64) ([]*pb.ToolResult, error) {
	act := hc.act
	timeout := act.c.a.limits.ToolTimeoutMs
	if by != nil {
		timeout = *by - act.c.now
	}
	results := make([]*pb.ToolResult, len(calls))
	var fresh []*pb.ToolIntent
	for i, call := range calls {
		args, err := hc.declaredArgs(call)
		if err != nil {
			return nil, hc.fails(err)
		}
		e, replayed, err := hc.begin(pb.JournalEntry_TOOL, call.Tool, []byte(args))
		if err != nil {
			return nil, err
		}
		if replayed {
			if e.GetToolResult() == nil {
				return nil, hc.fails(fail(records.ReasonStateCorrupt, nil, "journaled tool call %d has no result", hc.pos-1))
			}
			results[i] = e.GetToolResult()
			continue
		}
		if timeout <= 0 { // ToolsBy whose deadline has passed: expired without an intent
			e.ToolResult = act.expiredResult(uint32(hc.pos - 1))
			results[i] = e.ToolResult
			continue
		}
		ti, err := act.newIntent(uint32(hc.pos-1), call.Tool, args, pb.ToolIntent_TOOL, timeout)
		if err != nil {
			return nil, hc.fails(err)
		}
		e.IntentId = ti.IntentId
		fresh = append(fresh, ti)
	}
	if len(fresh) > 0 {
		hc.fresh = fresh
		if by != nil {
			hc.wait = &wait{deadline: *by, wake: true}
		}
		return nil, ErrSuspended
	}
	return results, nil
}

// Approved asks a human to approve a call of tool: an APPROVAL intent, then, once approved,
// the gated TOOL intent at the next position, whose result it returns with approved true.
// When the decision carries edited arguments (Approval.args_json, covered by its signature),
// the gated intent carries those instead of argsJSON.
// A rejected call returns no result and approved false. Like Tools it suspends (ErrSuspended)
// until each intent is answered.
func (hc *Context) Approved(tool, argsJSON string) (res *pb.ToolResult, approved bool, err error) {
	act := hc.act
	// The request is admitted as the call itself will be: a person approves what can run.
	if argsJSON, err = hc.declaredArgs(ToolCall{Tool: tool, ArgsJSON: argsJSON}); err != nil {
		return nil, false, hc.fails(err)
	}
	e, replayed, err := hc.begin(pb.JournalEntry_APPROVAL, tool, []byte(argsJSON))
	if err != nil {
		return nil, false, err
	}
	if !replayed {
		ti, err := act.newIntent(uint32(hc.pos-1), tool, argsJSON, pb.ToolIntent_APPROVAL, act.c.a.limits.ApprovalTimeoutMs)
		if err != nil {
			return nil, false, hc.fails(err)
		}
		e.IntentId = ti.IntentId
		hc.fresh = []*pb.ToolIntent{ti}
		return nil, false, ErrSuspended
	}
	switch {
	case e.GetApproval() == nil:
		return nil, false, hc.fails(fail(records.ReasonStateCorrupt, nil, "journaled approval %d has no decision", hc.pos-1))
	case !e.GetApproval().GetApproved():
		return nil, false, nil
	}
	// The approver may have edited the arguments: the gated call runs with the decision's.
	if edited := e.GetApproval().GetArgsJson(); edited != "" {
		argsJSON = edited
	}
	res, err = hc.Tool(tool, argsJSON)
	return res, err == nil, err
}

// InlineFunc is an inline read-only tool: it runs in the worker, under the activation's
// inline deadline, and must not change anything outside the activation. Its result (or its
// failure) is journaled, so a resumed activation never runs it again.
type InlineFunc func(ctx context.Context, args []byte) ([]byte, error)

// InlineError is the failure of an inline tool, as journaled: a run that returned an error,
// panicked or passed its deadline.
type InlineError struct {
	Tool    string
	Message string
}

func (e *InlineError) Error() string { return "inline tool " + e.Tool + ": " + e.Message }

// Inline runs the read-only tool fn on args, or returns its journaled result. The result of a
// completed activation is also kept in the replay cache, so replaying the activation from a
// snapshot does not run it either. A failure is returned as an *InlineError, the same on
// every run.
func (hc *Context) Inline(tool string, args []byte, fn InlineFunc) ([]byte, error) {
	act := hc.act
	e, replayed, err := hc.begin(pb.JournalEntry_INLINE, tool, args)
	if err != nil {
		return nil, err
	}
	if !replayed {
		if err := act.inline(e, uint32(hc.pos-1), args, fn); err != nil {
			return nil, hc.fails(err)
		}
	}
	if e.GetError() != "" {
		return nil, &InlineError{Tool: tool, Message: e.GetError()}
	}
	return e.GetResult(), nil
}

// inline fills e from the replay cache or by running fn under the inline deadline.
func (act *activation) inline(e *pb.JournalEntry, pos uint32, args []byte, fn InlineFunc) error {
	c, v := act.c, act.v
	key := inlineKey(c.entity, act.seq, pos, e.GetName(), args)
	lk, err := v.cache.Lookup(key, c.now)
	if err != nil {
		return fail(records.ReasonStateCorrupt, err, "replay cache lookup")
	}
	v.touch(cacheCell)
	hit := lk.Status == statecodec.Hit
	var rec []byte
	if hit {
		rec = lk.Response
	} else {
		if c.deps.Recorded != nil {
			var ok bool
			if rec, ok = c.deps.Recorded(hostapi.InlineRun{Entity: c.entity, Seq: act.seq, Step: pos, Tool: e.GetName(), CacheKey: key}); !ok {
				rec = inlineRecord(nil, errNotRecorded)
			}
		} else {
			out, runErr := runInline(c.ctx, time.Duration(c.a.limits.InlineTimeoutMs)*time.Millisecond, fn, args)
			rec = inlineRecord(out, runErr)
		}
		if _, err := v.cache.Store(key, rec, c.now); err != nil {
			return fail(records.ReasonStateCorrupt, err, "replay cache store")
		}
	}
	if len(rec) == 0 || rec[0] > 1 {
		return fail(records.ReasonStateCorrupt, nil, "replay cache entry of inline tool %s", e.GetName())
	}
	status := pb.ToolResult_OK.String()
	if rec[0] == 1 {
		e.Error, status = string(rec[1:]), pb.ToolResult_ERROR.String()
	} else {
		e.Result = rec[1:]
	}
	act.tr.emit(pb.TraceEvent_TOOL_CALL, pos, c.now, map[string]string{
		tracing.AttrOperationName: tracing.OpExecuteTool,
		tracing.AttrGenAIToolName: e.GetName(),
		tracing.AttrToolName:      e.GetName(),
		tracing.AttrToolStatus:    status,
		tracing.AttrCacheHit:      fmt.Sprint(hit),
		tracing.AttrInline:        "true",
	})
	return nil
}

// errNotRecorded is the failure of an inline run a replay's record does not hold.
var errNotRecorded = errors.New("not in the recorded run")

// inlineRecord is an inline run's outcome as the replay cache keeps it: 0 and the result, or
// 1 and the error text.
func inlineRecord(out []byte, err error) []byte {
	if err != nil {
		return append([]byte{1}, err.Error()...)
	}
	return append([]byte{0}, out...)
}

// runInline runs fn under a deadline; a run that panics or overstays fails. The deadline is
// the only wall-clock time the core knows of: what it decides is journaled, never re-decided.
func runInline(ctx context.Context, d time.Duration, fn InlineFunc, args []byte) ([]byte, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	type outcome struct {
		out []byte
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- outcome{err: fmt.Errorf("panic: %v", r)}
			}
		}()
		out, err := fn(ctx, args)
		done <- outcome{out, err}
	}()
	select {
	case o := <-done:
		return o.out, o.err
	case <-ctx.Done():
		return nil, fmt.Errorf("deadline of %s exceeded", d)
	}
}

// inlineKey is the replay-cache key of an inline tool run: SHA-256 over its identity, apart
// from every model request's key by its domain.
func inlineKey(entity []byte, seq int64, pos uint32, tool string, args []byte) string {
	d := argsDigest(pb.JournalEntry_INLINE, "beamagents.agent.inline.v1", [][]byte{entity, []byte(itoa(seq)), []byte(itoa(int64(pos))), []byte(tool), args})
	const hexdigits = "0123456789abcdef"
	b := make([]byte, 0, 2*len(d))
	for _, x := range d {
		b = append(b, hexdigits[x>>4], hexdigits[x&15])
	}
	return string(b)
}

// ToolDecl declares a tool: its name, description and closed argument schema. Declared to
// the model (Chat, RunTools), it is projected to the provider's tool declaration by
// interaction, and Inline, when set, makes it an inline read-only tool; else a call of it is
// a side-effecting TOOL intent. Declared in Definition.Tools (by name; Name may be left
// empty there), it is the argument schema the effector negotiates, and in a bindings agent
// Agreement is the agreement under which a proposal case bound to the tool reaches it.
type ToolDecl struct {
	Name        string
	Description string
	Args        *interaction.Schema
	Inline      InlineFunc
	Agreement   negotiate.Agreement
	// NeedsApproval gates a side-effecting tool (RunTools, RunCalls): a call it holds to need
	// an approval becomes an APPROVAL intent first, as Approved does. Nil never gates; an
	// inline tool is never gated. It must be deterministic (docs/agents.md, "Gates").
	NeedsApproval func(hc *Context, call ToolCall) bool
	// Denied is the tool message the model gets for a gated call the approver rejected (the
	// approver's note appended when there is one); empty selects defaultDenied.
	Denied string
}

// Chat is a model call with native tools.
type Chat struct {
	Messages []model.Message
	Tools    []ToolDecl
}

// Turn is an admitted answer of a model call with native tools.
type Turn struct {
	Text  string
	Calls []ToolCall
	raw   []model.ToolCall
}

// Message is the turn as the conversation's assistant message: its text and its tool calls
// with their arguments exactly as the model sent them (what RunTools continues with), for a
// handler or a framework adapter that builds the next request itself.
func (t *Turn) Message() model.Message {
	return model.Message{Role: model.RoleAssistant, Content: t.Text, ToolCalls: t.raw}
}

// ToolCall is one tool call: an admitted call of a Turn (every field), or a side-effecting
// call a handler makes with Context.Tools (Tool and ArgsJSON).
type ToolCall struct {
	ID   string
	Tool string
	// Args is the call's arguments, admitted strictly by the tool's schema; ArgsJSON their
	// canonical fields (Args.FieldsJSON()), integers exact. ArgsJSON is what an intent carries
	// verbatim as its args_json: Context.Tools reads only Tool and ArgsJSON.
	Args     *interaction.Value
	ArgsJSON string
}

// Chat asks the model with native tools. Every tool call of the answer must name a declared
// tool and its arguments are admitted by that tool's schema (JSON numbers canonicalized
// losslessly, then strictly decoded): a call that fails either fails the activation as
// proposal_refused. The answer is journaled, and kept in the replay cache as a canonical
// turn.
func (hc *Context) Chat(chat Chat) (*Turn, error) {
	if err := hc.usable(); err != nil {
		return nil, err
	}
	act := hc.act
	req := hc.request(chat.Messages)
	// Every provider is sent each tool under its wire name and maps the answer back: a set of
	// names that cannot make that round trip is the handler's error, refused before any call.
	if err := checkToolNames(chat.Tools); err != nil {
		return nil, hc.fails(fail(records.ReasonInternalPanic, err, "step %d: tool declarations", req.Step))
	}
	uses := map[string]*schemaUse{}
	for _, d := range chat.Tools {
		u, err := act.c.a.argsUseOf(d.Args)
		if err != nil {
			return nil, hc.fails(fail(records.ReasonInternalPanic, err, "arguments of tool %s", d.Name))
		}
		uses[d.Name] = u
		req.Tools = append(req.Tools, model.Tool{Name: d.Name, Description: d.Description, Parameters: u.provider, Digest: toolDigest(d.Args)})
	}
	key := model.CacheKey(req)
	e, replayed, err := hc.begin(pb.JournalEntry_CHAT, "", []byte(key))
	if err != nil {
		return nil, err
	}
	text := e.GetResult()
	var attrs map[string]string
	if !replayed {
		if text, attrs, err = act.ask(req, key, streamed{tools: uses}); err != nil {
			return nil, hc.fails(err)
		}
	}
	// Without tools the answer is recorded as its text (model.CacheBytes), with tools as a
	// canonical turn.
	resp := &model.Response{Text: text}
	if len(req.Tools) > 0 {
		if resp, err = model.DecodeTurn(text); err != nil {
			return nil, hc.fails(fail(records.ReasonProposalRefused, err, "step %d: the answer is not a turn", req.Step))
		}
	}
	turn, err := admitTurn(resp, uses)
	if err != nil {
		return nil, hc.fails(fail(records.ReasonProposalRefused, err, "step %d", req.Step))
	}
	if !replayed {
		e.Result = text
		attrs[tracing.AttrToolCalls] = itoa(int64(len(turn.Calls)))
		act.tr.emit(pb.TraceEvent_LLM_CALL, req.Step, act.c.now, attrs)
	}
	return turn, nil
}

func admitTurn(resp *model.Response, uses map[string]*schemaUse) (*Turn, error) {
	turn := &Turn{Text: string(resp.Text), raw: resp.ToolCalls}
	for i, call := range resp.ToolCalls {
		u, ok := uses[call.Name]
		if !ok {
			return nil, fmt.Errorf("tool call %d names the undeclared tool %q", i, call.Name)
		}
		v, err := admitArgs(u, []byte(call.Arguments), u.schema.Presented())
		switch {
		case errors.Is(err, errNotObject):
			return nil, fmt.Errorf("arguments of tool call %d (%s) are not one JSON object", i, call.Name)
		case err != nil:
			return nil, fmt.Errorf("arguments of tool call %d (%s): %w", i, call.Name, err)
		}
		turn.Calls = append(turn.Calls, ToolCall{ID: call.ID, Tool: call.Name, Args: v, ArgsJSON: string(v.FieldsJSON())})
	}
	return turn, nil
}

// AdmitCall admits a call of decl's tool whose arguments code outside the runtime handed
// over (a framework's tool invocation): argsJSON must be one JSON object that decl.Args
// admits, exactly as a model's call in Chat (JSON numbers read by their digits). A refusal
// fails the activation as proposal_refused, whatever the handler does next.
func (hc *Context) AdmitCall(decl ToolDecl, id, argsJSON string) (ToolCall, error) {
	if err := hc.usable(); err != nil {
		return ToolCall{}, err
	}
	if decl.Args == nil {
		return ToolCall{}, hc.fails(fail(records.ReasonInternalPanic, nil, "tool %s has no argument schema", decl.Name))
	}
	u, err := hc.act.c.a.argsUseOf(decl.Args)
	if err != nil {
		return ToolCall{}, hc.fails(fail(records.ReasonInternalPanic, err, "arguments of tool %s", decl.Name))
	}
	call := model.ToolCall{ID: id, Name: decl.Name, Arguments: argsJSON}
	turn, err := admitTurn(&model.Response{ToolCalls: []model.ToolCall{call}}, map[string]*schemaUse{decl.Name: u})
	if err != nil {
		return ToolCall{}, hc.fails(fail(records.ReasonProposalRefused, err, "arguments handed to tool %s", decl.Name))
	}
	return turn.Calls[0], nil
}

// checkToolNames checks the names of one model call's tool declarations with the mapping the
// providers send them by (provider.NewToolNames): each usable, declared once, and no two sent
// under one wire name. The error is a *model.Error of model.CodeToolName.
func checkToolNames(decls []ToolDecl) error {
	names := make([]string, len(decls))
	for i, d := range decls {
		names[i] = d.Name
	}
	_, err := provider.NewToolNames(names)
	return err
}
