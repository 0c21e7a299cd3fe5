package model

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Named is a model with the id it is asked by.
type Named struct {
	Name  string
	Model Streamer
}

// Pass is a model a fallback chain passed over: its id and the code of its failure.
type Pass struct {
	Model string
	Code  Code
}

func (p Pass) String() string { return p.Model + "=" + string(p.Code) }

// FormatPasses renders passes as the LLM_CALL trace shows them: "model=code,…".
func FormatPasses(passes []Pass) string {
	s := make([]string, len(passes))
	for i, p := range passes {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// ParsePasses reads FormatPasses's rendering back.
func ParsePasses(s string) []Pass {
	if s == "" {
		return nil
	}
	var out []Pass
	for _, item := range strings.Split(s, ",") {
		i := strings.LastIndexByte(item, '=')
		if i < 0 {
			continue
		}
		out = append(out, Pass{Model: item[:i], Code: Code(item[i+1:])})
	}
	return out
}

// Fallback asks its models in order. When one is unavailable (CodeUnavailable, CodeTimeout)
// or its circuit breaker refuses (CodeCircuitOpen), the next is asked with the same request
// under its own id, unless the failing one had already delivered part of a streamed answer
// (the caller's decoder cannot take another). Any other failure ends the call. The answer
// says which model answered (Response.AnsweredBy) and which were passed over.
type Fallback struct {
	models []Named
}

// NewFallback returns a chain of models: the first is asked by the request's own model id,
// each later one by its Name, which must not be empty.
func NewFallback(models ...Named) (*Fallback, error) {
	if len(models) == 0 {
		return nil, fmt.Errorf("model: a fallback chain needs a model")
	}
	for i, m := range models {
		if m.Model == nil || i > 0 && m.Name == "" {
			return nil, fmt.Errorf("model: fallback %d has no model or no model id", i)
		}
	}
	return &Fallback{models: models}, nil
}

// Generate asks each model in turn for the complete response.
func (f *Fallback) Generate(ctx context.Context, req *Request) (*Response, error) {
	return f.each(req, func(m Streamer, r *Request) (*Response, bool, error) {
		resp, err := m.Generate(ctx, r)
		return resp, false, err
	})
}

// Stream asks each model in turn for a streamed response.
func (f *Fallback) Stream(ctx context.Context, req *Request, onChunk func([]byte) error) (*Response, error) {
	return f.each(req, func(m Streamer, r *Request) (*Response, bool, error) {
		began := false
		resp, err := m.Stream(ctx, r, func(c []byte) error {
			began = true
			return onChunk(c)
		})
		return resp, began, err
	})
}

func (f *Fallback) each(req *Request, ask func(Streamer, *Request) (*Response, bool, error)) (*Response, error) {
	var passes []Pass
	var last error
	for i, m := range f.models {
		r := req
		if i > 0 {
			c := *req
			c.Model = m.Name
			r = &c
		}
		resp, began, err := ask(m.Model, r)
		if err == nil {
			if i > 0 {
				resp.AnsweredBy = r.Model
			}
			resp.Passed = passes
			return resp, nil
		}
		var e *Error
		if began || !errors.As(err, &e) || !unavailable(e.Code) {
			return nil, err
		}
		passes = append(passes, Pass{Model: r.Model, Code: e.Code})
		last = err
	}
	code := passes[len(passes)-1].Code
	return nil, &Error{Code: code, Detail: "every model of the fallback chain failed (" + FormatPasses(passes) + ")", Err: last}
}

func unavailable(c Code) bool {
	return c == CodeUnavailable || c == CodeTimeout || c == CodeCircuitOpen
}
