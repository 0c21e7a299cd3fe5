package cli

import (
	"time"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/records"
)

// shadowFlags run a candidate agent beside production on the same stream, its effects
// quarantined (pipeline.ShadowOptions): its own model limits, its outputs and their topics.
// They close run's table.
var shadowFlags = []runFlag{
	heading("A shadow agent"),
	opt("shadow_agent", "", "registered agent to run beside --agent on the same input, its intents never signed nor executed "+
		"(shadow_intents), its outputs compared with production's (shadow_divergences)",
		func(s *runSettings, v string) { s.Shadow.Agent = v },
		func(n, v string, _ *runSettings) check {
			return when(v != "", registered(n, v, "agent", agent.Registered()))
		}),
	opt("shadow_agent_config", "", "file whose bytes configure the shadow agent's factory",
		func(s *runSettings, v string) { s.shadowConfig = v }, ifSet(smallFileOf(maxConfigBytes)), needsShadow),
	opt("shadow_model_concurrency", 0, "the shadow's model requests in flight at once per endpoint and worker process, "+
		"in limits of its own that never take production's (0: as --model_concurrency)",
		func(s *runSettings, v int) { s.Shadow.ModelConcurrency = v }, least(0)),
	opt("shadow_model_tpm", int64(0), "the shadow's model tokens per minute per endpoint and worker process (0: as --model_tpm)",
		func(s *runSettings, v int64) { s.Shadow.TokensPerMinute = v }, least(int64(0))),
	opt("shadow_grace", 10*time.Second, "how long past a firing's event time the comparison waits for both sides' outputs",
		func(s *runSettings, v time.Duration) { s.Shadow.GraceMs = v.Milliseconds() }, of(positive)),
	opt("shadow_intents_topic", "", "Pub/Sub topic for the shadow's intents (no effector executes them)",
		func(s *runSettings, v string) { s.Shadow.IntentsTopic = v }, needsShadow),
	opt("shadow_divergences_topic", "", "Pub/Sub topic for the comparisons of the shadow with production (ShadowComparison)",
		func(s *runSettings, v string) { s.Shadow.DivergencesTopic = v }, needsShadow),
}

func init() { runFlags = append(runFlags, shadowFlags...) }

// needsShadow refuses a shadow's flag without --shadow_agent.
func needsShadow(n, v string, s *runSettings) check {
	return when(v != "" && s.Shadow.Agent == "", func() error { return refuseFlag(n, "needs --shadow_agent") })
}

// finishShadow reads the shadow agent's configuration.
func (s *runSettings) finishShadow() (err error) {
	if s.shadowConfig != "" {
		s.Shadow.Config, err = records.ReadCapped(s.shadowConfig, maxConfigBytes)
	}
	return err
}
