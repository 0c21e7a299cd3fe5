package agent_test

import (
	"bytes"

	"errors"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"iter"
	"maps"
	"path/filepath"
	"sync"
	"testing"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/prototest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/statecodec"
)

var (
	schemaOnce sync.Once
	schema     *interaction.Schema
	schemaErr  error
)

// testSchema compiles testdata/proto/assist.proto once.
func testSchema(tb testing.TB) *interaction.Schema {
	tb.Helper()
	schemaOnce.Do(func() {
		files := prototest.CompileDir(tb, filepath.Join("testdata", "proto"), "assist.proto")
		schema, schemaErr = interaction.Compile(prototest.Message(tb, files, "assist.v1.Proposal"))
	})
	if schemaErr != nil {
		tb.Fatal(schemaErr)
	}
	return schema
}

func testBindings() map[string]agent.Action {
	return map[string]agent.Action{
		"assist.reply":  agent.Final(),
		"assist.lookup": agent.Tool("lookup_order"),
		"assist.refund": agent.Approval("refund"),
		"assist.note":   agent.Remember("assist.note.key", "assist.note.value"),
		"tool":          agent.Final(),
	}
}

func newTestAgent(tb testing.TB, m model.Model, l agentLimits, panicPrompt bool) *agent.Agent {
	tb.Helper()
	def := agent.Definition{
		Name:     "assist",
		Schema:   testSchema(tb),
		Model:    m,
		ModelID:  "scripted-1",
		Bindings: testBindings(),
		Limits: agent.Limits{
			MaxSteps: l.MaxSteps, MaxModelCalls: l.MaxModelCalls, MaxInbox: l.MaxInbox, MaxFinalBytes: l.MaxFinalBytes,
			MaxEscalations: l.MaxEscalations, ToolTimeoutMs: l.ToolTimeoutMs, ApprovalTimeoutMs: l.ApprovalTimeoutMs,
			IdleTTLMs: l.IdleTTLMs,
			Memory:    statecodec.MemoryOptions{MaxValueBytes: 1024},
		},
	}
	if panicPrompt {
		def.Prompt = func(*agent.PromptInput) []model.Message { panic("prompt builder bug") }
	}
	a, err := agent.New(def)
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
