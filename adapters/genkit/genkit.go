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
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/records"
)

// ModelName is the Genkit name of the model the runtime answers.
const ModelName = "beamagents/runtime"

// Agent is a Genkit instance whose model and tools the runtime answers.
type Agent struct {
	g     *gk.Genkit
	model ai.Model
	refs  []ai.ToolRef
	decls []agent.ToolDecl // in declaration order
	runs  sync.Map         // *agent.Context → *run, while its handler runs
}

// New builds the Genkit instance of the tools decls (each answered as a native handler's
// call: inline, side-effecting, or gated by its NeedsApproval). Genkit's Init registers a
// process-wide handler of SIGINT and SIGTERM (docs/adapters.md).
func New(ctx context.Context, decls ...agent.ToolDecl) (*Agent, error) {
	a := &Agent{g: gk.Init(ctx)}
	for _, d := range decls {
		if d.Name == "" || d.Args == nil || slices.ContainsFunc(a.decls, func(o agent.ToolDecl) bool { return o.Name == d.Name }) {
			return nil, fmt.Errorf("genkit adapter: tool %q needs a unique name and an argument schema", d.Name)
		}
		params, err := provider.ToolParameters(provider.OpenAIStrict, d.Args.ModelJSONSchema())
		if err != nil {
			return nil, fmt.Errorf("genkit adapter: tool %s: %w", d.Name, err)
		}
		var input map[string]any
		if err := json.Unmarshal(params, &input); err != nil {
			return nil, fmt.Errorf("genkit adapter: tool %s: %w", d.Name, err)
		}
		a.decls = append(a.decls, d)
		a.refs = append(a.refs, gk.DefineTool(a.g, d.Name, d.Description, a.tool(d), ai.WithInputSchema(input)))
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

// ErrUnbound is returned by the model or a tool called outside a handler run.
var ErrUnbound = errors.New("genkit adapter: called outside a handler run (no agent.Context in the Go context)")

// run is one handler run's state: the Context and the model's turns in order. mu guards the
// turns and every use of the Context by a tool, which Genkit calls concurrently.
type run struct {
	hc    *agent.Context
	mu    sync.Mutex
	turns []*turn
}

// turn is one model answer with tool calls and, once its first tool started, their tool
// messages (or the failure or suspension that stopped them).
type turn struct {
	calls    []agent.ToolCall
	raw      []model.ToolCall
	answered bool
	msgs     []model.Message
	err      error
	claimed  []bool
}

// from finds the run of the handler whose Context ctx carries (agent.FromContext).
func (a *Agent) from(ctx context.Context) (*run, error) {
	if hc, ok := agent.FromContext(ctx); ok {
		if r, ok := a.runs.Load(hc); ok {
			return r.(*run), nil
		}
	}
	return nil, ErrUnbound
}

// Handler returns an agent.Handler whose body is run with the run's Go context
// (agent.Context.Context); its error is mapped as outcome does.
func (a *Agent) Handler(body func(ctx context.Context, hc *agent.Context, tr agent.Trigger) error) agent.Handler {
	return func(hc *agent.Context, tr agent.Trigger) error {
		r := &run{hc: hc}
		a.runs.Store(hc, r)
		defer a.runs.Delete(hc)
		return r.outcome(body(hc.Context(), hc, tr))
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

// outcome maps a run's error (agent.Outcome), with Genkit's turn limit (an ABORTED error
// after a turn with tool calls) failing the activation as budget_exceeded.
func (r *run) outcome(err error) error {
	err, foreign := agent.Outcome(err)
	var ge *core.GenkitError
	if foreign && errors.As(err, &ge) && ge.Status == core.ABORTED && len(r.turns) > 0 {
		return r.hc.Fail(records.ReasonBudgetExceeded, "the Genkit loop reached its turn limit")
	}
	return err
}

// generate is the model: Context.Chat with the requested tools' runtime declarations.
func (a *Agent) generate(ctx context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
	r, err := a.from(ctx)
	if err != nil {
		return nil, err
	}
	var decls []agent.ToolDecl
	for _, t := range req.Tools {
		if !slices.ContainsFunc(a.decls, func(d agent.ToolDecl) bool { return d.Name == t.Name }) {
			return nil, r.hc.Fail(records.ReasonInternalPanic, "genkit adapter: tool %q has no runtime declaration", t.Name)
		}
	}
	for _, d := range a.decls {
		if slices.ContainsFunc(req.Tools, func(t *ai.ToolDefinition) bool { return t.Name == d.Name }) {
			decls = append(decls, d)
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
		tn := &turn{calls: slices.Clone(t.Calls), raw: slices.Clone(t.Message().ToolCalls), claimed: make([]bool, len(t.Calls))}
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
			for _, c := range t.calls {
				if !slices.ContainsFunc(m.Content, func(p *ai.Part) bool { return p.IsToolResponse() && p.ToolResponse.Ref == c.ID }) {
					return nil, fmt.Errorf("message %d answers no call %s", i, c.ID)
				}
			}
			out = append(out, t.msgs...)
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
	if j != len(t.calls) || !t.answered || t.err != nil {
		return nil, fmt.Errorf("tool requests differ from the model's answer, or were not answered")
	}
	return t, nil
}

// tool is decl's Genkit tool function: a call as Genkit starts it. The turn's calls run once,
// in order, and the call takes the outcome of the first unclaimed call of the same tool and
// arguments.
func (a *Agent) tool(decl agent.ToolDecl) func(*ai.ToolContext, any) (string, error) {
	return func(tc *ai.ToolContext, input any) (string, error) {
		r, err := a.from(tc)
		if err != nil {
			return "", err
		}
		b, err := json.Marshal(input)
		if err != nil {
			return "", r.hc.Fail(records.ReasonProposalRefused, "arguments of %s: %v", decl.Name, err)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		call, err := r.hc.AdmitCall(decl, "", string(b))
		if err != nil {
			return "", err
		}
		if len(r.turns) == 0 {
			return "", r.hc.Fail(records.ReasonInternalPanic, "genkit adapter: a tool call before any model turn")
		}
		t := r.turns[len(r.turns)-1]
		if !t.answered {
			t.msgs, t.err = r.hc.RunCalls(a.decls, t.calls...)
			t.answered = true
		}
		for i, c := range t.calls {
			if t.claimed[i] || c.Tool != decl.Name || c.ArgsJSON != call.ArgsJSON {
				continue
			}
			t.claimed[i] = true
			switch {
			case errors.Is(t.err, agent.ErrSuspended):
				// Genkit's own interrupt ends its loop: the activation suspends.
				return "", tc.Interrupt(&ai.InterruptOptions{Metadata: map[string]any{"beamagents": "suspended"}})
			case t.err != nil:
				return "", t.err
			}
			return t.msgs[i].Content, nil
		}
		return "", r.hc.Fail(records.ReasonProposalRefused, "genkit adapter: a call of %s that the model's turn does not hold", decl.Name)
	}
}
