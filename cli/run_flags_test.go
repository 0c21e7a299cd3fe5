package cli

import (
	"flag"
	"testing"
)

// run's flags and their defaults, as the README and docs/ show them: the command line is
// stable API. Every one is declared once in runFlags, and only there.
func TestRunFlagsKeepTheirNamesAndDefaults(t *testing.T) {
	want := map[string]string{
		"agent": "", "agent_config": "", "allow_unsigned_intents": "false", "api_key": "", "at_end": "park", "base_url": "",
		"canary_agent": "", "canary_percent": "",
		"dedup_window": "1h0m0s", "envelope_id_attribute": "envelope_id", "errors_topic": "",
		"event_time_attribute": "", "finals_topic": "", "input": "", "input_format": "",
		"input_subscription": "", "intents_topic": "", "keyring": "", "ledger": "false", "ledger_topic": "", "memory_store": "", "mode": "streaming", "model": "scripted",
		"model_breaker_cooldown": "30s", "model_breaker_failures": "5", "model_breaker_hold": "0s",
		"model_call_timeout": "5m0s", "model_concurrency": "64", "model_fallback": "", "model_fallback_file": "",
		"model_max_attempts": "4", "model_name": "", "model_rpm": "0", "model_stream": "true",
		"model_timeout": "1m0s", "model_tpm": "0", "order_resolution_ms": "0", "ordering": "event_time",
		"otlp_endpoint": "", "otlp_insecure": "false", "otlp_protocol": "grpc", "output_dir": "", "prices": "",
		"replace": "false", "restore": "", "resume": "", "shards": "0", "snapshots_topic": "", "state_dir": "",
		"status_interval": "1s", "traces_topic": "", "verify_results": "", "window": "0s",
		"shadow_agent": "", "shadow_agent_config": "", "shadow_model_concurrency": "0", "shadow_model_tpm": "0",
		"shadow_grace": "10s", "shadow_intents_topic": "", "shadow_divergences_topic": "",
	}
	defineRunFlags()
	seen := map[string]bool{}
	for _, f := range runFlags {
		if f.heading != "" {
			continue
		}
		if seen[f.name] {
			t.Errorf("--%s is declared twice", f.name)
		}
		seen[f.name] = true
		if f.define == nil {
			continue // Beam's own
		}
		def, ok := want[f.name]
		if !ok {
			t.Errorf("--%s is not a documented run flag", f.name)
			continue
		}
		delete(want, f.name)
		got := flag.Lookup(f.name)
		if got == nil || got.DefValue != def || got.Usage == "" {
			t.Errorf("--%s: %+v, want the default %q and a help text", f.name, got, def)
		}
	}
	for name := range want {
		t.Errorf("--%s is missing", name)
	}
	if !seen["runner"] {
		t.Error("--runner (Beam's) has no check")
	}
}
