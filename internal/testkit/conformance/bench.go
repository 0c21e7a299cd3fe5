package conformance

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/records"
)

// scriptModel answers the scenarios' requests in process, as the loopback server does.
type scriptModel struct{}

func (scriptModel) Generate(_ context.Context, req *model.Request) (*model.Response, error) {
	var b strings.Builder
	tools := 0
	for _, m := range req.Messages {
		b.WriteString(m.Content)
		if m.Role == model.RoleTool {
			tools++
		}
	}
	v, _, ok := route([]byte(b.String()))
	replies := script[v]
	if !ok || tools >= len(replies) {
		return nil, &model.Error{Code: model.CodeRejected, Detail: "not in the conformance script"}
	}
	rep := replies[tools]
	resp := &model.Response{Text: []byte(rep.Text), Model: modelID, Usage: model.Usage{InputTokens: rep.InputTokens, CachedInputTokens: rep.CachedInputTokens, OutputTokens: rep.OutputTokens}}
	for _, c := range rep.ToolCalls {
		// The script names tools as the providers send them; a provider maps the name back.
		name := c.Name
		for _, t := range req.Tools {
			if provider.WireName(t.Name) == c.Name {
				name = t.Name
			}
		}
		resp.ToolCalls = append(resp.ToolCalls, model.ToolCall{ID: c.ID, Name: name, Arguments: c.Arguments})
	}
	return resp, nil
}

// benchKey is the tool scenario's traffic for one key, run in memory: a quiet reading, the
// anomaly (an inline lookup, then a dispatch that suspends) and the dispatch's result, which
// resumes the activation to the final reply.
type benchKey struct {
	d      *drive.Driver
	values [][]byte
}

func newBenchKey(agentName string) (*benchKey, error) {
	a, err := agent.Build(agentName, Config{ModelID: modelID}.JSON())
	if err != nil {
		return nil, err
	}
	kr, err := intent.NewKeyring("bench", map[string][]byte{"bench": make([]byte, 32)})
	if err != nil {
		return nil, err
	}
	if a, err = a.WithModel(scriptModel{}, "", false); err != nil {
		return nil, err
	}
	bk := &benchKey{d: &drive.Driver{Core: drive.Core{Agent: a, Deps: host.Deps{Keyring: kr}, OrderResolutionMs: 1}}}
	k := key(ToolSuspendResume)
	for _, env := range []*pb.AgentEnvelope{reading(k, t0, quietMilliC), reading(k, t0+1000, toolMilliC)} {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(env)
		if err != nil {
			return nil, err
		}
		bk.values = append(bk.values, b)
	}
	var ti *pb.ToolIntent
	bk.run(func(kind int64, b []byte) {
		if kind == records.OutIntent && ti == nil {
			ti = &pb.ToolIntent{}
			if proto.Unmarshal(b, ti) != nil {
				ti = nil
			}
		}
	})
	if ti == nil {
		return nil, fmt.Errorf("%s: the anomaly emitted no intent", agentName)
	}
	res := &pb.ToolResult{IntentId: ti.GetIntentId(), EntityKey: k, Seq: ti.GetSeq(), Status: pb.ToolResult_OK, Payload: []byte(ticketPayload), CompletedAtMs: t0 + 9000}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(&pb.AgentEnvelope{EntityKey: k, EventTimeMs: t0 + 10000, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: res}})
	if err != nil {
		return nil, err
	}
	bk.values = append(bk.values, b)
	finals := 0
	bk.run(func(kind int64, _ []byte) {
		if kind == records.OutFinal {
			finals++
		}
	})
	if finals != 1 {
		return nil, fmt.Errorf("%s: the result resumed to %d final replies, want 1", agentName, finals)
	}
	return bk, nil
}

func (bk *benchKey) run(emit func(int64, []byte)) {
	bk.d.Run(context.Background(), key(ToolSuspendResume), bk.values, emit)
}

// Bench measures the tool scenario (quiet reading, anomaly with an inline lookup and a
// suspending dispatch, the result resuming to the final reply; the model answering in
// process) for agentName against NativeAgent, interleaved in the same run: it reports the
// subject's and the native handler's time per key and their ratio (x-native).
func Bench(b *testing.B, agentName string) {
	subject, err := newBenchKey(agentName)
	if err != nil {
		b.Fatal(err)
	}
	native, err := newBenchKey(NativeAgent)
	if err != nil {
		b.Fatal(err)
	}
	discard := func(int64, []byte) {}
	var ts, tn time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		native.run(discard)
		mid := time.Now()
		subject.run(discard)
		ts, tn = ts+time.Since(mid), tn+mid.Sub(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(ts.Nanoseconds())/n, "subject-ns/key")
	b.ReportMetric(float64(tn.Nanoseconds())/n, "native-ns/key")
	b.ReportMetric(float64(ts)/float64(tn), "x-native")
}
