package cli

import (
	"flag"
	"strings"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"

	"github.com/beamagents/beamagents/otlpexport"
	"github.com/beamagents/beamagents/pipeline"
)

// productionFlags are the run flags for running at scale: the runner (Beam's own --runner,
// defined in package runners; --endpoint, --environment_type, --job_name, --project, --region,
// --update … are Beam's too), sharded and windowed outputs, and the OTLP trace export.
var productionFlags struct {
	once         sync.Once
	shards       *int
	window       *time.Duration
	otlpEndpoint *string
	otlpProtocol *string
	otlpInsecure *bool
}

func defineProductionFlags() {
	productionFlags.once.Do(func() {
		productionFlags.shards = flag.Int("shards", 0, "write each output as N shards written in parallel (NAME-SSSSS-of-NNNNN.*) instead of one sorted file")
		productionFlags.window = flag.Duration("window", 0, "with --shards: cut outputs into fixed event-time windows of this length (needed for unbounded inputs)")
		productionFlags.otlpEndpoint = flag.String("otlp_endpoint", "", "export trace events as OpenTelemetry spans to this OTLP endpoint (HOST:PORT)")
		productionFlags.otlpProtocol = flag.String("otlp_protocol", "grpc", "OTLP transport: grpc or http")
		productionFlags.otlpInsecure = flag.Bool("otlp_insecure", false, "OTLP in plaintext instead of TLS (a collector on the same host or network)")
	})
}

// applyProductionFlags copies the production flags into the pipeline options.
func applyProductionFlags(o *pipeline.Options) {
	o.Shards = *productionFlags.shards
	o.Window = *productionFlags.window
	o.OTLP = otlpexport.Options{Endpoint: *productionFlags.otlpEndpoint, Protocol: *productionFlags.otlpProtocol, Insecure: *productionFlags.otlpInsecure}
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
