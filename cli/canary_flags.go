package cli

import (
	"strconv"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/canary"
)

// canaryAgentFlag is --canary_agent: the candidate run, for real, on a stable slice of the
// keys beside --agent (transforms.Canary).
func canaryAgentFlag() runFlag {
	return opt("canary_agent", "", "a registered agent to run, for real, on a stable slice of the keys (--canary_percent), the others staying on --agent; "+
		"an activation ends on the agent that started it",
		func(s *runSettings, v string) { s.Canary.Agent = v },
		func(n, v string, s *runSettings) check {
			return when(v != "", func() error {
				if err := registered(n, v, "agent", agent.Registered())(); err != nil {
					return err
				}
				if v == s.Agent {
					return refuseFlag(n, "the candidate is --agent itself: name another registered agent")
				}
				return nil
			})
		})
}

// canaryPercentFlag is --canary_percent: the share of the keys --canary_agent starts
// activations on; a key is in it when the first 8 bytes of SHA-256(entity key) modulo 10000
// are below percent×100.
func canaryPercentFlag() runFlag {
	return opt("canary_percent", "", "with --canary_agent: the percentage of the keys (0 to 100, by a stable hash of the entity key) "+
		"whose new activations run on it; a relaunch with a higher percentage only adds keys, a lower one only removes them",
		nil,
		func(n, v string, s *runSettings) check {
			return func() error {
				switch {
				case v == "" && s.Canary.On():
					return refuseFlag("canary_agent", "needs --canary_percent P (0 to 100)")
				case v == "":
					return nil
				case !s.Canary.On():
					return refuseFlag(n, "needs --canary_agent, the agent the slice runs on")
				}
				p, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return refuseFlag(n, "%q is not a number: want a percentage from 0 to 100", v)
				}
				if _, err := canary.FromPercent(p); err != nil {
					return refuseFlag(n, "%v", err)
				}
				s.Canary.Percent = p
				return nil
			}
		})
}
