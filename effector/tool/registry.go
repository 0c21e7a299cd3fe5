package tool

import (
	"fmt"
	"slices"
	"sync"
)

// AgentTools builds the tool implementations of an agent. It runs in the effector, where
// credentials and clients are created.
type AgentTools func() ([]Tool, error)

var agents = struct {
	sync.Mutex
	m map[string]AgentTools
}{m: map[string]AgentTools{}}

// RegisterAgentTools attaches tool implementations to the agent registered under the same
// name (agent.Register), so an effector in the same binary executes that agent's intents.
// Call it from an init function; registering a name twice panics.
func RegisterAgentTools(agentName string, f AgentTools) {
	agents.Lock()
	defer agents.Unlock()
	if _, dup := agents.m[agentName]; dup {
		panic(fmt.Sprintf("tools of agent %q registered twice", agentName))
	}
	agents.m[agentName] = f
}

// ForAgent builds the tools registered for agentName; ok is false when none are.
func ForAgent(agentName string) (tools []Tool, ok bool, err error) {
	agents.Lock()
	f, ok := agents.m[agentName]
	agents.Unlock()
	if !ok {
		return nil, false, nil
	}
	tools, err = f()
	return tools, true, err
}

// AgentsWithTools lists the agent names with registered tools, sorted.
func AgentsWithTools() []string {
	agents.Lock()
	defer agents.Unlock()
	var names []string
	for n := range agents.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
