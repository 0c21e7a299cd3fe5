package agent_test

import (
	"bytes"
	"errors"
	"iter"
	"maps"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/budget"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
	"github.com/beamagents/beamagents/internal/testkit/testschema"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/negotiate"
	"github.com/beamagents/beamagents/statecodec"
)

var (
	schemaOnce           sync.Once
	schema, lookupSchema *interaction.Schema
	schemaErr            error
)

// testSchema compiles testdata/proto/assist.proto once: the proposal schema.
func testSchema(tb testing.TB) *interaction.Schema {
	tb.Helper()
	compileAssist(tb)
	return schema
}

// lookupArgsSchema is the declared argument schema of the lookup_order tool.
func lookupArgsSchema(tb testing.TB) *interaction.Schema {
	tb.Helper()
	compileAssist(tb)
	return lookupSchema
}

func compileAssist(tb testing.TB) {
	schemaOnce.Do(func() {
		files := prototest.CompileDir(tb, filepath.Join("testdata", "proto"), "assist.proto")
		if schema, schemaErr = interaction.Compile(prototest.Message(tb, files, "assist.v1.Proposal")); schemaErr == nil {
			lookupSchema, schemaErr = interaction.Compile(prototest.Message(tb, files, "assist.v1.LookupOrderArgs"))
		}
	})
	if schemaErr != nil {
		tb.Fatal(schemaErr)
	}
}

func testBindings() map[string]bindings.Action {
	return map[string]bindings.Action{
		"assist.reply":  bindings.Final(),
		"assist.lookup": bindings.Tool("lookup_order"),
		"assist.refund": bindings.Approval("refund"),
		"assist.note":   bindings.Remember("assist.note.key", "assist.note.value"),
		"tool":          bindings.Final(),
	}
}

func newTestAgent(tb testing.TB, m model.Model, l agentLimits, panicPrompt bool) *agent.Agent {
	tb.Helper()
	return newTestAgentWith(tb, m, &scenario{Limits: l, PanicPrompt: panicPrompt})
}

// newTestAgentWith builds the test agent with a scenario's limits, output protocol and tool
// declarations.
func newTestAgentWith(tb testing.TB, m model.Model, sc *scenario) *agent.Agent {
	tb.Helper()
	l, panicPrompt := sc.Limits, sc.PanicPrompt
	def := bindings.Definition{Bindings: testBindings(), MaxSteps: l.MaxSteps}
	def.Definition = agent.Definition{
		Name:    "assist",
		Schema:  testSchema(tb),
		Model:   m,
		ModelID: "scripted-1",
		Limits: agent.Limits{
			MaxModelCalls: l.MaxModelCalls, MaxInbox: l.MaxInbox, MaxFinalBytes: l.MaxFinalBytes,
			MaxEscalations: l.MaxEscalations, ToolTimeoutMs: l.ToolTimeoutMs, ApprovalTimeoutMs: l.ApprovalTimeoutMs,
			IdleTTLMs: l.IdleTTLMs, MaxRequestBytes: l.MaxRequestBytes, MaxTokens: l.MaxTokens,
			MaxJournalBytes: l.MaxJournalBytes, MaxOperations: l.MaxOperations,
			Memory: statecodec.MemoryOptions{MaxValueBytes: 1024},
		},
	}
	if sc.TenantBudget > 0 {
		def.Tenant = func(string) string { return "acme" }
		def.Budget = &budget.Budget{Tokens: sc.TenantBudget, Per: time.Hour}
	}
	if panicPrompt {
		def.Prompt = func(*bindings.PromptInput) []model.Message { panic("prompt builder bug") }
	}
	if sc.Protocol != "" {
		p, err := negotiate.ParseProtocol(sc.Protocol)
		if err != nil {
			tb.Fatal(err)
		}
		def.OutputProtocol = p
	}
	def.Stream = sc.Stream
	if def.Shards = sc.Shards; sc.Shards > 1 {
		def.Limits.Memory = statecodec.MemoryOptions{}
	}
	switch sc.StateSchema {
	case "":
	case "v2":
		def.StateSchema = testschema.V2()
	default:
		tb.Fatalf("unknown state schema %q", sc.StateSchema)
	}
	if sc.ToolArgs {
		def.Tools = map[string]agent.ToolDecl{"lookup_order": {Args: lookupArgsSchema(tb), Agreement: negotiate.Agreement{
			Protocol: negotiate.TransformAll,
			Moves:    map[string]string{"assist.lookup.order_id": "tools.lookup_order.order_id"},
		}}}
	}
	if sc.Handler != "" {
		make, ok := testHandlers[sc.Handler]
		if !ok {
			tb.Fatalf("unknown handler %q", sc.Handler)
		}
		def.Handler = make(tb)
		a, err := agent.New(def.Definition)
		if err != nil {
			tb.Fatal(err)
		}
		return a
	}
	a, err := bindings.New(def)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

func testKeyring(tb testing.TB) *intent.Keyring {
	tb.Helper()
	kr, err := intent.NewKeyring("test-1", map[string][]byte{"test-1": bytes.Repeat([]byte{0x5a}, 32)})
	if err != nil {
		tb.Fatal(err)
	}
	return kr
}

func errorsAs(err error, target **agent.Error) bool { return errors.As(err, target) }

func mapKeys[K comparable, V any](m map[K]V) iter.Seq[K] { return maps.Keys(m) }

func protojsonUnmarshal(b []byte, m proto.Message) error { return protojson.Unmarshal(b, m) }

// replyHi is a model answer of the test schema (testSchema): the reply "hi", as a document
// line.
func replyHi(t *testing.T) string {
	t.Helper()
	return `{"schema":"beam_agents.interaction-value.v1","root_type_id":"assist.proposal","schema_digest":"` + testSchema(t).Digest() +
		`","value":{"case":"assist.reply","fields":{"assist.reply.text":"hi"}}}` + "\n"
}
