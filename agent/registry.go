package agent

import (
	"fmt"
	"slices"
	"sync"
)

// A Factory builds a registered agent on the worker that runs it, from the configuration the
// pipeline carries (opaque to the runtime; for example the path of a model script). Factories
// run in DoFn setup, so credentials and clients are created where they are used and never
// travel inside the pipeline graph.
type Factory func(config []byte) (*Agent, error)

var registry = struct {
	sync.Mutex
	m map[string]Factory
}{m: map[string]Factory{}}

// Register makes an agent available by name to pipelines and the command line. Call it from
// an init function; registering a name twice panics.
func Register(name string, f Factory) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.m[name]; dup {
		panic(fmt.Sprintf("agent %q registered twice", name))
	}
	registry.m[name] = f
}

// Build builds the registered agent name from config.
func Build(name string, config []byte) (*Agent, error) {
	registry.Lock()
	f, ok := registry.m[name]
	registry.Unlock()
	if !ok {
		return nil, defErr("no agent named %q is registered (registered: %v)", name, Registered())
	}
	return f(config)
}

// Registered lists the registered agent names, sorted.
func Registered() []string {
	registry.Lock()
	defer registry.Unlock()
	names := make([]string, 0, len(registry.m))
	for n := range registry.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
