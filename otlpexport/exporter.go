package otlpexport

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Protocols.
const (
	GRPC = "grpc"
	HTTP = "http"
)

// Options choose the OTLP receiver. Zero values leave the choice to the SDK's
// OTEL_EXPORTER_OTLP_* environment variables and defaults.
type Options struct {
	Endpoint string // HOST:PORT of the receiver
	Protocol string // GRPC (the default) or HTTP (protobuf over HTTP, path /v1/traces)
	Insecure bool   // plaintext instead of TLS
}

// NewExporter returns the official OTLP span exporter for o.
func NewExporter(ctx context.Context, o Options) (sdktrace.SpanExporter, error) {
	switch o.Protocol {
	case "", GRPC:
		var opts []otlptracegrpc.Option
		if o.Endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpoint(o.Endpoint))
		}
		if o.Insecure {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
		return otlptracegrpc.New(ctx, opts...)
	case HTTP:
		var opts []otlptracehttp.Option
		if o.Endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpoint(o.Endpoint))
		}
		if o.Insecure {
			opts = append(opts, otlptracehttp.WithInsecure())
		}
		return otlptracehttp.New(ctx, opts...)
	}
	return nil, fmt.Errorf("otlpexport: unknown protocol %q (want %s or %s)", o.Protocol, GRPC, HTTP)
}
