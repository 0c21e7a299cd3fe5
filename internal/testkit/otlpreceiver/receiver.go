package otlpreceiver

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"

	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// A Receiver keeps the spans of every export request.
type Receiver struct {
	collectorpb.UnimplementedTraceServiceServer
	Endpoint string // HOST:PORT

	mu    sync.Mutex
	spans []*tracepb.Span
	close func()
}

// Export implements the OTLP TraceService.
func (r *Receiver) Export(_ context.Context, req *collectorpb.ExportTraceServiceRequest) (*collectorpb.ExportTraceServiceResponse, error) {
	r.keep(req)
	return &collectorpb.ExportTraceServiceResponse{}, nil
}

func (r *Receiver) keep(req *collectorpb.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			r.spans = append(r.spans, ss.GetSpans()...)
		}
	}
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...)
}

// Close stops the server.
func (r *Receiver) Close() { r.close() }

// StartGRPC serves the OTLP gRPC TraceService on a loopback port.
func StartGRPC() (*Receiver, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Receiver{Endpoint: l.Addr().String()}
	srv := grpc.NewServer()
	collectorpb.RegisterTraceServiceServer(srv, r)
	go srv.Serve(l)
	r.close = srv.Stop
	return r, nil
}

// StartHTTP serves OTLP/HTTP (binary protobuf on POST /v1/traces) on a loopback port.
func StartHTTP() (*Receiver, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Receiver{Endpoint: l.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		msg := &collectorpb.ExportTraceServiceRequest{}
		if err == nil {
			err = proto.Unmarshal(body, msg)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.keep(msg)
		b, _ := proto.Marshal(&collectorpb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(b)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	r.close = func() { srv.Close() }
	return r, nil
}
