package rehearse_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/rehearse"
)

// benchCopies is how many copies of the support example's five customers the benchmark's
// period holds: 1,000 keys.
const benchCopies = 200

// BenchmarkRehearse measures a rehearsal's throughput against the plain bounded fast path
// over the same recorded period (the support example's traffic, benchCopies times over
// renamed keys, an export request per key at the end), both in memory on the driver of
// package agent/drive: batch is the run that produced the baseline (the scripted model, signed
// intents), rehearse is rehearse.Run of an unchanged candidate (every model request answered
// from the baseline's caches, every output compared), changed_prompt that of a candidate with
// another system prompt, every key of which stops at its first model request (cheaper: it
// runs and compares less). Each reports the period's input envelopes per second of wall time.
// interleaved_cpu runs batch and rehearse in turn, in process CPU time on one core, and reports
// both and the ratio of their throughputs (rehearse/batch): the figure to read on a machine
// shared with other work, which skews wall times by tens of percent.
func BenchmarkRehearse(b *testing.B) {
	script := benchSupportScript(b)
	a := benchSupport(b, script, "")
	p := record(b, a, benchSupportTraffic(b, benchCopies))
	var envelopes int
	for _, in := range p.inputs {
		envelopes += len(in.Values)
	}
	kr, err := intent.NewKeyring("prod", map[string][]byte{"prod": bytes.Repeat([]byte{7}, 32)})
	if err != nil {
		b.Fatal(err)
	}
	d := &drive.Driver{Core: drive.Core{Agent: a, Deps: host.Deps{Keyring: kr}, OrderResolutionMs: 1, Park: true, EndMs: p.ending.EndMs}}
	batch := func(b *testing.B) {
		finals := 0
		for _, in := range p.inputs {
			d.Run(context.Background(), in.Entity, in.Values, func(kind int64, _ []byte) {
				if kind == records.OutFinal {
					finals++
				}
			})
		}
		if finals != len(p.baseline[records.OutFinal]) {
			b.Fatalf("%d final replies, the baseline has %d", finals, len(p.baseline[records.OutFinal]))
		}
	}
	unchanged := benchSupport(b, support.ModelScript, "")
	terse := benchSupport(b, support.ModelScript, "You are a terse support agent.")
	rehearsal := func(b *testing.B, candidate *agent.Agent, divergent int) {
		r, err := rehearse.Run(context.Background(), candidate, p.inputs, p.baseline, rehearse.Options{Ending: p.ending, Refused: p.refused})
		if err != nil {
			b.Fatal(err)
		}
		// A benchmark of a rehearsal that went wrong measures nothing.
		if s := r.Summary; s.Keys != len(p.inputs) || s.Divergent != divergent || s.LiveCalls != 0 || divergent == 0 && s.Answered == 0 {
			b.Fatalf("summary %+v", s)
		}
	}
	perSecond := func(d time.Duration) float64 { return float64(envelopes) / d.Seconds() }
	for _, v := range []struct {
		name string
		run  func(b *testing.B)
	}{
		{"batch", batch},
		{"rehearse", func(b *testing.B) { rehearsal(b, unchanged, 0) }},
		{"changed_prompt", func(b *testing.B) { rehearsal(b, terse, len(p.inputs)) }},
	} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				v.run(b)
			}
			b.ReportMetric(perSecond(b.Elapsed()/time.Duration(b.N)), "envelopes/s")
		})
	}
	// Both in turn, in process CPU time on one core: time spent descheduled on a shared
	// machine is not charged, and garbage collection is charged to whoever allocates.
	b.Run("interleaved_cpu", func(b *testing.B) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		var inBatch, inRehearsal time.Duration
		for range b.N {
			t0 := cpuTime()
			batch(b)
			t1 := cpuTime()
			rehearsal(b, unchanged, 0)
			inBatch, inRehearsal = inBatch+t1-t0, inRehearsal+cpuTime()-t1
		}
		n := time.Duration(b.N)
		b.ReportMetric(perSecond(inBatch/n), "batch-cpu-envelopes/s")
		b.ReportMetric(perSecond(inRehearsal/n), "rehearse-cpu-envelopes/s")
		b.ReportMetric(inBatch.Seconds()/inRehearsal.Seconds(), "rehearse/batch")
	})
}

// benchSupport is the support agent answered by script, with prompt as its system prompt
// when not empty.
func benchSupport(b *testing.B, script []byte, prompt string) *agent.Agent {
	b.Helper()
	def, err := support.Definition(script)
	if err != nil {
		b.Fatal(err)
	}
	if prompt != "" {
		def.Prompt = bindings.DefaultPrompt(prompt)
	}
	a, err := bindings.New(def)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// benchSupportScript is the support example's model script answering by what each customer
// asked rather than by entity, so that it answers every copy of a customer, in a few rules.
func benchSupportScript(b *testing.B) []byte {
	b.Helper()
	asked := map[string]string{} // entity -> its first external event
	sc := bufio.NewScanner(bytes.NewReader(support.Envelopes))
	for sc.Scan() {
		env, _, err := drive.DecodeEnvelope(records.JSON, sc.Bytes())
		if e := env.GetExternalEvent(); err == nil && e != nil && asked[string(env.GetEntityKey())] == "" {
			asked[string(env.GetEntityKey())] = string(e)
		}
	}
	script := string(support.ModelScript)
	for entity, text := range asked {
		q, err := json.Marshal(text)
		if err != nil {
			b.Fatal(err)
		}
		script = strings.ReplaceAll(script, fmt.Sprintf(`"entity":%q`, entity), `"contains":`+string(q))
	}
	if strings.Contains(script, `"entity"`) {
		b.Fatal("a rule of the support script is still keyed by entity")
	}
	return []byte(script)
}

// benchSupportTraffic is the support example's decodable envelopes, copies times over, each
// copy's keys renamed and its tool results and approvals addressed to the renamed keys'
// intents (an intent id derives from the key, the activation and the step).
func benchSupportTraffic(b *testing.B, copies int) []byte {
	b.Helper()
	var envs []*pb.AgentEnvelope
	sc := bufio.NewScanner(bytes.NewReader(support.Envelopes))
	for sc.Scan() {
		if env, _, err := drive.DecodeEnvelope(records.JSON, sc.Bytes()); err == nil {
			envs = append(envs, env)
		}
	}
	var out []byte
	for c := range copies {
		for _, src := range envs {
			env := proto.Clone(src).(*pb.AgentEnvelope)
			key := []byte(fmt.Sprintf("%s/%04d", src.GetEntityKey(), c))
			env.EntityKey = key
			switch p := env.GetPayload().(type) {
			case *pb.AgentEnvelope_ToolResult:
				p.ToolResult.EntityKey = key
				p.ToolResult.IntentId = readdress(b, src.GetEntityKey(), key, p.ToolResult.GetIntentId())
			case *pb.AgentEnvelope_Approval_:
				p.Approval.IntentId = readdress(b, src.GetEntityKey(), key, p.Approval.GetIntentId())
			}
			line, err := protojson.Marshal(env)
			if err != nil {
				b.Fatal(err)
			}
			out = append(append(out, line...), '\n')
		}
	}
	return out
}

// readdress is the id of the intent of key at the activation and step of from's intent id.
func readdress(b *testing.B, from, key []byte, id string) string {
	b.Helper()
	for seq := range int64(8) {
		for step := range uint32(16) {
			if intent.ID(from, seq, step) == id {
				return intent.ID(key, seq, step)
			}
		}
	}
	b.Fatalf("intent %s of %s: no activation and step", id, from)
	return ""
}
