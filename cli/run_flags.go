package cli

import (
	"flag"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/outfiles"
	"github.com/beamagents/beamagents/ledger"
	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/model/limit"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/pubsub"
	"github.com/beamagents/beamagents/pubsub/wire"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/transforms"
)

// runSettings are what run's flags say: the pipeline's options, and what run does itself.
type runSettings struct {
	pipeline.Options
	config                 string // --agent_config: the file whose bytes configure the agent
	fallback, fallbackFile string // --model_fallback, --model_fallback_file
	replace                bool
	resume                 string // --resume: a previous run's output folder
	shadowConfig           string // --shadow_agent_config
	stateDir               string
	statusEvery            time.Duration
}

// runFlags are run's flags, each declared once: its name, default and help, where its value
// goes in the run's settings, and its launch-time checks (validate.go), which run in the
// table's order after every value is in place. The flags are defined on the process-wide flag
// set, beside Beam's own (--runner, --endpoint, --project, --region, --temp_location,
// --update, …), which remote runners read from there. `run --help` lists them under their
// headings, in the table's order, before Beam's.
var runFlags = []runFlag{
	heading("The run"),
	opt("agent", "", "registered agent to run (beamagents help lists them)", func(s *runSettings, v string) { s.Agent = v },
		func(n, v string, _ *runSettings) check { return registered(n, v, "agent", agent.Registered()) }),
	canaryAgentFlag(),
	canaryPercentFlag(),
	beamFlag("runner", func() check { return registered("runner", runnerName(), "runner", runnerNames) }),
	opt("mode", string(pipeline.Streaming), "streaming (keyed state and timers) or batch (bounded input only: group each key's envelopes and run them in memory; the same outputs, faster)",
		func(s *runSettings, v string) { s.Mode = pipeline.Mode(v) }, among(string(pipeline.Streaming), string(pipeline.Batch))),
	opt("ordering", string(transforms.EventTimeOrder), "event_time or arrival",
		func(s *runSettings, v string) { s.Ordering = transforms.Ordering(v) }, among(string(transforms.EventTimeOrder), string(transforms.ArrivalOrder))),
	opt("at_end", string(transforms.AtEndPark), "a bounded run's keys still waiting on tool results or approvals at the end of its input: "+
		"park (their state goes to the snapshots output, for run --resume) or fail (their deadlines escalate, then fail closed as activation_timeout or approval_timeout dead letters)",
		func(s *runSettings, v string) { s.AtEnd = transforms.AtEnd(v) }, among(string(transforms.AtEndPark), string(transforms.AtEndFail))),
	opt("input_format", "", "json or binary (default: by file extension)",
		func(s *runSettings, v string) { s.InputFormat = transforms.Format(v) }, ifSet(among(string(transforms.JSON), string(transforms.Binary)))),
	opt("shards", 0, "write each output as N shards written in parallel (NAME-SSSSS-of-NNNNN.*) instead of one sorted file",
		func(s *runSettings, v int) { s.Shards = v }, least(0), most(maxShards)),
	opt("window", time.Duration(0), "with --shards: cut outputs into fixed event-time windows of this length (needed for unbounded inputs)",
		func(s *runSettings, v time.Duration) { s.Window = v }, of(nonNegative),
		func(n string, v time.Duration, s *runSettings) check {
			return when(v > 0 && s.Shards == 0, func() error { return refuseFlag(n, "needs --shards N (windowed outputs are sharded)") })
		}),
	opt("otlp_protocol", "grpc", "OTLP transport: grpc or http", func(s *runSettings, v string) { s.OTLP.Protocol = v }, among("grpc", "http")),
	opt("order_resolution_ms", int64(0), "event-time ordering resolution in ms (default 1000)",
		func(s *runSettings, v int64) { s.OrderResolutionMs = v }, least(int64(0))),
	opt("dedup_window", pubsub.DefaultDedupWindow, "how long (event time) a second delivery of a message is recognized",
		func(s *runSettings, v time.Duration) { s.PubSub.DedupWindow = v }, of(positive)),
	opt("status_interval", time.Second, "how often a streaming run prints its status line",
		func(s *runSettings, v time.Duration) { s.statusEvery = v }, of(positive)),
	listed("verbose_runner"),

	// The model, chosen when the pipeline is launched: the agent's own (scripted) or a hosted
	// provider, which each worker creates at setup, reading the key from its reference; the
	// limits every worker process keeps per endpoint; and the fallback models.
	heading("The model"),
	opt("model", hosted.Scripted, "model provider: "+strings.Join(hosted.Providers(), ", ")+" (scripted keeps the agent's own model)",
		func(s *runSettings, v string) { s.Model.Provider = v }, among(hosted.Providers()...)),
	opt("base_url", "", "the API's base URL, for any compatible server (for example http://127.0.0.1:8080/v1)",
		func(s *runSettings, v string) { s.Model.BaseURL = v }, func(n, v string, s *runSettings) check { return baseURL(n, s.Model.Provider, v) }),
	opt("api_key", "", "reference to the API key, read on the workers: env:VAR or file:PATH (never the key itself)",
		func(s *runSettings, v string) { s.Model.APIKey = v }, func(n, v string, _ *runSettings) check { return keyRef(n, v, localRunner(runnerName())) }),
	opt("model_timeout", provider.DefaultTimeout, "deadline of each model request attempt",
		func(s *runSettings, v time.Duration) { s.Model.TimeoutMs = v.Milliseconds() }, of(positive)),
	opt("model_call_timeout", provider.DefaultCallTimeout, "deadline of a whole model call, its retries and backoff included",
		func(s *runSettings, v time.Duration) { s.Model.CallTimeoutMs = v.Milliseconds() }, of(positive)),
	opt("model_max_attempts", provider.DefaultMaxAttempts, "attempts per model call (retries only on 429, 5xx, broken connections and timeouts)",
		func(s *runSettings, v int) { s.Model.MaxAttempts = v }, least(1), most(100)),
	opt("model_concurrency", limit.DefaultConcurrency, "model requests in flight at once per endpoint and worker process",
		func(s *runSettings, v int) { s.Model.Limits.Concurrency = v }, least(1)),
	opt("model_rpm", int64(0), "model requests started per minute per endpoint and worker process (0: unlimited)",
		func(s *runSettings, v int64) { s.Model.Limits.RPM = v }, least(int64(0))),
	opt("model_tpm", int64(0), "model tokens per minute per endpoint and worker process, estimated then as recorded (0: unlimited)",
		func(s *runSettings, v int64) { s.Model.Limits.TPM = v }, least(int64(0))),
	opt("model_breaker_cooldown", limit.DefaultBreakerCooldown, "the longest an open circuit breaker waits before a probe (the first goes after a sixteenth of it, the next ones after a quarter of the time it has been open)",
		func(s *runSettings, v time.Duration) { s.Model.Limits.BreakerCooldownMs = v.Milliseconds() }, of(positive)),
	opt("model_fallback_file", "", "a JSON file listing fallback models: [{\"provider\":…,\"name\":…,\"base_url\":…,\"api_key\":\"env:VAR\"}], after --model_fallback's",
		func(s *runSettings, v string) { s.fallbackFile = v }, smallFileOf(maxConfigBytes)),
	opt("model_name", "", "the provider's model id (default: the agent's)", func(s *runSettings, v string) { s.Model.Name = v }),
	opt("model_stream", true, "stream model answers (server-sent events); false for servers without streaming",
		func(s *runSettings, v bool) { s.Model.NoStream = !v }),
	opt("model_breaker_failures", limit.DefaultBreakerFailures, "consecutive unavailability failures (broken connections, 5xx, timeouts) that open an endpoint's circuit breaker (negative: no breaker)",
		func(s *runSettings, v int) { s.Model.Limits.BreakerFailures = v }),
	opt("model_breaker_hold", time.Duration(0), "how long, from when it opened, a circuit breaker holds calls waiting for a probe to succeed before it refuses them (0: four cool-downs; negative: refuse at once)",
		func(s *runSettings, v time.Duration) { s.Model.Limits.BreakerHoldMs = holdMs(v) }),
	opt("model_fallback", "", "comma-separated fallback model ids, each optionally @BASE_URL, asked in order when the one before is unavailable (same provider and key)",
		func(s *runSettings, v string) { s.fallback = v }),

	heading("The agent's configuration, signatures and verification"),
	opt("agent_config", "", "file whose bytes configure the agent's factory", func(s *runSettings, v string) { s.config = v }, smallFileOf(maxConfigBytes)),
	opt("memory_store", "", "the agent's long-term memory store (Recall, Remember), opened on each worker: sqlite:PATH, redis://[USER:PASSWORD@]HOST:PORT[/DB], "+
		"rediss://…, bigtable:projects/P/instances/I/tables/T, postgres://[USER:PASSWORD@]HOST:PORT/DB, or env:VAR, file:PATH or gcpsm:… holding one (give a password that way)",
		func(s *runSettings, v string) { s.MemoryStore = v }, func(n, v string, _ *runSettings) check { return memoryStoreRef(n, v, localRunner(runnerName())) }),
	opt("verify_results", "", "verification of tool results and approvals against --keyring: off, permissive or require "+
		"(default: require with --keyring, off without one)", nil,
		func(n, v string, s *runSettings) check {
			return when(v != "", verification(n, v, func(m intent.Mode) { s.VerifyResults = &m }))
		}),
	opt("keyring", "", "keyring reference for signing intents: env:VAR or file:PATH",
		func(s *runSettings, v string) { s.Keyring = v }, func(n, v string, _ *runSettings) check { return keyringRef(n, v, localRunner(runnerName())) }),
	opt("allow_unsigned_intents", false, "run an agent that emits intents without --keyring: its intents are emitted unsigned "+
		"(an effector verifying with --verify off or permissive accepts them; require refuses them)",
		func(s *runSettings, v bool) { s.AllowUnsignedIntents = v }),

	// Files: inputs, outputs and the state kept across restarts (their checks are
	// runFileChecks, after every other).
	heading("Files, state and traces"),
	opt("input", "", "envelope files: a glob of JSON Lines (*.jsonl) or length-delimited binary files", func(s *runSettings, v string) { s.Input = v }),
	opt("output_dir", "", "directory for the output files", func(s *runSettings, v string) { s.OutputDir = v }),
	opt("restore", "", "optional glob of StateSnapshot files to restore into keys without state first", func(s *runSettings, v string) { s.Restore = v }),
	opt("resume", "", "a previous run's --output_dir: restore the keys it parked at the end of its input (its snapshots with request id "+
		drive.ParkedRequestID+") before this run's input, which holds their answers (the effector's results, approve's decisions)",
		func(s *runSettings, v string) {
			if s.resume = v; v != "" {
				s.Resume = outfiles.Join(v, pipeline.SnapshotsName+"*.binpb")
			}
		},
		func(n, v string, s *runSettings) check {
			switch {
			case v != "" && s.Restore != "":
				return func() error { return refuseFlag(n, "give --resume or --restore, not both") }
			case v != "" && s.Ordering == transforms.ArrivalOrder:
				// A key's restore must run before its envelopes, which only event-time
				// ordering guarantees.
				return func() error {
					return refuseFlag(n, "needs --ordering event_time, which runs a key's restore before its envelopes")
				}
			}
			return func() error { return nil }
		}),
	opt("replace", false, "replace the files an earlier run left in --output_dir (without it, run refuses a folder holding them)",
		func(s *runSettings, v bool) { s.replace = v }),
	opt("state_dir", "", "streaming runs on Prism: the drain writes every key's state here, and a run started with the same directory restores it before reading its subscription",
		func(s *runSettings, v string) { s.stateDir = v }),
	opt("otlp_endpoint", "", "export trace events as OpenTelemetry spans to this OTLP endpoint (HOST:PORT)", func(s *runSettings, v string) { s.OTLP.Endpoint = v }),
	opt("otlp_insecure", false, "OTLP in plaintext instead of TLS (a collector on the same host or network)", func(s *runSettings, v bool) { s.OTLP.Insecure = v }),
	opt("ledger", false, "write the cost ledger ("+pipeline.LedgerName+".binpb, "+pipeline.LedgerName+".jsonl): one record per model call, priced by --prices",
		func(s *runSettings, v bool) { s.Ledger = v }),
	opt("prices", "", "price table of the cost ledger (turns it on): a JSON file of prices per million tokens by model id; a model it does not price costs 0 and is counted in ledger.unpriced",
		nil, ifSet(pricesFile)),

	// Pub/Sub (the topic and subscription names are the pipeline's to check).
	heading("Pub/Sub"),
	opt("input_subscription", "", "Pub/Sub input: projects/P/subscriptions/S (makes run a streaming job that runs until interrupted)",
		func(s *runSettings, v string) { s.InputSubscription = v }),
	topicFlag(records.OutIntent, "Pub/Sub topic for intents: projects/P/topics/T", func(s *runSettings, v string) { s.IntentsTopic = v }),
	topicFlag(records.OutTrace, "Pub/Sub topic for trace events", func(s *runSettings, v string) { s.TracesTopic = v }),
	topicFlag(records.OutFinal, "Pub/Sub topic for final replies", func(s *runSettings, v string) { s.FinalsTopic = v }),
	topicFlag(records.OutSnapshot, "Pub/Sub topic for state snapshots", func(s *runSettings, v string) { s.SnapshotsTopic = v }),
	topicFlag(records.OutDeadLetter, "Pub/Sub topic for dead letters and rejected input messages", func(s *runSettings, v string) { s.ErrorsTopic = v }),
	opt("ledger_topic", "", "Pub/Sub topic for the cost ledger (turns it on)", func(s *runSettings, v string) { s.LedgerTopic = v }),
	opt("event_time_attribute", "", "input attribute holding the event time when the envelope has none (ms since the epoch or RFC 3339)",
		func(s *runSettings, v string) { s.PubSub.EventTimeAttribute = v }),
	opt("envelope_id_attribute", wire.DefaultEnvelopeIDAttribute, "input attribute naming a delivery for dedup (\"-\": message ids only)",
		func(s *runSettings, v string) { s.PubSub.EnvelopeIDAttribute = v }),
}

// topicFlag is the flag naming the Pub/Sub topic of output out, named by package records.
func topicFlag(out int64, help string, set func(*runSettings, string)) runFlag {
	k, _ := records.KindOf(out)
	return opt(k.Topic, "", help, set)
}

// A runFlag is one row of runFlags: a flag, or the heading of the flags after it in
// `run --help`.
type runFlag struct {
	name    string
	heading string                   // a heading's title ("" for a flag)
	define  func(*flag.FlagSet)      // nil for a flag defined elsewhere (Beam's, or run.go's)
	apply   func(*runSettings)       // puts the parsed value into the settings
	check   func(*runSettings) check // the value's launch-time checks
}

// flagType is what a run flag holds.
type flagType interface {
	string | bool | int | int64 | time.Duration
}

// A valueCheck checks flag name's value v, given the settings all the flags made.
type valueCheck[T flagType] func(name string, v T, s *runSettings) check

// opt declares a flag: its name, default and help, set (nil for none) putting its value into
// the settings, and its checks.
func opt[T flagType](name string, value T, help string, set func(*runSettings, T), checks ...valueCheck[T]) runFlag {
	v := new(T)
	return runFlag{name: name,
		define: func(fs *flag.FlagSet) {
			switch p := any(v).(type) {
			case *string:
				fs.StringVar(p, name, any(value).(string), help)
			case *bool:
				fs.BoolVar(p, name, any(value).(bool), help)
			case *int:
				fs.IntVar(p, name, any(value).(int), help)
			case *int64:
				fs.Int64Var(p, name, any(value).(int64), help)
			case *time.Duration:
				fs.DurationVar(p, name, any(value).(time.Duration), help)
			}
		},
		apply: func(s *runSettings) {
			if set != nil {
				set(s, *v)
			}
		},
		check: func(s *runSettings) check {
			return func() error {
				for _, c := range checks {
					if err := c(name, *v, s)(); err != nil {
						return err
					}
				}
				return nil
			}
		},
	}
}

// beamFlag is a flag Beam defines, with run's check of it.
func beamFlag(name string, c func() check) runFlag {
	return runFlag{name: name, apply: func(*runSettings) {}, check: func(*runSettings) check { return c() }}
}

// listed is a flag defined elsewhere in this package, listed with run's.
func listed(name string) runFlag {
	return beamFlag(name, func() check { return func() error { return nil } })
}

// heading starts a group of flags in `run --help`.
func heading(title string) runFlag {
	return runFlag{heading: title, apply: func(*runSettings) {}, check: func(*runSettings) check { return func() error { return nil } }}
}

// of is a check of a flag's value alone (validate.go's form).
func of[T flagType](c func(name string, v T) check) valueCheck[T] {
	return func(n string, v T, _ *runSettings) check { return c(n, v) }
}

// among, least, most and smallFileOf are validate.go's checks with their bounds.
func among(allowed ...string) valueCheck[string] {
	return func(n, v string, _ *runSettings) check { return oneOf(n, v, allowed...) }
}

func least[N int | int64](lo N) valueCheck[N] {
	return func(n string, v N, _ *runSettings) check { return atLeast(n, v, lo) }
}

func most[N int | int64](hi N) valueCheck[N] {
	return func(n string, v N, _ *runSettings) check { return atMost(n, v, hi) }
}

func smallFileOf(max int64) valueCheck[string] {
	return func(n, v string, _ *runSettings) check { return smallFile(n, v, max) }
}

// ifSet checks a value only when the flag is not empty.
func ifSet(c valueCheck[string]) valueCheck[string] {
	return func(n, v string, s *runSettings) check { return when(v != "", c(n, v, s)) }
}

var runFlagsOnce sync.Once

// defineRunFlags defines run's flags on the process-wide flag set, once per process.
func defineRunFlags() {
	runFlagsOnce.Do(func() {
		for _, f := range runFlags {
			if f.define != nil {
				f.define(flag.CommandLine)
			}
		}
	})
}

// readRunFlags is the settings the parsed flags make.
func readRunFlags() *runSettings {
	s := &runSettings{}
	for _, f := range runFlags {
		f.apply(s)
	}
	return s
}

// runChecks are run's launch-time checks of its flags (see checkFlags), but those of its files
// (runFileChecks).
func runChecks(s *runSettings) []check {
	cs := []check{noArgs(flag.CommandLine)}
	for _, f := range runFlags {
		cs = append(cs, f.check(s))
	}
	return cs
}

// anyTopic reports whether a Pub/Sub output is set.
func (s *runSettings) anyTopic() bool {
	return s.IntentsTopic != "" || s.TracesTopic != "" || s.FinalsTopic != "" || s.SnapshotsTopic != "" || s.ErrorsTopic != "" || s.LedgerTopic != ""
}

// pricesFile decodes --prices into the ledger's price table and turns the ledger on.
func pricesFile(n, v string, s *runSettings) check {
	return func() error {
		if err := readPrices(n, v, &s.Prices)(); err != nil {
			return err
		}
		s.Ledger = true
		return nil
	}
}

// readPrices decodes the price file at path (flag n) into dst (package ledger's strict
// decoder): run's ledger and the console's spend page read it alike.
func readPrices(n, path string, dst *ledger.Table) check {
	return func() error {
		if err := smallFile(n, path, ledger.MaxPriceFileBytes)(); err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return refuseFlag(n, "%v", err)
		}
		if *dst, err = ledger.DecodePrices(b); err != nil {
			return refuseFlag(n, "%s: %v", path, err)
		}
		return nil
	}
}

// resetFlags puts the flags a previous run of this process set back to their defaults, so that
// every run parses from a clean slate (tests run many commands in one process). The go test
// driver's own flags (test.*) are left alone.
func resetFlags() {
	flag.CommandLine.Visit(func(f *flag.Flag) {
		if !strings.HasPrefix(f.Name, "test.") {
			f.Value.Set(f.DefValue)
		}
	})
}

func runnerName() string {
	if *runners.Runner != "" {
		return *runners.Runner
	}
	return "prism"
}
