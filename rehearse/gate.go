package rehearse

import (
	"context"
	"sync"

	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/replay"
)

// gate is the candidate's model and inline-tool recorder: the baseline first, then the live
// model within the budget, else the key stops. Keys run one after another (start).
type gate struct {
	rec *replay.Model
	o   Options

	mu     sync.Mutex
	k      *key
	calls  int
	tokens int64
	memo   map[string]answer // live answers by cache key, for a key's reruns
}

// answer is one live call's outcome.
type answer struct {
	resp *model.Response
	err  error
}

// start starts a run of key k with the live calls and tokens spent before it.
func (g *gate) start(k *key, calls int, tokens int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.k, g.calls, g.tokens = k, calls, tokens
}

// Generate answers req from the baseline, else live within the budget, else stops the key.
func (g *gate) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := g.k
	if k.stop != "" {
		return nil, errStopped
	}
	resp, err := g.rec.Generate(ctx, req)
	if err == nil {
		k.answered++
		return resp, nil
	}
	misses := g.rec.Misses()
	d := Divergence{Kind: KindModelRequest, Seq: req.Seq, Step: req.Step, Detail: misses[len(misses)-1].String()}
	if g.o.Live == nil || g.calls >= g.o.LiveCalls || g.o.LiveTokens > 0 && g.tokens >= g.o.LiveTokens {
		k.halt(StopUnanswered, d, len(k.outputs))
		return nil, ErrUnanswered
	}
	k.note(d, len(k.outputs))
	g.calls++
	k.liveCalls++
	key := model.CacheKey(req)
	a, ok := g.memo[key]
	if !ok {
		a.resp, a.err = g.o.Live.Generate(ctx, req)
		if g.memo == nil {
			g.memo = map[string]answer{}
		}
		g.memo[key] = a
	}
	resp, err = a.resp, a.err
	if resp != nil {
		cp := *resp
		resp = &cp
		n := resp.Usage.InputTokens + resp.Usage.OutputTokens
		g.tokens += n
		k.liveTokens += n
	}
	return resp, err
}

// inline answers an inline tool run from the baseline's record; a run it did not make is a
// new effect: never run, the key stops.
func (g *gate) inline(run host.InlineRun) ([]byte, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := g.k
	if k.stop != "" {
		return nil, false
	}
	k.tools[run.Tool] = true
	if b, ok := g.rec.Inline(run); ok {
		k.inlined++
		return b, true
	}
	misses := g.rec.Misses()
	k.halt(StopNewEffect, Divergence{Kind: KindTool, Seq: run.Seq, Step: run.Step, Detail: misses[len(misses)-1].String()}, len(k.outputs))
	return nil, false
}
