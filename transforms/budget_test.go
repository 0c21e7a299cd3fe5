package transforms_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/budget"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/scenario"
	"github.com/beamagents/beamagents/ledger"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/tracing"
	"github.com/beamagents/beamagents/transforms"
)

// budgetAgent is a handler agent with a tenant budget, for the budget tests: one model call
// per event, replied as it is. Its configuration names the degrade rule.
const budgetAgent = "tenant-budget"

// The budget agent's figures: each activation is granted 100 tokens, each tenant has 450
// per minute (four grants), and each answer costs 30-89 tokens.
const (
	budgetMaxTokens = 100
	budgetTokens    = 450
	budgetPer       = time.Minute
	// At budgetPrices a grant of 100 tokens reserves 1,000 micro-units (each token at the
	// dearest price, 10 micro-units): four grants a window, as the token budget.
	budgetCostMicros = 4_500
)

// budgetPrices prices the budget agent's models: the reservation is every token at the
// large model's output price, 10 micro-units a token.
var budgetPrices = ledger.Table{Currency: "USD", Models: map[string]ledger.Price{
	"large": {Input: 2_500_000, CachedInput: 1_250_000, Output: 10_000_000},
	"small": {Input: 150_000, CachedInput: 75_000, Output: 600_000},
}}

func init() {
	register.Function1x0(discard)
	agent.Register(budgetAgent, func(config []byte) (*agent.Agent, error) {
		rules := map[string]budget.Degrade{"model": budget.DegradeModel{ModelID: "small"}, "reply": budget.DegradeReply{Text: "busy, try later"},
			"park": budget.DegradePark{}, "fail": budget.DegradeFail{}}
		b := &budget.Budget{Tokens: budgetTokens, Per: budgetPer, Degrade: rules[string(config)]}
		switch string(config) {
		case "none": // the same agent without a budget, to measure the admission's cost
			b = nil
		case "cost": // a cost budget, reserved at the launch's prices (budgetPrices)
			b = &budget.Budget{CostMicros: budgetCostMicros, Per: budgetPer}
		}
		return agent.New(agent.Definition{Name: budgetAgent, Model: usageModel{}, ModelID: "large",
			Handler: func(hc *agent.Context, tr agent.Trigger) error {
				turn, err := hc.Chat(agent.Chat{Messages: []model.Message{{Role: model.RoleUser, Content: string(tr.Event)}}})
				if err != nil {
					return err
				}
				return hc.Reply(turn.Text)
			},
			Limits: agent.Limits{MaxTokens: budgetMaxTokens},
			Tenant: func(key string) string { t, _, _ := strings.Cut(key, "/"); return t },
			Budget: b,
		})
	})
}

// usageModel answers with the model id and the request's text, and reports a usage of
// 30-89 tokens derived from them: a provider stand-in whose answers cost what they cost.
type usageModel struct{}

func (usageModel) Generate(_ context.Context, req *model.Request) (*model.Response, error) {
	text := req.Model + ": " + req.Messages[len(req.Messages)-1].Content
	sum := sha256.Sum256([]byte(text))
	return &model.Response{Text: []byte(text), Usage: model.Usage{InputTokens: 20, OutputTokens: 10 + int64(sum[0]%60)}}, nil
}

// budgetTraffic is n keys of each of two tenants sending events over three minutes, shuffled,
// some delivered twice, with tool results (not admitted) mixed in.
func budgetTraffic(seed uint64, n int) *scenario.Set {
	rng := rand.New(rand.NewPCG(seed, 0xb0d6e7))
	set := &scenario.Set{}
	add := func(env *pb.AgentEnvelope) {
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(env)
		set.Records = append(set.Records, b)
		if rng.IntN(10) == 0 {
			set.Records = append(set.Records, b)
		}
	}
	for _, tenant := range []string{"acme", "zeta"} {
		for i := range n {
			key := fmt.Sprintf("%s/k%02d", tenant, i)
			set.Keys = append(set.Keys, key)
			for j := range 2 + rng.IntN(3) {
				at := scenario.T0 + int64(rng.IntN(180))*1000
				add(&pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: at, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(fmt.Sprintf("hello %d", j))}})
			}
			if rng.IntN(3) == 0 { // a result no intent awaits: passes the admission untouched
				add(&pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: scenario.T0 + 5000, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{IntentId: "none", Status: pb.ToolResult_OK}}})
			}
		}
	}
	rng.Shuffle(len(set.Records), func(i, j int) { set.Records[i], set.Records[j] = set.Records[j], set.Records[i] })
	return set
}

// A tenant budget over many keys of two tenants, under each degrade rule: RunAgent (ordered
// and concurrent) and RunAgentBatch on Prism give the driver's bytes; the driver run twice
// gives the same bytes; each tenant's spend per window, from the traces, stays within its
// budget; and the rule did what it says.
func TestTenantBudget(t *testing.T) {
	for _, rule := range []string{"model", "reply", "park", "fail"} {
		t.Run(rule, func(t *testing.T) {
			set := budgetTraffic(7, 6)
			ref, kr := keyringRef(t)
			a, err := agent.Build(budgetAgent, []byte(rule))
			if err != nil {
				t.Fatal(err)
			}
			d := &drive.Driver{Core: drive.Core{Agent: a, Deps: host.Deps{Keyring: kr}, OrderResolutionMs: 250}}
			st := compareExecutions(t, budgetAgent, []byte(rule), ref, d, set, nil)
			first, again := driveSet(t, d, set), driveSet(t, d, set)
			for _, o := range pipeline.Outputs() {
				if i := firstDifference(again[o.Name], first[o.Name]); i >= 0 {
					t.Fatalf("%s differs between two runs at record %d", o.Name, i)
				}
			}
			spend := checkSpend(t, first[pipeline.TracesName])
			t.Logf("%d records; outputs %v; dead letters %v; spend by tenant and window %v", st.records, st.outputs, st.reasons, spend)
			checkRule(t, rule, first, st)
		})
	}
}

// A cost budget over the same traffic, at budgetPrices: RunAgent (ordered and concurrent) and
// RunAgentBatch on Prism give the driver's bytes; the driver run twice gives the same bytes;
// each tenant's priced spend per window, from the traces' ledger entries at the same table,
// stays within CostMicros; and over-budget events are refused.
func TestTenantCostBudget(t *testing.T) {
	set := budgetTraffic(7, 6)
	set.Prices = budgetPrices
	ref, kr := keyringRef(t)
	a, err := agent.Build(budgetAgent, []byte("cost"))
	if err != nil {
		t.Fatal(err)
	}
	d := &drive.Driver{Core: drive.Core{Agent: a, Deps: host.Deps{Keyring: kr}, OrderResolutionMs: 250}}
	st := compareExecutions(t, budgetAgent, []byte("cost"), ref, d, set, nil)
	first, again := driveSet(t, d, set), driveSet(t, d, set)
	for _, o := range pipeline.Outputs() {
		if i := firstDifference(again[o.Name], first[o.Name]); i >= 0 {
			t.Fatalf("%s differs between two runs at record %d", o.Name, i)
		}
	}
	spend := checkCostSpend(t, first[pipeline.TracesName])
	t.Logf("%d records; outputs %v; dead letters %v; micro-units by tenant and window %v", st.records, st.outputs, st.reasons, spend)
	checkRule(t, "fail", first, st)
}

// checkCostSpend sums the priced cost of each granted activation's model calls
// (ledger.Entry at budgetPrices) by tenant and window, checks each window within
// budgetCostMicros and no window granting more than floor(CostMicros/reservation)
// activations, and returns the sums.
func checkCostSpend(t *testing.T, traces [][]byte) map[string]int64 {
	t.Helper()
	type act struct {
		key string
		seq int64
	}
	window, cost := map[act]string{}, map[act]int64{}
	for _, b := range traces {
		ev := &pb.TraceEvent{}
		if err := proto.Unmarshal(b, ev); err != nil {
			t.Fatal(err)
		}
		k := act{string(ev.GetEntityKey()), ev.GetSeq()}
		if ev.GetEventType() == pb.TraceEvent_ACTIVATION_START {
			tenant, _, _ := strings.Cut(k.key, "/")
			window[k] = tenant + "@" + ev.GetAttributes()[tracing.AttrBudgetWindow]
			if a := ev.GetAttributes(); a[tracing.AttrBudgetGranted] != strconv.Itoa(budgetMaxTokens) || a[tracing.AttrBudgetCost] != strconv.Itoa(budgetCostMicros) {
				t.Errorf("activation %v ran with grant %q of cost budget %q", k, a[tracing.AttrBudgetGranted], a[tracing.AttrBudgetCost])
			}
		}
		if e, ok := ledger.Entry(ev, budgetPrices); ok {
			if !e.GetPriced() {
				t.Errorf("call of %v on %s is not priced", k, e.GetResponseModel())
			}
			cost[k] += e.GetCostMicros()
		}
	}
	reserve := budget.Reservation(budgetPrices, budgetMaxTokens)
	spend, grants := map[string]int64{}, map[string]int64{}
	for k, c := range cost {
		spend[window[k]] += c
		grants[window[k]]++
	}
	for w, c := range spend {
		if c > budgetCostMicros || grants[w] > budgetCostMicros/reserve {
			t.Errorf("%s: %d activations spent %d micro-units; the budget is %d, %d grants of %d", w, grants[w], c, budgetCostMicros, budgetCostMicros/reserve, reserve)
		}
	}
	return spend
}

// A cost budget without a price table, or at one that cannot reserve it, is refused when
// the pipeline is built (RunAgent, RunAgentBatch) and by the driver's admission, with
// budget.ErrCostBudget.
func TestTenantCostBudgetRefused(t *testing.T) {
	a, err := agent.Build(budgetAgent, []byte("cost"))
	if err != nil {
		t.Fatal(err)
	}
	for name, prices := range map[string]ledger.Table{
		"no prices":   {},
		"free prices": {Models: map[string]ledger.Price{"large": {}}},
		"too dear":    {Models: map[string]ledger.Price{"large": {Output: 50_000_000}}}, // 5,000 micro-units a grant
	} {
		_, s := beam.NewPipelineWithRoot()
		keyed, _ := transforms.DecodeEnvelopes(s, transforms.Binary, beam.CreateList(s, budgetTraffic(1, 1).Records))
		opts := transforms.Options{Agent: budgetAgent, Config: []byte("cost"), AllowUnsignedIntents: true, Prices: prices}
		if _, err := transforms.TryRunAgent(s, opts, keyed); !errors.Is(err, budget.ErrCostBudget) {
			t.Errorf("%s: RunAgent: %v, want ErrCostBudget", name, err)
		}
		if _, err := transforms.TryRunAgentBatch(s, opts, keyed); !errors.Is(err, budget.ErrCostBudget) {
			t.Errorf("%s: RunAgentBatch: %v, want ErrCostBudget", name, err)
		}
		if _, err := drive.Admit(a, prices, [][]byte{[]byte("acme/k")}, [][][]byte{nil}); !errors.Is(err, budget.ErrCostBudget) {
			t.Errorf("%s: drive.Admit: %v, want ErrCostBudget", name, err)
		}
	}
}

// checkSpend sums each activation's charged tokens (the last beam_agents.tokens of its
// LLM_CALLs) by tenant and window (the ACTIVATION_START's grant) and checks no granted
// activation spent over its grant and no window over the budget. Degraded activations
// (DegradeModel's) are summed apart, as "<tenant>@<window>/degraded". It returns the sums.
func checkSpend(t *testing.T, traces [][]byte) map[string]int64 {
	t.Helper()
	type act struct{ key, seq string }
	window, tokens := map[act]string{}, map[act]int64{}
	for _, b := range traces {
		ev := &pb.TraceEvent{}
		if err := proto.Unmarshal(b, ev); err != nil {
			t.Fatal(err)
		}
		k := act{string(ev.GetEntityKey()), strconv.FormatInt(ev.GetSeq(), 10)}
		attrs := ev.GetAttributes()
		switch ev.GetEventType() {
		case pb.TraceEvent_ACTIVATION_START:
			if attrs[tracing.AttrBudgetWindow] == "" || attrs[tracing.AttrBudgetCost] != "" {
				t.Fatalf("activation %v has no budget window on its start, or a cost budget", k)
			}
			tenant, _, _ := strings.Cut(k.key, "/")
			window[k] = tenant + "@" + attrs[tracing.AttrBudgetWindow]
			if attrs[tracing.AttrBudgetGranted] == "0" { // over budget: degraded, spends outside it
				window[k] += "/degraded"
			}
		case pb.TraceEvent_LLM_CALL:
			n, _ := strconv.ParseInt(attrs[tracing.AttrTokens], 10, 64)
			tokens[k] = max(tokens[k], n)
		}
	}
	spend := map[string]int64{}
	for k, n := range tokens {
		if n > budgetMaxTokens {
			t.Errorf("activation %v spent %d tokens; it was granted %d", k, n, budgetMaxTokens)
		}
		spend[window[k]] += n
	}
	for w, n := range spend {
		if n > budgetTokens && !strings.HasSuffix(w, "/degraded") {
			t.Errorf("%s spent %d tokens; its budget is %d", w, n, budgetTokens)
		}
	}
	return spend
}

// checkRule checks what the degrade rule did to the over-budget events.
func checkRule(t *testing.T, rule string, out map[string][][]byte, st diffStats) {
	t.Helper()
	finals := map[string]int{}
	for _, b := range out[pipeline.FinalsName] {
		f := &pb.FinalReply{}
		proto.Unmarshal(b, f)
		head, _, _ := strings.Cut(f.GetMessage(), ":")
		finals[head]++
	}
	switch rule {
	case "model":
		if finals["small"] == 0 || finals["large"] == 0 {
			t.Errorf("finals by model %v: want both the agent's and the degraded model's", finals)
		}
	case "reply":
		if finals["busy, try later"] == 0 || finals["large"] == 0 {
			t.Errorf("finals %v: want granted answers and degraded replies", finals)
		}
	case "park":
		if finals["small"]+finals["busy, try later"] != 0 || st.reasons[string(records.ReasonTenantBudgetSpent)] != 0 {
			t.Errorf("finals %v, dead letters %v: parked events must all run on the agent's model", finals, st.reasons)
		}
	case "fail":
		if st.reasons[string(records.ReasonTenantBudgetSpent)] == 0 || finals["large"] == 0 {
			t.Errorf("finals %v, dead letters %v: want granted answers and tenant_budget_spent", finals, st.reasons)
		}
	}
}

var admissionN = flag.Int("admission.n", 4000, "envelopes per admission benchmark run")

// BenchmarkAdmission measures the tenant budget's admission stage: the same agent with a
// budget (DegradeModel, so every event still makes one model call) and without one, through
// RunAgent and RunAgentBatch on Prism, over 400 keys of two tenants.
//
//	go test ./transforms -run '^$' -bench Admission -benchtime 3x
func BenchmarkAdmission(b *testing.B) {
	set := budgetTraffic(3, 200)
	for len(set.Records) < *admissionN {
		set.Records = append(set.Records, budgetTraffic(uint64(len(set.Records)), 200).Records...)
	}
	set.Records = set.Records[:*admissionN]
	for _, path := range []string{"RunAgent", "RunAgentBatch"} {
		for _, config := range []string{"none", "model"} {
			b.Run(path+"/budget="+config, func(b *testing.B) {
				var total time.Duration
				for range b.N {
					p, s := beam.NewPipelineWithRoot()
					keyed, _ := transforms.DecodeEnvelopes(s, transforms.Binary, beam.CreateList(s, set.Records))
					opts := transforms.Options{Agent: budgetAgent, Config: []byte(config), AllowUnsignedIntents: true}
					run := transforms.RunAgent
					if path == "RunAgentBatch" {
						run = transforms.RunAgentBatch
					}
					beam.ParDo0(s, discard, run(s, opts, keyed).Finals)
					start := time.Now()
					if err := ptest.Run(p); err != nil {
						b.Fatal(err)
					}
					total += time.Since(start)
				}
				b.ReportMetric(float64(len(set.Records)*b.N)/total.Seconds(), "envelopes/s")
			})
		}
	}
}

// discard drops an output the benchmark does not read.
func discard([]byte) {}
