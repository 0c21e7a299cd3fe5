package agent

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/beamagents/beamagents/agent/burst"
	"github.com/beamagents/beamagents/agent/internal/bind"
	"github.com/beamagents/beamagents/agent/shard"
	"github.com/beamagents/beamagents/budget"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/ledger"
	"github.com/beamagents/beamagents/ltm"
	"github.com/beamagents/beamagents/migrate"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/negotiate"
	"github.com/beamagents/beamagents/statecodec"
)

// Limits bound an activation. The zero value of each field selects its default.
type Limits struct {
	MaxModelCalls uint32 // model calls per activation (cache hits excluded); default 8
	// MaxTokens is the activation's token budget: the input and output tokens its answers
	// recorded, replay-cache hits included (the cache keeps each answer's usage); 0 means no
	// budget. An answer that takes the activation over it dead-letters as budget_exceeded.
	MaxTokens     int64
	MaxInbox      int // external events waiting while suspended; default 64
	MaxFinalBytes int // bytes of the rendered final action; default 65,536

	ToolTimeoutMs     int64  // tool deadline after suspension; default 5 minutes
	ApprovalTimeoutMs int64  // approval deadline after suspension; default 24 hours
	MaxEscalations    uint32 // deadline escalations before failing closed; default 2
	// IdleTTLMs is how long a key may stay idle (no input, not suspended) before its memory
	// and replay cache are dropped; default 30 days, negative disables. The activation
	// counter is kept forever, so intent ids never repeat.
	IdleTTLMs int64

	Memory statecodec.MemoryOptions
	Cache  statecodec.CacheOptions

	// MaxOperations bounds the operations of one handler activation (model calls, tool
	// calls, approvals, inline tools and memory operations, replayed ones included); default
	// 64. An activation that reaches it dead-letters as budget_exceeded.
	MaxOperations int
	// MaxJournalBytes bounds the journal a suspended handler activation keeps in its
	// continuation; default 65,536. A suspension over it dead-letters as journal_too_large.
	MaxJournalBytes int
	// InlineTimeoutMs is the deadline of one inline tool run; default 2,000. A run past it
	// fails and its failure is journaled as its result.
	InlineTimeoutMs int64

	// MaxRequestBytes bounds a model request's message bytes (model.RequestBytes: prompt,
	// memory and history); default 262,144. A step over it dead-letters as
	// request_too_large before any model call or cache lookup.
	MaxRequestBytes int
}

// Defaults of Limits.
const (
	defaultMaxModelCalls     = 8
	defaultMaxInbox          = 64
	defaultMaxFinalBytes     = 65536
	defaultToolTimeoutMs     = int64(5 * 60 * 1000)
	defaultApprovalTimeoutMs = int64(24 * 60 * 60 * 1000)
	defaultMaxEscalations    = 2
	defaultIdleTTLMs         = int64(30 * 24 * 60 * 60 * 1000)
	defaultMaxRequestBytes   = 256 << 10
	defaultMaxOperations     = 64
	defaultMaxJournalBytes   = 64 << 10
	defaultInlineTimeoutMs   = int64(2000)
)

func (l Limits) resolved() Limits {
	def := func(v, d int64) int64 {
		if v == 0 {
			return d
		}
		return v
	}
	if l.MaxModelCalls == 0 {
		l.MaxModelCalls = defaultMaxModelCalls
	}
	if l.MaxInbox == 0 {
		l.MaxInbox = defaultMaxInbox
	}
	if l.MaxFinalBytes == 0 {
		l.MaxFinalBytes = defaultMaxFinalBytes
	}
	if l.MaxEscalations == 0 {
		l.MaxEscalations = defaultMaxEscalations
	}
	if l.MaxRequestBytes == 0 {
		l.MaxRequestBytes = defaultMaxRequestBytes
	}
	if l.MaxOperations == 0 {
		l.MaxOperations = defaultMaxOperations
	}
	if l.MaxJournalBytes == 0 {
		l.MaxJournalBytes = defaultMaxJournalBytes
	}
	l.InlineTimeoutMs = def(l.InlineTimeoutMs, defaultInlineTimeoutMs)
	l.ToolTimeoutMs = def(l.ToolTimeoutMs, defaultToolTimeoutMs)
	l.ApprovalTimeoutMs = def(l.ApprovalTimeoutMs, defaultApprovalTimeoutMs)
	l.IdleTTLMs = def(l.IdleTTLMs, defaultIdleTTLMs)
	return l
}

// Definition describes an agent by what every agent has: a name, its Handler (the Go code the
// agent is, docs/agents.md), a model, limits, declared tools and a state schema. An agent of
// bindings, a proposal schema whose cases are bound to actions, is built from a Definition
// without a Handler by package agent/bindings.
type Definition struct {
	// Name identifies the agent in registries, traces and pipelines.
	Name string
	// Handler is the agent: a Go function over a Context and the activation's trigger, made
	// durable by the activation's journal. New requires it.
	Handler Handler
	// Schema is the compiled proposal schema: of a handler, optional, the schema of
	// Context.Propose calls that name none; of a bindings agent, the only shape its model's
	// output may take.
	Schema *interaction.Schema
	// Model answers the agent's requests. If it implements model.Streamer and Stream is set,
	// the response is streamed: under every output protocol each chunk goes through the
	// streaming admission (negotiate.Stream: canonicalized as it forms where the protocol
	// canonicalizes, verbatim otherwise, then the streaming decoder of interaction/stream)
	// and the call is cancelled at the first byte that proves the proposal wrong. A native-tool call (Context.Chat) is streamed when Model
	// implements model.ToolStreamer, each call's arguments refused at their first wrong byte
	// (docs/agents.md). Acceptance is always the same admission of the whole text.
	Model  model.Model
	Stream bool
	// ModelID is the provider's model id, part of every request and of the replay-cache key.
	ModelID  string
	Sampling model.Sampling
	// OutputProtocol is how model output is admitted (package negotiate). The zero value is
	// negotiate.TransformAll: provider-style JSON (any whitespace and key order, integers as
	// JSON numbers, no envelope) is canonicalized losslessly, then strictly decoded; anything
	// else is refused. negotiate.FailFast admits only the exact canonical value document, and
	// is the protocol under which a streaming model is refused early.
	OutputProtocol negotiate.Protocol
	// Tools declares, by tool name, the argument schema a tool accepts (Agent.ToolShapes); a
	// handler's calls of a declared tool (Context.Tools) are admitted by it. In
	// a bindings agent, each case bound to a declared tool is negotiated against it when the
	// agent is built (negotiate.CheckBinding; a FAIL_FAST agreement with a non-empty delta
	// refuses the build), and each intent's arguments cross that boundary with a conformance
	// receipt on the trace; a tool without a declaration receives the case's fields as they
	// are.
	Tools  map[string]ToolDecl
	Limits Limits
	// Burst gathers a key's external events that arrive close together in event time into one
	// activation (package agent/burst, docs/agents.md); the zero value runs every event on
	// its own.
	Burst burst.Rule
	// PinModel keeps Model when a pipeline is launched with a model of its own choosing
	// (Agent.PinsModel): for an agent that must always talk to one model.
	PinModel bool
	// StateSchema is the keyed-state schema this agent writes: every state blob is stamped
	// with its current version, and a blob of an older version is migrated through its
	// registered steps when first read. nil selects migrate.Default(), the schema of this
	// build. A build that changes the state schema registers the new version's steps here;
	// state of a newer version than StateSchema's is refused, never overwritten (see
	// docs/wire-and-state.md). Limits.Memory.Schema and Limits.Cache.Schema must be nil or
	// the same registry.
	StateSchema *migrate.Registry
	// FlushOnExpiry, when set, is the long-term memory namespace (Context.Recall) a key's
	// working memory is flushed to when the key expires idle (Limits.IdleTTLMs): every memory
	// entry is written there under its own key, stamped with the key's seq, before the memory
	// is cleared; a returning key recalls it. Empty drops the memory at expiry. A flush the
	// store refuses keeps the memory (a memory_store_failed dead letter) until the key's next
	// activation arms the expiry again. See docs/long-term-memory.md.
	FlushOnExpiry string
	// Tenant names the tenant an entity key belongs to: who pays for its model calls (the
	// cost ledger) and whose budget they spend. It must be a pure function of the key (the
	// same key always gives the same tenant, on every worker and every replay). nil puts
	// every key in the tenant "" (none).
	Tenant func(key string) string
	// Shards, above 1, spreads one entity's external events over that many sub-keys
	// (shard.Key: KEY#s0 … KEY#sN-1), each its own keyed state running apart from the others;
	// the shard of an event is a hash of its envelope's bytes (shard.Of). It is for agents that
	// keep nothing between activations: working memory, long-term memory and signal waits
	// fail a sharded activation as shard_refused, and Limits.Memory or FlushOnExpiry refuse
	// the build. Tool calls, approvals and waits work: an intent names its sub-key, which its
	// result or decision is sent back to. 0 or 1 runs each entity on one key; at most
	// shard.Max. See docs/agents.md, Hot keys.
	Shards int
	// Version names the agent's version (for example a release or a prompt revision): the
	// cost ledger and the LLM_CALL trace events carry it, so spend is told apart by version.
	// Empty (the default) leaves it out of both. At most 128 bytes of UTF-8.
	Version string
	// Budget, when set, is the agent's token budget per tenant and event-time window, and
	// the rule for the external events that come after a window's budget is spent
	// (package budget, docs/budgets.md). It needs Tenant and Limits.MaxTokens (each admitted
	// activation is granted MaxTokens of the window's tokens).
	Budget *budget.Budget
}

// maxVersionBytes bounds Definition.Version.
const maxVersionBytes = 128

// Agent is a validated Definition, ready to activate. It is immutable and safe for concurrent
// use.
type Agent struct {
	def    Definition
	limits Limits
	use    *schemaUse        // the proposal schema's admission; nil for a handler without one
	uses   *sync.Map         // *interaction.Schema → *schemaUse, for a handler's other schemas
	schema *migrate.Registry // the state schema: def.StateSchema or the default
	// handler is the agent's code, def.Handler; kind is what its kind's suspensions, tools
	// and rebuilding are (a handler's, or a bindings agent's, whose handler is the runtime's
	// own and whose suspensions keep their journal as an AgentResume).
	handler Handler
	kind    bind.Kind
	// canary, when set, routes a slice of the keys to another agent (withCanary).
	canary *route
}

// schemaUse is how model output is admitted by one schema: its admitter, its provider
// projection (computed once) and whether a streamed answer is admitted push-style.
type schemaUse struct {
	schema   *interaction.Schema
	admitter *negotiate.Admitter
	provider []byte
	streams  bool
}

// New validates a handler agent's def: a name, a Handler, declared tool names every provider
// can be sent (errors.Is model.ErrToolName), the state schema, and the proposal schema's
// admission when it has one.
func New(def Definition) (*Agent, error) {
	return build(def, newHandlerKind(def, def.Limits.resolved()), func() ([]string, error) {
		if def.Handler == nil {
			return nil, defErr("agent %s has no handler (an agent of bindings is built by package agent/bindings)", def.Name)
		}
		return nil, nil
	})
}

func init() {
	bind.Build = func(def any, k bind.Kind, check func() ([]string, error)) (any, error) {
		return build(def.(Definition), k, check)
	}
	bind.RunOf = func(hc any) bind.Run { return bindRun{hc.(*Context)} }
}

// build validates def as an agent of kind k: what every agent needs (a name, declared tool
// names), then check's refusal, then check's problems with the state schema's, then the
// proposal schema's admission when it has one.
func build(def Definition, k bind.Kind, check func() ([]string, error)) (*Agent, error) {
	if err := named(def); err != nil {
		return nil, err
	}
	if err := def.Burst.Check(); err != nil {
		return nil, defErr("agent %s: %v", def.Name, err)
	}
	problems, refusal := check()
	if refusal != nil {
		return nil, refusal
	}
	problems = append(problems, budgetProblems(def)...)
	schema, schemaProblems := stateSchema(def)
	problems = append(append(problems, schemaProblems...), shardProblems(def)...)
	if len(problems) > 0 {
		slices.Sort(problems)
		return nil, defErr("agent %s: %s", def.Name, strings.Join(problems, "; "))
	}
	a := &Agent{def: def, limits: def.Limits.resolved(), schema: schema, uses: &sync.Map{}, handler: def.Handler, kind: k}
	a.limits.Memory.Schema, a.limits.Cache.Schema = schema, schema
	if def.Schema != nil {
		u, err := a.newUse(def.Schema, def.OutputProtocol)
		if err != nil {
			return nil, err
		}
		a.use = u
		a.uses.Store(def.Schema, u)
	}
	return a, nil
}

// named checks what every definition needs before anything else: a name, and declared tool
// names every provider can carry.
func named(def Definition) error {
	if def.Name == "" {
		return defErr("agent has no name")
	}
	if ns := def.FlushOnExpiry; len(ns) > ltm.MaxNamespaceBytes || !utf8.ValidString(ns) {
		return defErr("agent %s: FlushOnExpiry is not a long-term memory namespace (UTF-8, at most %d bytes)", def.Name, ltm.MaxNamespaceBytes)
	}
	if v := def.Version; len(v) > maxVersionBytes || !utf8.ValidString(v) {
		return defErr("agent %s: Version is not at most %d bytes of UTF-8", def.Name, maxVersionBytes)
	}
	return declaredToolNames(def)
}

// stateSchema resolves def's state schema and checks the cells' schemas agree with it.
func stateSchema(def Definition) (*migrate.Registry, []string) {
	schema := def.StateSchema
	if schema == nil {
		schema = migrate.Default()
	}
	var problems []string
	for name, s := range map[string]*migrate.Registry{"Limits.Memory.Schema": def.Limits.Memory.Schema, "Limits.Cache.Schema": def.Limits.Cache.Schema} {
		if s != nil && s != schema {
			problems = append(problems, name+" differs from StateSchema")
		}
	}
	slices.Sort(problems)
	return schema, problems
}

// newUse builds the admission of model output by schema under protocol.
func (a *Agent) newUse(schema *interaction.Schema, protocol negotiate.Protocol) (*schemaUse, error) {
	if protocol == negotiate.NoProtocol {
		protocol = negotiate.TransformAll
	}
	adm, err := negotiate.NewAdmitter(schema, negotiate.Agreement{Protocol: protocol})
	if err != nil {
		return nil, defErr("agent %s: model output admission: %v", a.def.Name, err)
	}
	u := &schemaUse{schema: schema, admitter: adm, provider: schema.ProviderJSONSchema()}
	// A streamed answer is admitted push-style by the same admitter, so it is refused at the
	// first byte that proves it wrong.
	if _, streams := a.def.Model.(model.Streamer); a.def.Stream && streams {
		if err := adm.Streamable(); err != nil {
			return nil, defErr("agent %s: streaming decoder: %v", a.def.Name, err)
		}
		u.streams = true
	}
	return u, nil
}

// WithModel returns the agent answered by m instead of its own model; everything else
// (schema, prompt, bindings, limits) stays. id, when not empty, becomes the model id, which is
// part of every request and replay-cache key; stream says whether m's answers are streamed
// (when m streams). It is the only way to change an agent's model: a launcher choosing a
// run's model (leaving an agent that PinsModel as it is), and offline replay answering from
// recorded caches under the recorded model id (id empty).
func (a *Agent) WithModel(m model.Model, id string, stream bool) (*Agent, error) {
	def := a.def
	def.Model, def.Stream = m, stream
	if id != "" {
		def.ModelID = id
	}
	b, err := a.kind.Rebuild(def)
	if err != nil {
		return nil, err
	}
	if a.canary == nil {
		return b.(*Agent), nil
	}
	// A canary's candidate is answered by the same model, unless it pins its own.
	cand := a.canary.candidate
	if !cand.PinsModel() {
		if cand, err = cand.WithModel(m, id, stream); err != nil {
			return nil, err
		}
	}
	return b.(*Agent).withCanary(cand, a.canary.slice)
}

// FlushesOnExpiry reports whether the agent flushes an expiring key's memory to the
// long-term store (Definition.FlushOnExpiry): its idle expiry then has an effect, which a
// shell that skips work changing no output must not skip.
func (a *Agent) FlushesOnExpiry() bool { return a.def.FlushOnExpiry != "" }

// Tenant returns the tenant of an entity key (Definition.Tenant), "" when the agent
// declares none.
func (a *Agent) Tenant(key string) string {
	if a.def.Tenant == nil {
		return ""
	}
	if entity, _, ok := shard.Split([]byte(key), a.def.Shards); ok {
		key = string(entity) // a sub-key's tenant is its entity's
	}
	return a.def.Tenant(key)
}

// Admission returns the admission of the agent's external events against its tenant
// budget (Definition.Budget), nil when it declares none. prices is the launch's price
// table, which a cost budget's grants are reserved at (budget.NewAdmission): a cost budget
// it cannot price is an error matching budget.ErrCostBudget.
func (a *Agent) Admission(prices ledger.Table) (*budget.Admission, error) {
	if a.def.Budget == nil {
		return nil, nil
	}
	return budget.NewAdmission(*a.def.Budget, a.limits.MaxTokens, prices)
}

// PinsModel reports whether the definition pins its model (Definition.PinModel): a launcher
// with a model of its own choosing leaves the agent's.
func (a *Agent) PinsModel() bool { return a.def.PinModel }

// Name returns the agent's name.
func (a *Agent) Name() string { return a.def.Name }

// Schema returns the agent's proposal schema.
func (a *Agent) Schema() *interaction.Schema { return a.def.Schema }

// EmitsIntents reports whether the agent's activations may emit intents, which need a
// keyring to be signed: a handler's may (it decides in code), a bindings agent's when a case is
// bound to a tool or an approval.
func (a *Agent) EmitsIntents() bool { return a.kind.EmitsIntents() }

// HasModel reports whether the agent has a model of its own (Definition.Model): a launcher
// that chooses none refuses to run an agent that asks a model and has none.
func (a *Agent) HasModel() bool { return a.def.Model != nil }

// Limits returns the agent's resolved limits.
func (a *Agent) Limits() Limits { return a.limits }

// ErrDefinition matches every error New returns.
var ErrDefinition = &DefinitionError{}

// DefinitionError is an invalid agent definition, found before anything runs. Err, when set,
// is the typed error of the part found invalid (a model.Error of model.CodeToolName for tool
// names no provider can carry).
type DefinitionError struct {
	Detail string
	Err    error
}

func (e *DefinitionError) Error() string { return "agent definition: " + e.Detail }

// Unwrap returns the typed cause, if any.
func (e *DefinitionError) Unwrap() error { return e.Err }

// declaredToolNames checks the names of def.Tools as the providers will be sent them
// (provider.NewToolNames): a name no provider can carry, or two names sent as one, would fail
// every model call that declares them, so the agent is refused when it is built.
func declaredToolNames(def Definition) error {
	names := slices.Sorted(maps.Keys(def.Tools))
	if _, err := provider.NewToolNames(names); err != nil {
		return &DefinitionError{Detail: fmt.Sprintf("agent %s: %v", def.Name, err), Err: err}
	}
	return nil
}

// Is matches any *DefinitionError.
func (e *DefinitionError) Is(target error) bool {
	_, ok := target.(*DefinitionError)
	return ok
}

func defErr(format string, args ...any) error {
	return &DefinitionError{Detail: fmt.Sprintf(format, args...)}
}
