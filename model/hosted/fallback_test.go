package hosted_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/model/limit"
)

const answer = `{"case":"support.reply","fields":{"text":"On its way."}}`

// The first model's endpoint refuses connections: the fallback answers, and the answer says
// so; once the first's breaker is open it is passed over without a connection attempt.
func TestFallbackAnswersWhenTheFirstIsUnavailable(t *testing.T) {
	srv := llmtest.New(llmtest.Anthropic, func(int, []byte) llmtest.Reply {
		return llmtest.Reply{Text: answer, Model: "claude-test", InputTokens: 5, OutputTokens: 7}
	})
	defer srv.Close()
	t.Setenv("BEAMAGENTS_FALLBACK_KEY", "sk-fallback")
	o := hosted.Options{
		Provider: hosted.OpenAI, Name: "primary-model", BaseURL: llmtest.Refused(llmtest.OpenAI), MaxAttempts: 1,
		Limits:   limit.Config{BreakerFailures: 1, BreakerCooldownMs: 60000},
		Fallback: []hosted.Fallback{{Provider: hosted.Anthropic, Name: "fallback-model", BaseURL: srv.BaseURL(), APIKey: "env:BEAMAGENTS_FALLBACK_KEY"}},
	}
	m, err := hosted.New(o)
	if err != nil {
		t.Fatal(err)
	}
	s, err := support.Schema()
	if err != nil {
		t.Fatal(err)
	}
	req := &model.Request{Model: "primary-model", Messages: []model.Message{{Role: model.RoleUser, Content: "Where is A-1001?"}},
		ResponseSchema: s.ProviderJSONSchema(), SchemaDigest: s.Digest()}
	for i, want := range []model.Code{model.CodeUnavailable, model.CodeCircuitOpen} {
		resp, err := m.Stream(context.Background(), req, func([]byte) error { return nil })
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if string(resp.Text) != answer || resp.AnsweredBy != "fallback-model" || resp.Model != "claude-test" ||
			!slices.Equal(resp.Passed, []model.Pass{{Model: "primary-model", Code: want}}) {
			t.Fatalf("call %d: %+v", i, resp)
		}
	}
	if req.Model != "primary-model" {
		t.Fatal("the caller's request was changed")
	}
	if h := srv.Headers()[0]; h.Get("Authorization")+h.Get("X-Api-Key") != "Bearer sk-fallback" || len(srv.Requests()) != 2 {
		t.Fatalf("fallback key %q, %d requests", h, len(srv.Requests()))
	}
	if st := o.Endpoint().Stats(); st.State != limit.Open || st.Refused != 1 {
		t.Fatalf("primary endpoint %+v", st)
	}
	// The whole chain unavailable: the last failure's code, every pass named.
	o.Fallback[0].BaseURL = llmtest.Refused(llmtest.Anthropic)
	m, _ = hosted.New(o)
	_, err = m.Generate(context.Background(), req)
	var me *model.Error
	if !errors.As(err, &me) || me.Code != model.CodeUnavailable || !errors.Is(err, model.ErrUnavailable) {
		t.Fatalf("all down: %v", err)
	}
}

// A refusal of the request itself is not unavailability: the chain stops there.
func TestFallbackStopsAtARejection(t *testing.T) {
	bad := llmtest.New(llmtest.OpenAI, func(int, []byte) llmtest.Reply { return llmtest.Reply{Status: 400} })
	defer bad.Close()
	good := llmtest.New(llmtest.OpenAI, func(int, []byte) llmtest.Reply { return llmtest.Reply{Text: answer} })
	defer good.Close()
	m, err := hosted.New(hosted.Options{Provider: hosted.OpenAI, Name: "a", BaseURL: bad.BaseURL(),
		Fallback: []hosted.Fallback{{Name: "b", BaseURL: good.BaseURL()}}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := support.Schema()
	_, err = m.Generate(context.Background(), &model.Request{Model: "a", Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}},
		ResponseSchema: s.ProviderJSONSchema(), SchemaDigest: s.Digest()})
	if !errors.Is(err, model.ErrRejected) || len(good.Requests()) != 0 {
		t.Fatalf("%v, fallback asked %d times", err, len(good.Requests()))
	}
}

// A fallback naming the primary's provider and no base URL or key takes the primary's: here
// one server refuses model a (503) and answers model b.
func TestFallbackOfTheSameProviderTakesThePrimarysEndpoint(t *testing.T) {
	srv := llmtest.New(llmtest.OpenAI, func(_ int, body []byte) llmtest.Reply {
		if strings.Contains(string(body), `"model":"a"`) {
			return llmtest.Reply{Status: 503}
		}
		return llmtest.Reply{Text: answer}
	})
	defer srv.Close()
	t.Setenv("BEAMAGENTS_SAME_KEY", "sk-same")
	m, err := hosted.New(hosted.Options{Provider: hosted.OpenAI, Name: "a", BaseURL: srv.BaseURL(), APIKey: "env:BEAMAGENTS_SAME_KEY", MaxAttempts: 1,
		Fallback: []hosted.Fallback{{Provider: hosted.OpenAI, Name: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := support.Schema()
	resp, err := m.Generate(context.Background(), &model.Request{Model: "a", Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}},
		ResponseSchema: s.ProviderJSONSchema(), SchemaDigest: s.Digest()})
	if err != nil || resp.AnsweredBy != "b" || len(srv.Requests()) != 2 || srv.Headers()[1].Get("Authorization") != "Bearer sk-same" {
		t.Fatalf("%+v %v, %d requests", resp, err, len(srv.Requests()))
	}
}
