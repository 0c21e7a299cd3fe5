package model_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/model"
)

// stub answers with text, or fails with err after delivering chunk (when set).
type stub struct {
	text  string
	err   error
	chunk string
	asked []string
}

func (s *stub) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return s.Stream(ctx, req, func([]byte) error { return nil })
}

func (s *stub) Stream(_ context.Context, req *model.Request, onChunk func([]byte) error) (*model.Response, error) {
	s.asked = append(s.asked, req.Model)
	if s.chunk != "" {
		onChunk([]byte(s.chunk))
	}
	if s.err != nil {
		return nil, s.err
	}
	return &model.Response{Text: []byte(s.text)}, nil
}

func TestFallback(t *testing.T) {
	down := &model.Error{Code: model.CodeUnavailable, Detail: "down"}
	open := &model.Error{Code: model.CodeCircuitOpen, Detail: "open"}
	rejected := &model.Error{Code: model.CodeRejected, Detail: "400"}
	for _, tc := range []struct {
		name     string
		chain    []*stub
		text     string
		by       string
		passed   []model.Pass
		err      error
		askedAll []int // how many times each model was asked
	}{
		{"the first answers", []*stub{{text: "a"}, {text: "b"}}, "a", "", nil, nil, []int{1, 0}},
		{"unavailable, then a breaker refusal, then an answer", []*stub{{err: down}, {err: open}, {text: "c"}}, "c", "m3",
			[]model.Pass{{Model: "m1", Code: model.CodeUnavailable}, {Model: "m2", Code: model.CodeCircuitOpen}}, nil, []int{1, 1, 1}},
		{"a rejection ends the chain", []*stub{{err: rejected}, {text: "b"}}, "", "", nil, model.ErrRejected, []int{1, 0}},
		{"a stream that had begun ends the chain", []*stub{{err: down, chunk: "{"}, {text: "b"}}, "", "", nil, model.ErrUnavailable, []int{1, 0}},
		{"all unavailable", []*stub{{err: down}, {err: open}}, "", "", nil, model.ErrCircuitOpen, []int{1, 1}},
	} {
		var named []model.Named
		for i, s := range tc.chain {
			named = append(named, model.Named{Name: "m" + string(rune('1'+i)), Model: s})
		}
		f, err := model.NewFallback(named...)
		if err != nil {
			t.Fatal(err)
		}
		req := &model.Request{Model: "m1"}
		resp, err := f.Stream(context.Background(), req, func([]byte) error { return nil })
		switch {
		case tc.err != nil:
			if !errors.Is(err, tc.err) {
				t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
			}
		case err != nil || string(resp.Text) != tc.text || resp.AnsweredBy != tc.by || !slices.Equal(resp.Passed, tc.passed):
			t.Errorf("%s: %+v %v", tc.name, resp, err)
		}
		for i, s := range tc.chain {
			if len(s.asked) != tc.askedAll[i] || len(s.asked) > 0 && s.asked[0] != named[i].Name {
				t.Errorf("%s: model %d asked %v", tc.name, i, s.asked)
			}
		}
		if req.Model != "m1" {
			t.Errorf("%s: the request was changed", tc.name)
		}
	}
	if _, err := model.NewFallback(model.Named{Model: &stub{}}, model.Named{Model: &stub{}}); err == nil {
		t.Error("a fallback without a model id was accepted")
	}
}

func FuzzParsePasses(f *testing.F) {
	f.Add("gpt-large=model_circuit_open,gpt-small=model_unavailable")
	f.Add("a=b=c,,=,x")
	f.Fuzz(func(t *testing.T, s string) {
		p := model.ParsePasses(s)
		for _, x := range p {
			if strings.Contains(string(x.Code), "=") || strings.Contains(x.Model+string(x.Code), ",") {
				t.Fatalf("%q: pass %+v", s, x)
			}
		}
		if again := model.ParsePasses(model.FormatPasses(p)); !slices.Equal(again, p) {
			t.Fatalf("%q: %v then %v", s, p, again)
		}
	})
}
