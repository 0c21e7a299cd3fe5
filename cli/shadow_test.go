package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/effector/store"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/pubsub/wire"
	"github.com/beamagents/beamagents/rehearse"
)

// shadowNewTool is the support agent with its order lookup bound to another tool: the same
// model requests, a different call.
const shadowNewTool = "support-find-order"

func init() {
	agent.Register(shadowNewTool, func([]byte) (*agent.Agent, error) {
		def, err := support.Definition(support.ModelScript)
		if err != nil {
			return nil, err
		}
		def.Bindings["support.lookup_order"] = bindings.Tool("support.find_order")
		return bindings.New(def)
	})
}

const (
	shadowIntentsTopic = "projects/p/topics/shadow_intents"
	shadowDivTopic     = "projects/p/topics/shadow_divergences"
)

// shadowRun is one streaming run of the support demo over Pub/Sub, with extra flags (a
// shadow), until every input is acknowledged and the finals are out; it returns the server.
func shadowRun(t *testing.T, lines [][]byte, extra ...string) (*pstest.Server, string) {
	t.Helper()
	srv, ring, _ := demoPubSub(t)
	for _, topic := range []string{shadowIntentsTopic, shadowDivTopic} {
		if _, err := srv.GServer.CreateTopic(context.Background(), &pubsubpb.Topic{Name: topic}); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range lines {
		srv.Publish(demoIn, l, map[string]string{wire.AttrContentType: wire.ContentTypeJSON})
	}
	t.Cleanup(resetFlags)
	args := append([]string{"run", "--agent", support.Name, "--input_subscription", demoSub,
		"--intents_topic", demoIntents, "--finals_topic", demoFinals, "--errors_topic", demoErrors, "--status_interval", "100ms",
		"--keyring", "file:" + ring}, extra...)
	streamUntil(t, 120*time.Second, func() bool { return allAcked(srv, demoIn, len(lines)) && count(srv, demoFinals) >= 4 }, args...)
	return srv, ring
}

// published returns the data of every message of topic, sorted.
func published(srv *pstest.Server, topic string) [][]byte {
	var out [][]byte
	for _, m := range srv.Messages() {
		if m.Topic == topic {
			out = append(out, m.Data)
		}
	}
	slices.SortFunc(out, bytes.Compare)
	return out
}

// messagesOf decodes every message of topic into a new M.
func messagesOf[M proto.Message](t *testing.T, srv *pstest.Server, topic string, newM func() M) []M {
	t.Helper()
	var out []M
	for _, m := range srv.Messages() {
		if m.Topic != topic {
			continue
		}
		v := newM()
		var err error
		if wire.IsJSON(m.Attributes) {
			err = protojson.Unmarshal(m.Data, v)
		} else {
			err = proto.Unmarshal(m.Data, v)
		}
		if err != nil {
			t.Fatalf("%s: %v", topic, err)
		}
		out = append(out, v)
	}
	return out
}

// firstDivergences is each key's earliest divergent comparison, by key.
func firstDivergences(cs []*pb.ShadowComparison) map[string]*pb.ShadowComparison {
	first := map[string]*pb.ShadowComparison{}
	for _, c := range cs {
		k := string(c.GetEntityKey())
		if c.GetKind() != "" && (first[k] == nil || c.GetEventTimeMs() < first[k].GetEventTimeMs()) {
			first[k] = c
		}
	}
	return first
}

// `run --shadow_agent` on Pub/Sub: production's outputs are byte-identical with and without
// a shadow; the shadow's intents are marked and a real effector refuses every one; an
// identical candidate never diverges; a candidate calling another tool diverges on the keys,
// with the kinds, that a rehearsal of the same traffic reports.
func TestShadowOnPubSub(t *testing.T) {
	_, _, lines := demoPubSub(t)
	for i := 1; i <= 4; i++ { // the period ends with an export per key, as a rehearsal's baseline needs
		key := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("customer-%d", i)))
		lines = append(lines, []byte(`{"entityKey":"`+key+`","eventTimeMs":"1767226000000","exportRequest":{"requestId":"period-end"}}`))
	}
	plain, _ := shadowRun(t, lines)
	same, ring := shadowRun(t, lines, "--shadow_agent", support.Name, "--shadow_intents_topic", shadowIntentsTopic,
		"--shadow_divergences_topic", shadowDivTopic, "--shadow_model_concurrency", "2")
	changed, _ := shadowRun(t, lines, "--shadow_agent", shadowNewTool, "--shadow_divergences_topic", shadowDivTopic)

	for _, topic := range []string{demoIntents, demoFinals, demoErrors} {
		want := published(plain, topic)
		for name, srv := range map[string]*pstest.Server{"identical shadow": same, "changed shadow": changed} {
			if got := published(srv, topic); !slices.EqualFunc(got, want, bytes.Equal) {
				t.Errorf("%s: %s differs from the run without a shadow (%d messages, want %d)", name, topic, len(got), len(want))
			}
		}
	}

	// The identical candidate: every firing compared, none divergent.
	cs := messagesOf(t, same, shadowDivTopic, func() *pb.ShadowComparison { return &pb.ShadowComparison{} })
	if len(cs) == 0 {
		t.Fatal("no comparisons published")
	}
	for _, c := range cs {
		if c.GetKind() != "" {
			t.Errorf("identical candidate diverged: %v", c)
		}
	}

	// Its intents are marked, and a real effector refuses each: no result, no tool run.
	kr, err := intent.LoadKeyring("file:" + ring)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := effector.AgentBindings(support.Name)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "dedup.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eff, err := effector.New(effector.Options{Keyring: kr, Verify: intent.ModeOff, Store: st, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	shadowIntents := messagesOf(t, same, shadowIntentsTopic, func() *pb.ToolIntent { return &pb.ToolIntent{} })
	if len(shadowIntents) != count(plain, demoIntents) {
		t.Errorf("%d shadow intents, want production's %d", len(shadowIntents), count(plain, demoIntents))
	}
	for _, ti := range shadowIntents {
		out, err := eff.Handle(context.Background(), ti)
		if !intent.IsShadow(ti) || !errors.Is(err, effector.ErrShadowIntent) || out.Envelope != nil || out.Pending {
			t.Errorf("shadow intent %s: marked %v, Handle %v, %v", ti.GetIntentId(), intent.IsShadow(ti), out, err)
		}
	}
	if n := eff.Metrics().Snapshot()[effector.CountExecuted]; n != 0 {
		t.Errorf("the effector executed %d tools", n)
	}

	// The changed candidate against a rehearsal of the same traffic.
	dir := t.TempDir()
	input := filepath.Join(dir, "period.jsonl")
	if err := os.WriteFile(input, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "--agent", support.Name, "--input", input, "--output_dir", filepath.Join(dir, "baseline"), "--mode", "batch", "--keyring", "file:" + ring},
		{"rehearse", "--agent", shadowNewTool, "--input", input, "--baseline", filepath.Join(dir, "baseline"), "--report", filepath.Join(dir, "report.jsonl")},
	} {
		resetFlags()
		if code, out, errOut := runCLI(t, "", args...); code != 0 && code != 3 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
	}
	f, err := os.Open(filepath.Join(dir, "report.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	report, err := rehearse.ReadReport(f)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]rehearse.Divergence{}
	for _, k := range report.Keys {
		if k.Divergence != nil {
			want[string(k.Entity)] = *k.Divergence
		}
	}
	got := firstDivergences(messagesOf(t, changed, shadowDivTopic, func() *pb.ShadowComparison { return &pb.ShadowComparison{} }))
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("shadow diverged on %d keys, the rehearsal on %d: %v / %v", len(got), len(want), got, want)
	}
	t.Logf("identical shadow: %d comparisons, %d shadow intents refused; changed shadow: first divergences %v; rehearsal: %v", len(cs), len(shadowIntents), got, want)
	for k, d := range want {
		c := got[k]
		if c == nil || c.GetKind() != string(d.Kind) || c.GetSeq() != d.Seq || c.GetStepIndex() != d.Step {
			t.Errorf("key %s: shadow %v, rehearsal %v", k, c, d)
		}
	}
}
