package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/tracing"
)

// A model call's LLM_CALL event names who pays for it, the key's tenant and the agent's
// version, only when the agent declares them: an agent without them traces as before.
func TestLLMCallNamesPayer(t *testing.T) {
	text := replyHi(t)
	m := fixedModel{resp: &model.Response{Text: []byte(text), Usage: model.Usage{InputTokens: 3, OutputTokens: 4}}}
	tenant := func(key string) string { return strings.TrimSuffix(key, "-1") }
	for _, tc := range []struct {
		name         string
		tenant       func(string) string
		version      string
		wantT, wantV string
		hasT         bool
		hasV         bool
	}{
		{name: "neither"},
		{name: "both", tenant: tenant, version: "2026-12", wantT: "acme", wantV: "2026-12", hasT: true, hasV: true},
		{name: "tenant none for the key", tenant: func(string) string { return "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := bindings.New(bindings.Definition{Bindings: testBindings(), Definition: agent.Definition{
				Name: "assist", Schema: testSchema(t), Model: m, ModelID: "scripted-1", Tenant: tc.tenant, Version: tc.version}})
			if err != nil {
				t.Fatal(err)
			}
			env := &pb.AgentEnvelope{EntityKey: []byte("acme-1"), EventTimeMs: 1_000_000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("hi")}}
			res, err := host.Activate(context.Background(), a, host.MapStore{}, env, host.Deps{AllowUnsigned: true})
			if err != nil {
				t.Fatal(err)
			}
			calls := 0
			for _, ev := range res.Outputs.Traces {
				if ev.GetEventType() != pb.TraceEvent_LLM_CALL {
					continue
				}
				calls++
				at := ev.GetAttributes()
				gotT, okT := at[tracing.AttrTenant]
				gotV, okV := at[tracing.AttrAgentVersion]
				if gotT != tc.wantT || okT != tc.hasT || gotV != tc.wantV || okV != tc.hasV {
					t.Fatalf("attributes %v", at)
				}
			}
			if calls != 1 {
				t.Fatalf("%d LLM_CALL events", calls)
			}
		})
	}
}

func TestVersionBounded(t *testing.T) {
	for _, v := range []string{strings.Repeat("v", 129), "\xff"} {
		_, err := bindings.New(bindings.Definition{Bindings: testBindings(), Definition: agent.Definition{
			Name: "assist", Schema: testSchema(t), Model: fixedModel{}, ModelID: "m", Version: v}})
		if err == nil {
			t.Errorf("version %q accepted", v)
		}
	}
}
