package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/beamagents/beamagents/agent/burst"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/negotiate"
	"github.com/beamagents/beamagents/records"
)

// Handler is an agent written as Go code: it runs once per activation attempt, from the top,
// over a Context and the activation's trigger. Every effect and every source of variation
// goes through the Context, whose operations are journaled: when the activation resumes (a
// tool result, an approval), the handler runs again and each operation already completed
// returns its recorded result without effects. A handler must therefore be deterministic
// given the results its operations return: no clock but Trigger.EventTimeMs, no randomness,
// no map iteration order reaching an operation, no I/O but inline tools (docs/agents.md).
//
// The handler returns nil to end the activation (with the reply of Context.Reply, if any), an
// error to fail it (Context.Fail chooses the reason; any other error fails it as
// internal_panic), or whatever an operation returned after it suspended (ErrSuspended).
type Handler func(hc *Context, trigger Trigger) error

// Trigger is the external event that started the activation, or the burst of them.
type Trigger struct {
	EntityKey []byte
	Seq       int64
	// EventTimeMs is the event's time: the only clock a handler may read.
	EventTimeMs int64
	// Event is the external event's opaque bytes; of a burst activation (Definition.Burst),
	// its events' bytes joined by burst.Separator.
	Event []byte
	// Batch holds the events of a burst activation in processing order, the first at
	// EventTimeMs; nil when the activation has one event. Events lists them either way.
	Batch []burst.Event
}

// ErrSuspended is returned by an operation that suspended the activation (a tool call, an
// approval, a timer or a signal whose answer is not in the journal yet) and by every
// operation after it. The
// handler should return it; whatever it returns, the activation suspends.
var ErrSuspended = errors.New("agent: the activation suspends until its intents are answered")

// ErrReplied is returned by an operation after Context.Reply: the reply ends the activation.
var ErrReplied = errors.New("agent: the activation has replied")

// Context is a handler's access to the runtime during one run. It is valid only during the
// run and not safe for concurrent use.
type Context struct {
	act     *activation
	j       *pb.HandlerJournal
	pos     int
	trigger Trigger
	// fresh are the intents the suspending operation emitted; failure is sticky (a
	// nondeterministic replay, an exhausted budget): the activation fails with it whatever
	// the handler does next.
	fresh   []*pb.ToolIntent
	failure error
	final   *pb.FinalReply
	// wait is the durable wait the run suspends on (a timer, a signal, ToolsBy's deadline).
	wait *wait
	ctx  context.Context // Context's, built once
}

// Context returns the activation's Go context (cancellation only; never a clock), which
// carries hc: FromContext finds it there.
func (hc *Context) Context() context.Context {
	if hc.ctx == nil {
		base := hc.act.c.ctx
		if base == nil {
			base = context.Background()
		}
		hc.ctx = context.WithValue(base, contextKey{}, hc)
	}
	return hc.ctx
}

// Trigger returns the activation's trigger.
func (hc *Context) Trigger() Trigger { return hc.trigger }

// Now returns the trigger's event time, the same on every run of the activation.
func (hc *Context) Now() int64 { return hc.trigger.EventTimeMs }

// Position returns the position the next operation takes in the journal.
func (hc *Context) Position() int { return hc.pos }

// Fail returns the error that fails the activation with reason, one of records.Reasons; another
// reason fails it as internal_panic.
func (hc *Context) Fail(reason records.Reason, format string, args ...any) error {
	if !slices.Contains(records.Reasons, reason) {
		return fail(records.ReasonInternalPanic, nil, "handler failed with reason %q, which is not in the vocabulary: %s", reason, fmt.Sprintf(format, args...))
	}
	return fail(reason, nil, format, args...)
}

// Reply sets the activation's final reply to text: a FinalReply whose message is text and
// whose action is {"kind":"final","message":text}, bounded by Limits.MaxFinalBytes. The
// activation ends when the handler returns.
func (hc *Context) Reply(text string) error {
	return hc.reply(text, "", "")
}

// ReplyValue replies with an admitted value: its canonical document, case and schema digest,
// exactly as a bindings agent's final reply.
func (hc *Context) ReplyValue(v *interaction.Value, schema *interaction.Schema) error {
	digest := ""
	if schema != nil {
		digest = schema.Digest()
	}
	return hc.reply(v.CanonicalString(), v.CaseID(), digest)
}

func (hc *Context) reply(doc, caseID, digest string) error {
	if err := hc.usable(); err != nil {
		return err
	}
	act := hc.act
	action := renderFinal(doc)
	if max := act.c.a.limits.MaxFinalBytes; len(action) > max {
		hc.failure = fail(records.ReasonFinalTooLarge, nil, "final action is %d bytes after escaping, bound %d", len(action), max)
		return hc.failure
	}
	hc.final = &pb.FinalReply{
		EntityKey:    act.c.entity,
		Seq:          act.seq,
		StepIndex:    hc.lastPos(),
		CaseId:       caseID,
		SchemaDigest: digest,
		Message:      doc,
		ActionJson:   string(action),
		TraceId:      act.tr.id,
		CreatedAtMs:  act.c.now,
	}
	return nil
}

// lastPos is the position of the run's last operation (0 before any).
func (hc *Context) lastPos() uint32 {
	if hc.pos == 0 {
		return 0
	}
	return uint32(hc.pos - 1)
}

// usable refuses an operation after a failure, a suspension or the reply.
func (hc *Context) usable() error {
	switch {
	case hc.failure != nil:
		return hc.failure
	case hc.suspended():
		return ErrSuspended
	case hc.final != nil:
		return ErrReplied
	}
	return nil
}

// Ask is a model call whose answer is a proposal.
type Ask struct {
	Messages []model.Message
	// Schema is the proposal schema; nil selects the agent's Definition.Schema.
	Schema *interaction.Schema
}

// Propose asks the model (through the replay cache) and admits its answer by the proposal
// schema, strictly, as a bindings agent's step does: a refused answer fails the activation
// as proposal_refused.
func (hc *Context) Propose(ask Ask) (*interaction.Value, error) {
	if err := hc.usable(); err != nil {
		return nil, err
	}
	act := hc.act
	schema := ask.Schema
	if schema == nil {
		schema = act.c.a.def.Schema
	}
	if schema == nil {
		return nil, hc.fails(fail(records.ReasonInternalPanic, nil, "Propose without a schema, and the agent has none"))
	}
	u, err := act.c.a.useOf(schema)
	if err != nil {
		return nil, hc.fails(fail(records.ReasonInternalPanic, err, "proposal schema"))
	}
	req := hc.request(ask.Messages)
	req.ResponseSchema, req.SchemaDigest = u.provider, schema.Digest()
	key := model.CacheKey(req)
	e, replayed, err := hc.begin(pb.JournalEntry_PROPOSE, schema.Digest(), []byte(key))
	if err != nil {
		return nil, err
	}
	if replayed {
		out, err := u.admitter.Admit(e.GetResult())
		if err != nil {
			return nil, hc.fails(fail(records.ReasonStateCorrupt, err, "journaled proposal at %d", req.Step))
		}
		return out.Value, nil
	}
	val, err := act.admitted(req, key, u)
	if err != nil {
		return nil, hc.fails(err)
	}
	e.Result = []byte(val.CanonicalString())
	return val, nil
}

// request is the model request of the next operation: the agent's model id and sampling, and
// the activation's key, seq and the operation's position as its step.
func (hc *Context) request(msgs []model.Message) *model.Request {
	a := hc.act.c.a
	return &model.Request{
		Model:     hc.act.modelID(),
		Messages:  msgs,
		Sampling:  a.def.Sampling,
		EntityKey: hc.act.c.entity,
		Seq:       hc.act.seq,
		Step:      uint32(hc.pos),
	}
}

// fails makes err the run's failure: an operation that failed fails the activation, even if
// the handler ignores its error.
func (hc *Context) fails(err error) error {
	if hc.failure == nil {
		hc.failure = err
	}
	return hc.failure
}

// useOf returns the admission of model output by schema under the agent's output protocol,
// built once per schema.
func (a *Agent) useOf(schema *interaction.Schema) (*schemaUse, error) {
	if u, ok := a.uses.Load(schema); ok {
		return u.(*schemaUse), nil
	}
	u, err := a.newUse(schema, a.def.OutputProtocol)
	if err != nil {
		return nil, err
	}
	got, _ := a.uses.LoadOrStore(schema, u)
	return got.(*schemaUse), nil
}

// argsUseOf returns the admission of a tool's arguments: provider-style JSON canonicalized
// losslessly (integers as JSON numbers keep every digit), then strictly decoded.
func (a *Agent) argsUseOf(schema *interaction.Schema) (*schemaUse, error) {
	key := argsKey{schema}
	if u, ok := a.uses.Load(key); ok {
		return u.(*schemaUse), nil
	}
	adm, err := negotiate.NewAdmitter(schema, negotiate.Agreement{Protocol: negotiate.TransformAll})
	if err != nil {
		return nil, err
	}
	got, _ := a.uses.LoadOrStore(key, &schemaUse{schema: schema, admitter: adm, provider: schema.ModelJSONSchema()})
	return got.(*schemaUse), nil
}

// argsKey keys a tool-argument admission in Agent.uses apart from the schema's proposal one.
type argsKey struct{ s *interaction.Schema }
