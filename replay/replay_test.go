package replay

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/agent/drive"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
)

func TestModelAnswersOnlyFromCaches(t *testing.T) {
	req := func(step uint32) *model.Request {
		return &model.Request{Model: "m", EntityKey: []byte("k"), Seq: 1, Step: step, Messages: []model.Message{{Role: "user", Content: "hi"}}}
	}
	snap := &pb.StateSnapshot{LlmCache: &pb.LlmCacheBlob{Entries: []*pb.LlmCacheEntry{
		{CacheKey: model.CacheKey(req(0)), Response: []byte("answer")},
		{CacheKey: model.CacheKey(req(1)), ResponseDigest: make([]byte, 32), DigestOnly: true},
	}}}
	trace := &pb.TraceEvent{EventType: pb.TraceEvent_LLM_CALL, EntityKey: []byte("k"), Seq: 1, StepIndex: 0,
		Attributes: map[string]string{"gen_ai.usage.input_tokens": "12", "gen_ai.usage.output_tokens": "3", "gen_ai.usage.cache_read.input_tokens": "8", "gen_ai.response.model": "rec",
			"beam_agents.answered_by": "small", "beam_agents.models_passed": "large=model_circuit_open"}}
	m := NewModel([]*pb.StateSnapshot{snap}, []*pb.TraceEvent{trace})
	resp, err := m.Generate(context.Background(), req(0))
	if err != nil || string(resp.Text) != "answer" || resp.Usage != (model.Usage{InputTokens: 12, CachedInputTokens: 8, OutputTokens: 3}) || resp.Model != "rec" ||
		resp.AnsweredBy != "small" || len(resp.Passed) != 1 || resp.Passed[0] != (model.Pass{Model: "large", Code: model.CodeCircuitOpen}) {
		t.Fatalf("hit: %+v %v", resp, err)
	}
	for step, digestOnly := range map[uint32]bool{1: true, 2: false} {
		if _, err := m.Generate(context.Background(), req(step)); !errors.Is(err, ErrMiss) {
			t.Fatalf("step %d: %v", step, err)
		}
		misses := m.Misses()
		if got := misses[len(misses)-1]; got.Step != step || got.DigestOnly != digestOnly {
			t.Fatalf("miss %+v", got)
		}
	}
	if m.Answered() != 1 {
		t.Fatalf("answered %d", m.Answered())
	}
}

func TestCompare(t *testing.T) {
	a := drive.Marshal(&pb.FinalReply{EntityKey: []byte("k"), Seq: 1, Message: "a"})
	b := drive.Marshal(&pb.FinalReply{EntityKey: []byte("k"), Seq: 1, Message: "b"})
	for _, tc := range []struct {
		name string
		got  []Output
		want map[int64][][]byte
		say  string
	}{
		{"same", []Output{{records.OutFinal, a}}, map[int64][][]byte{records.OutFinal: {a}}, ""},
		{"different", []Output{{records.OutFinal, b}}, map[int64][][]byte{records.OutFinal: {a}}, "first different output: final reply"},
		{"missing", nil, map[int64][][]byte{records.OutFinal: {a}}, "recorded output not produced: final reply"},
		{"duplicated", []Output{{records.OutFinal, a}, {records.OutFinal, a}}, map[int64][][]byte{records.OutFinal: {a}}, "first different output"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := compare(tc.got, tc.want)
			if (tc.say == "") != (got == "") || !strings.HasPrefix(got, tc.say) {
				t.Fatalf("compare = %q, want %q…", got, tc.say)
			}
		})
	}
}
