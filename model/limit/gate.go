package limit

import (
	"container/list"
	"context"
	"sync"
)

// gate is a counting semaphore whose waiters are served in arrival order and whose size may
// change while it is in use.
type gate struct {
	mu      sync.Mutex
	size    int
	held    int
	waiters list.List // of chan struct{}, closed when granted
}

func (g *gate) acquire(ctx context.Context) error {
	g.mu.Lock()
	if g.held < g.size && g.waiters.Len() == 0 {
		g.held++
		g.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	el := g.waiters.PushBack(ch)
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	select {
	case <-ch: // granted while the context ended: hand it on
		g.held--
		g.grant()
	default:
		g.waiters.Remove(el)
	}
	g.mu.Unlock()
	return ctx.Err()
}

func (g *gate) release() {
	g.mu.Lock()
	g.held--
	g.grant()
	g.mu.Unlock()
}

func (g *gate) resize(n int) {
	g.mu.Lock()
	g.size = n
	g.grant()
	g.mu.Unlock()
}

// grant hands free places to the first waiters; g.mu is held.
func (g *gate) grant() {
	for g.held < g.size && g.waiters.Len() > 0 {
		close(g.waiters.Remove(g.waiters.Front()).(chan struct{}))
		g.held++
	}
}
