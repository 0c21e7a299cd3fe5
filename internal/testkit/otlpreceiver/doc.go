// Package otlpreceiver is an OTLP trace receiver on loopback, gRPC or HTTP, built on the
// official OTLP collector service definitions, that keeps every span it receives. Tests use
// it as the far end of the OTLP export.
package otlpreceiver
