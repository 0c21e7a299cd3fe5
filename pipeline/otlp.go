package pipeline

import (
	"context"
	"errors"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/otlpexport"
)

func init() {
	register.DoFn2x1[context.Context, []byte, error](&exportTracesFn{})
}

// otlpBatch bounds the spans one export call carries.
const otlpBatch = 512

// ExportTraces exports a PCollection<[]byte> of TraceEvents as OpenTelemetry spans over OTLP
// (see package otlpexport), in batches per bundle. A failed export fails the bundle, which
// the runner retries: delivery is at least once, and a retried span has the same ids. Events
// that share a span id merge into one span when one batch holds them (otlpexport.Spans);
// held by different bundles (an escalation re-emitted minutes later) they are exported as
// versions of the same span, which a collector keeps or replaces by id.
func ExportTraces(s beam.Scope, o otlpexport.Options, traces beam.PCollection) {
	s = s.Scope("ExportTraces")
	beam.ParDo0(s, &exportTracesFn{Endpoint: o.Endpoint, Protocol: o.Protocol, Insecure: o.Insecure}, traces)
}

type exportTracesFn struct {
	Endpoint, Protocol string
	Insecure           bool

	exp     sdktrace.SpanExporter
	batch   []*pb.TraceEvent
	spans   beam.Counter
	invalid beam.Counter
}

func (f *exportTracesFn) Setup(ctx context.Context) error {
	exp, err := otlpexport.NewExporter(ctx, otlpexport.Options{Endpoint: f.Endpoint, Protocol: f.Protocol, Insecure: f.Insecure})
	f.exp = exp
	f.spans, f.invalid = beam.NewCounter("beamagents", "otlp_spans"), beam.NewCounter("beamagents", "otlp_invalid_events")
	return err
}

func (f *exportTracesFn) StartBundle(context.Context) { f.batch = f.batch[:0] }

func (f *exportTracesFn) ProcessElement(ctx context.Context, rec []byte) error {
	ev := &pb.TraceEvent{}
	if err := proto.Unmarshal(rec, ev); err != nil {
		f.invalid.Inc(ctx, 1)
		return nil
	}
	if f.batch = append(f.batch, ev); len(f.batch) >= otlpBatch {
		return f.flush(ctx)
	}
	return nil
}

func (f *exportTracesFn) FinishBundle(ctx context.Context) error { return f.flush(ctx) }

func (f *exportTracesFn) flush(ctx context.Context) error {
	if len(f.batch) == 0 {
		return nil
	}
	// An event that cannot be a span (ids of the wrong length) is counted and left out.
	spans, err := otlpexport.Spans(f.batch)
	if err != nil && !errors.Is(err, otlpexport.ErrInvalidEvent) {
		return err
	}
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		f.invalid.Inc(ctx, int64(len(joined.Unwrap())))
	}
	f.batch = f.batch[:0]
	if err := f.exp.ExportSpans(ctx, spans); err != nil {
		return err
	}
	f.spans.Inc(ctx, int64(len(spans)))
	return nil
}

func (f *exportTracesFn) Teardown(ctx context.Context) error {
	if f.exp == nil {
		return nil
	}
	return f.exp.Shutdown(ctx)
}
