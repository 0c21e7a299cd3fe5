// Package secrettest is a Secret Manager server on loopback for tests: the official
// google.cloud.secretmanager.v1 gRPC service (the client library's own secretmanagerpb),
// answering AccessSecretVersion from a map, with NotFound for an unknown version and
// PermissionDenied for the versions marked denied. Point clients at it with
// secretref.EndpointEnv.
package secrettest

import (
	"context"
	"hash/crc32"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/secretmanager/apiv1/secretmanagerpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Server is a running loopback Secret Manager.
type Server struct {
	secretmanagerpb.UnimplementedSecretManagerServiceServer
	// Addr is host:port.
	Addr string
	// Accesses counts AccessSecretVersion calls.
	Accesses atomic.Int64

	mu     sync.Mutex
	values map[string][]byte
	denied map[string]bool
}

// Start starts a server that stops when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: lis.Addr().String(), values: map[string][]byte{}, denied: map[string]bool{}}
	g := grpc.NewServer()
	secretmanagerpb.RegisterSecretManagerServiceServer(g, s)
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	return s
}

// Put stores data as the secret version name (projects/P/secrets/S/versions/V).
func (s *Server) Put(name string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values[name] = data
}

// Deny makes every access to name PermissionDenied.
func (s *Server) Deny(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.denied[name] = true
}

// AccessSecretVersion answers from the map, with the payload's CRC32C as the service sends it.
func (s *Server) AccessSecretVersion(_ context.Context, req *secretmanagerpb.AccessSecretVersionRequest) (*secretmanagerpb.AccessSecretVersionResponse, error) {
	s.Accesses.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.denied[req.GetName()] {
		return nil, status.Errorf(codes.PermissionDenied, "Permission 'secretmanager.versions.access' denied for resource '%s'", req.GetName())
	}
	v, ok := s.values[req.GetName()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "Secret [%s] not found or has no versions.", req.GetName())
	}
	sum := int64(crc32.Checksum(v, crc32.MakeTable(crc32.Castagnoli)))
	return &secretmanagerpb.AccessSecretVersionResponse{Name: req.GetName(), Payload: &secretmanagerpb.SecretPayload{Data: v, DataCrc32C: &sum}}, nil
}
