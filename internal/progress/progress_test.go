package progress_test

import (
	"context"
	"testing"

	"github.com/beamagents/beamagents/examples/devices"
	"github.com/beamagents/beamagents/internal/progress"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/openai"
	"github.com/beamagents/beamagents/model/provider"
)

// A counted provider still streams native-tool answers: the deltas reach the caller, and the
// call is counted once.
func TestCountedStreamsToolCalls(t *testing.T) {
	srv := llmtest.New(llmtest.OpenAI, func(int, []byte) llmtest.Reply {
		return llmtest.Reply{ChunkBytes: 4, ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "t", Arguments: `{"device_id":9007199254740993}`}}}
	})
	defer srv.Close()
	m, err := openai.New(provider.Config{BaseURL: srv.BaseURL(), Model: "m", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	ts, ok := progress.Counted(m).(model.ToolStreamer)
	if !ok {
		t.Fatal("a counted provider does not stream tool calls")
	}
	args, err := devices.LookupArgs()
	if err != nil {
		t.Fatal(err)
	}
	before := progress.Take().ModelCalls
	var got []byte
	resp, err := ts.StreamTools(context.Background(), &model.Request{Model: "m", Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}},
		Tools: []model.Tool{{Name: "t", Parameters: args.ProviderJSONSchema(), Digest: args.Digest()}}},
		func(d model.ToolDelta) error { got = append(got, d.Arguments...); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"device_id":9007199254740993}` || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Arguments != string(got) {
		t.Fatalf("deltas %q, response %+v", got, resp.ToolCalls)
	}
	if n := progress.Take().ModelCalls - before; n != 1 {
		t.Fatalf("%d calls counted", n)
	}
}
