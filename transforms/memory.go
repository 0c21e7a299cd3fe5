package transforms

import (
	"context"
	"sync"

	"github.com/beamagents/beamagents/ltm"
	"github.com/beamagents/beamagents/ltm/backend"
)

// memoryStores are the long-term memory stores open in this process, one per store
// reference, shared by every RunAgent instance using it: a worker opens a store once however
// many DoFn instances it runs, and closes it when the last of them is torn down.
var memoryStores = struct {
	sync.Mutex
	open map[string]*sharedStore
}{open: map[string]*sharedStore{}}

type sharedStore struct {
	store ltm.Store
	users int
}

// acquireMemory opens (or shares) the store ref names: a store reference, or a secret
// reference holding one (backend.Resolve). It returns the resolved reference, for
// releaseMemory.
func acquireMemory(ctx context.Context, ref string) (ltm.Store, string, error) {
	resolved, err := backend.Resolve(ctx, ref)
	if err != nil {
		return nil, "", err
	}
	memoryStores.Lock()
	defer memoryStores.Unlock()
	s := memoryStores.open[resolved]
	if s == nil {
		st, err := backend.Open(ctx, resolved)
		if err != nil {
			return nil, "", err
		}
		s = &sharedStore{store: st}
		memoryStores.open[resolved] = s
	}
	s.users++
	return s.store, resolved, nil
}

// releaseMemory ends one user's hold on the store of resolved; the last one closes it.
func releaseMemory(resolved string) {
	memoryStores.Lock()
	defer memoryStores.Unlock()
	s := memoryStores.open[resolved]
	if s == nil {
		return
	}
	if s.users--; s.users == 0 {
		delete(memoryStores.open, resolved)
		s.store.Close()
	}
}
