package genkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core"
	gk "github.com/firebase/genkit/go/genkit"

	"github.com/beamagents/beamagents/agent"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/negotiate"
	"github.com/beamagents/beamagents/records"
)

// ModelName is the Genkit name of the model the runtime answers.
const ModelName = "beamagents/runtime"

// Tool is a runtime tool given to Genkit: its declaration (inline when Decl.Inline is set)
// and, for a side-effecting tool, an optional approval gate.
type Tool struct {
	Decl agent.ToolDecl
	Gate *Gate
}

// Gate puts a side-effecting tool behind a human approval: an APPROVAL intent, then, once
// approved, the TOOL intent (agent.Context.Approved).
type Gate struct {
	// Needed decides in code whether a call needs the approval, from the run's Context (its
	// trigger) and the call's canonical arguments; it must be deterministic. Nil gates every
	// call.
	Needed func(hc *agent.Context, argsJSON string) bool
	// Denied is the tool message that answers the model when the call was not approved;
	// empty means Rejected.
	Denied string
}

// Rejected is the default tool message of a call whose approval was denied.
const Rejected = "REJECTED: the call was not approved"

// Agent is a Genkit instance whose model and tools the runtime answers.
type Agent struct {
	g     *gk.Genkit
	model ai.Model
	refs  []ai.ToolRef
	tools []*spec // in declaration order
	byNm  map[string]*spec
}

type spec struct {
	Tool
	adm *negotiate.Admitter
}

// New builds the Genkit instance of tools. Genkit's Init registers a process-wide handler of
// SIGINT and SIGTERM (docs/adapters.md).
func New(ctx context.Context, tools ...Tool) (*Agent, error) {
	a := &Agent{byNm: map[string]*spec{}}
	a.g = gk.Init(ctx)
	for _, t := range tools {
		d := t.Decl
		if d.Name == "" || d.Args == nil || a.byNm[d.Name] != nil {
			return nil, fmt.Errorf("genkit adapter: tool %q needs a unique name and an argument schema", d.Name)
		}
		if t.Gate != nil && d.Inline != nil {
			return nil, fmt.Errorf("genkit adapter: tool %s is inline; only a side-effecting tool is gated", d.Name)
		}
		params, err := provider.ToolParameters(provider.OpenAIStrict, d.Args.ProviderJSONSchema())
		if err != nil {
			return nil, fmt.Errorf("genkit adapter: tool %s: %w", d.Name, err)
		}
		var input map[string]any
		if err := json.Unmarshal(params, &input); err != nil {
			return nil, fmt.Errorf("genkit adapter: tool %s: %w", d.Name, err)
		}
		adm, err := negotiate.NewAdmitter(d.Args, negotiate.Agreement{Protocol: negotiate.TransformAll})
		if err != nil {
			return nil, fmt.Errorf("genkit adapter: tool %s: %w", d.Name, err)
		}
		s := &spec{Tool: t, adm: adm}
		a.tools, a.byNm[d.Name] = append(a.tools, s), s
		a.refs = append(a.refs, gk.DefineTool(a.g, d.Name, d.Description, s.run, ai.WithInputSchema(input)))
	}
	a.model = gk.DefineModel(a.g, ModelName, &ai.ModelOptions{Label: "beamagents runtime",
		Supports: &ai.ModelSupports{Multiturn: true, SystemRole: true, Tools: true}}, a.generate)
	return a, nil
}

// Genkit returns the instance, to define flows or prompts on.
func (a *Agent) Genkit() *gk.Genkit { return a.g }

// Model returns the model the runtime answers.
func (a *Agent) Model() ai.Model { return a.model }

// Tools returns the tools, for ai.WithTools.
func (a *Agent) Tools() []ai.ToolRef { return a.refs }

type ctxKey struct{}

// ErrUnbound is returned by the model or a tool called outside a handler run.
var ErrUnbound = errors.New("genkit adapter: called outside a handler run (no agent.Context in the Go context)")

// run is one handler run's state: the Context and the model's turns in order.
type run struct {
	a     *Agent
	hc    *agent.Context
	mu    sync.Mutex
	turns []*turn
}

// turn is one model answer with tool calls and, once its first tool started, their outcomes.
type turn struct {
	calls   []agent.ToolCall
	raw     []model.ToolCall
	once    sync.Once
	content []string
	err     error // the turn's failure or agent.ErrSuspended
	claimed []bool
}

func from(ctx context.Context) (*run, error) {
	r, ok := ctx.Value(ctxKey{}).(*run)
	if !ok || r == nil {
		return nil, ErrUnbound
	}
	return r, nil
}

// Handler returns an agent.Handler whose body is run, called with a Go context bound to the
// run's agent.Context; its error is mapped as Outcome does.
func (a *Agent) Handler(body func(ctx context.Context, hc *agent.Context, tr agent.Trigger) error) agent.Handler {
	return func(hc *agent.Context, tr agent.Trigger) error {
		r := &run{a: a, hc: hc}
		return r.outcome(body(context.WithValue(hc.Context(), ctxKey{}, r), hc, tr))
	}
}

// Generate runs Genkit's generate loop with the runtime's model and every tool, then opts. A
// loop interrupted by a suspending tool returns its response and agent.ErrSuspended.
func (a *Agent) Generate(ctx context.Context, opts ...ai.GenerateOption) (*ai.ModelResponse, error) {
	all := append([]ai.GenerateOption{ai.WithModel(a.model), ai.WithTools(a.refs...)}, opts...)
	resp, err := gk.Generate(ctx, a.g, all...)
	if err == nil && resp.FinishReason == ai.FinishReasonInterrupted {
		return resp, agent.ErrSuspended
	}
	return resp, err
}

// outcome maps a run's error: a suspension suspends, a runtime failure keeps its reason,
// Genkit's turn limit (an ABORTED error after a turn with tool calls) fails the activation as
// budget_exceeded; any other error fails it as internal_panic.
func (r *run) outcome(err error) error {
	var ae *agent.Error
	var ge *core.GenkitError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, agent.ErrSuspended):
		return agent.ErrSuspended
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &ge) && ge.Status == core.ABORTED && len(r.turns) > 0:
		return r.hc.Fail(records.ReasonBudgetExceeded, "the Genkit loop reached its turn limit")
	}
	return fmt.Errorf("genkit run: %w", err)
}

// generate is the model: Context.Chat with the requested tools' runtime declarations.
func (a *Agent) generate(ctx context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
	r, err := from(ctx)
	if err != nil {
		return nil, err
	}
	var decls []agent.ToolDecl
	for _, t := range req.Tools {
		if a.byNm[t.Name] == nil {
			return nil, r.hc.Fail(records.ReasonInternalPanic, "genkit adapter: tool %q has no runtime declaration", t.Name)
		}
	}
	for _, s := range a.tools {
		if slices.ContainsFunc(req.Tools, func(t *ai.ToolDefinition) bool { return t.Name == s.Decl.Name }) {
			decls = append(decls, s.Decl)
		}
	}
	msgs, err := r.toRuntime(req.Messages)
	if err != nil {
		return nil, r.hc.Fail(records.ReasonInternalPanic, "genkit adapter: %v", err)
	}
	pos := r.hc.Position()
	t, err := r.hc.Chat(agent.Chat{Messages: msgs, Tools: decls})
	if err != nil {
		return nil, err
	}
	msg := &ai.Message{Role: ai.RoleModel}
	if t.Text != "" {
		msg.Content = append(msg.Content, ai.NewTextPart(t.Text))
	}
	if len(t.Calls) > 0 {
		tn := &turn{calls: slices.Clone(t.Calls), raw: t.Message().ToolCalls, claimed: make([]bool, len(t.Calls))}
		for i := range tn.calls {
			if tn.calls[i].ID == "" {
				// Genkit would draw a random UUID for the call: the id reaches the next request.
				id := "call_" + strconv.Itoa(pos) + "_" + strconv.Itoa(i)
				tn.calls[i].ID, tn.raw[i].ID = id, id
			}
			var input map[string]any
			if err := json.Unmarshal([]byte(tn.calls[i].ArgsJSON), &input); err != nil {
				return nil, r.hc.Fail(records.ReasonInternalPanic, "genkit adapter: canonical arguments: %v", err)
			}
			msg.Content = append(msg.Content, ai.NewToolRequestPart(&ai.ToolRequest{Name: tn.calls[i].Tool, Ref: tn.calls[i].ID, Input: input}))
		}
		r.mu.Lock()
		r.turns = append(r.turns, tn)
		r.mu.Unlock()
	}
	return &ai.ModelResponse{Message: msg, FinishReason: ai.FinishReasonStop, Request: req}, nil
}

// toRuntime converts Genkit's history to the runtime's messages. A model message's tool
// requests and the tool message after it are this run's turns: their calls are sent as the
// model made them, their answers in call order from the turn's outcomes.
func (r *run) toRuntime(in []*ai.Message) ([]model.Message, error) {
	out := make([]model.Message, 0, len(in))
	k := 0 // the next turn with tool calls
	for i, m := range in {
		if m == nil {
			return nil, fmt.Errorf("message %d is nil", i)
		}
		text, reqs, resps := "", 0, 0
		for _, p := range m.Content {
			switch {
			case p.IsText():
				text += p.Text
			case p.IsToolRequest():
				reqs++
			case p.IsToolResponse():
				resps++
			default:
				return nil, fmt.Errorf("message %d has a part of kind %d, which the runtime does not send", i, p.Kind)
			}
		}
		switch m.Role {
		case ai.RoleSystem:
			out = append(out, model.Message{Role: model.RoleSystem, Content: text})
		case ai.RoleUser:
			out = append(out, model.Message{Role: model.RoleUser, Content: text})
		case ai.RoleModel:
			am := model.Message{Role: model.RoleAssistant, Content: text}
			if reqs > 0 {
				t, err := r.turnOf(k, m)
				if err != nil {
					return nil, fmt.Errorf("message %d: %w", i, err)
				}
				am.ToolCalls = t.raw
				k++
			}
			out = append(out, am)
		case ai.RoleTool:
			if k == 0 || resps == 0 {
				return nil, fmt.Errorf("message %d: a tool message that answers no turn", i)
			}
			t := r.turns[k-1]
			for j, c := range t.calls {
				if !slices.ContainsFunc(m.Content, func(p *ai.Part) bool { return p.IsToolResponse() && p.ToolResponse.Ref == c.ID }) {
					return nil, fmt.Errorf("message %d answers no call %s", i, c.ID)
				}
				out = append(out, model.Message{Role: model.RoleTool, Content: t.content[j], ToolCallID: c.ID})
			}
		default:
			return nil, fmt.Errorf("message %d has role %q", i, m.Role)
		}
	}
	return out, nil
}

// turnOf returns turn k, checking that m requests its calls.
func (r *run) turnOf(k int, m *ai.Message) (*turn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if k >= len(r.turns) {
		return nil, fmt.Errorf("tool requests this run's model did not make")
	}
	t := r.turns[k]
	j := 0
	for _, p := range m.Content {
		if p.IsToolRequest() {
			if j >= len(t.calls) || p.ToolRequest.Ref != t.calls[j].ID || p.ToolRequest.Name != t.calls[j].Tool {
				return nil, fmt.Errorf("tool requests differ from the model's answer")
			}
			j++
		}
	}
	if j != len(t.calls) || t.content == nil || t.err != nil {
		return nil, fmt.Errorf("tool requests differ from the model's answer, or were not answered")
	}
	return t, nil
}

// run is a tool call as Genkit starts it: the turn's calls run once, in order, and the call
// takes the outcome of the first unclaimed call of the same tool and arguments.
func (s *spec) run(tc *ai.ToolContext, input any) (string, error) {
	r, err := from(tc)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(input)
	if err != nil {
		return "", r.hc.Fail(records.ReasonProposalRefused, "arguments of %s: %v", s.Decl.Name, err)
	}
	adm, err := s.adm.Admit(slices.Concat([]byte(`{"fields":`), b, []byte(`}`)))
	if err != nil {
		return "", r.hc.Fail(records.ReasonProposalRefused, "arguments of %s reached the tool unadmitted: %v", s.Decl.Name, err)
	}
	args := string(adm.Value.FieldsJSON())
	r.mu.Lock()
	var t *turn
	if n := len(r.turns); n > 0 {
		t = r.turns[n-1]
	}
	r.mu.Unlock()
	if t == nil {
		return "", r.hc.Fail(records.ReasonInternalPanic, "genkit adapter: a tool call before any model turn")
	}
	t.once.Do(func() { r.answer(t) })
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, c := range t.calls {
		if !t.claimed[i] && c.Tool == s.Decl.Name && c.ArgsJSON == args {
			t.claimed[i] = true
			switch {
			case errors.Is(t.err, agent.ErrSuspended):
				// Genkit's own interrupt ends its loop: the activation suspends.
				return "", tc.Interrupt(&ai.InterruptOptions{Metadata: map[string]any{"beamagents": "suspended"}})
			case t.err != nil:
				return "", t.err
			}
			return t.content[i], nil
		}
	}
	return "", r.hc.Fail(records.ReasonProposalRefused, "genkit adapter: a call of %s that the model's turn does not hold", s.Decl.Name)
}

// answer runs a turn's calls in call order, as the native RunTools does, or call by call
// when a gate asks for an approval.
func (r *run) answer(t *turn) {
	hc := r.hc
	specs := make([]*spec, len(t.calls))
	gated := false
	for i, c := range t.calls {
		specs[i] = r.a.byNm[c.Tool] // the model's admission refused every undeclared tool
		if g := specs[i].Gate; g != nil && (g.Needed == nil || g.Needed(hc, c.ArgsJSON)) {
			gated = true
		}
	}
	content := make([]string, len(t.calls))
	defer func() {
		r.mu.Lock()
		t.content = content
		r.mu.Unlock()
	}()
	var calls []agent.ToolCall
	var at []int
	for i, c := range t.calls {
		s := specs[i]
		switch {
		case s.Decl.Inline != nil:
			out, err := hc.Inline(c.Tool, []byte(c.ArgsJSON), s.Decl.Inline)
			if ie, ok := err.(*agent.InlineError); ok {
				content[i] = "error: " + ie.Message
			} else if err != nil {
				t.err = err
				return
			} else {
				content[i] = string(out)
			}
		case gated && s.Gate != nil:
			res, approved, err := hc.Approved(c.Tool, c.ArgsJSON)
			if err != nil {
				t.err = err
				return
			}
			content[i] = s.Gate.denied()
			if approved {
				content[i] = resultContent(res)
			}
		case gated:
			res, err := hc.Tool(c.Tool, c.ArgsJSON)
			if err != nil {
				t.err = err
				return
			}
			content[i] = resultContent(res)
		default:
			calls, at = append(calls, agent.ToolCall{Tool: c.Tool, ArgsJSON: c.ArgsJSON}), append(at, i)
		}
	}
	if len(calls) > 0 {
		results, err := hc.Tools(calls...)
		if err != nil {
			t.err = err
			return
		}
		for k, res := range results {
			content[at[k]] = resultContent(res)
		}
	}
}

func (g *Gate) denied() string {
	if g.Denied == "" {
		return Rejected
	}
	return g.Denied
}

// resultContent renders a tool result for the model as a native handler's RunTools does: its
// payload when OK, else its status and error message.
func resultContent(res *pb.ToolResult) string {
	if res.GetStatus() == pb.ToolResult_OK {
		return string(res.GetPayload())
	}
	return res.GetStatus().String() + ": " + res.GetErrorMessage()
}
