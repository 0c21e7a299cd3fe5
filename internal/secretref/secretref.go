package secretref

import (
	"context"
	"fmt"
	"hash/crc32"
	"os"
	"strings"
	"sync"
	"time"

	secretmanager "cloud.google.com/go/secretmanager/apiv1"
	"cloud.google.com/go/secretmanager/apiv1/secretmanagerpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/beamagents/beamagents/internal/errs"
)

// Scheme is the reference scheme: gcpsm:projects/P/secrets/S/versions/V.
const Scheme = "gcpsm"

// EndpointEnv names the environment variable that points the client at another server
// (host:port, plaintext, no credentials).
const EndpointEnv = "BEAMAGENTS_SECRETMANAGER_HOST"

// ReadTimeout bounds one read, retries included.
const ReadTimeout = 30 * time.Second

// Code is a stable error code.
type Code string

// Error is this package's typed error.
type Error = errs.Error[Code]

// Codes.
const (
	CodeBadReference     Code = "bad_reference"
	CodeNotFound         Code = "not_found"
	CodePermissionDenied Code = "permission_denied"
	CodeUnavailable      Code = "unavailable"
	CodeCorrupt          Code = "corrupt"
)

// Is reports whether ref uses this package's scheme.
func Is(ref string) bool { return strings.HasPrefix(ref, Scheme+":") }

// Check checks the form of a reference without reading it.
func Check(ref string) error {
	_, err := name(ref)
	return err
}

// name returns the secret version's resource name of ref.
func name(ref string) (string, error) {
	n, ok := strings.CutPrefix(ref, Scheme+":")
	p := strings.Split(n, "/")
	if !ok || len(p) != 6 || p[0] != "projects" || p[2] != "secrets" || p[4] != "versions" || p[1] == "" || p[3] == "" || p[5] == "" {
		return "", &Error{Code: CodeBadReference, Detail: "want gcpsm:projects/P/secrets/S/versions/V (V a number or latest)"}
	}
	return n, nil
}

var cache struct {
	mu     sync.Mutex
	values map[string][]byte
	client *secretmanager.Client
	host   string // the EndpointEnv the client was made for
}

// Read returns the secret ref names, from the process's cache after the first success.
func Read(ctx context.Context, ref string) ([]byte, error) {
	n, err := name(ref)
	if err != nil {
		return nil, err
	}
	cache.mu.Lock()
	defer cache.mu.Unlock()
	if v, ok := cache.values[n]; ok {
		return v, nil
	}
	v, err := access(ctx, n)
	if err != nil {
		return nil, err
	}
	if cache.values == nil {
		cache.values = map[string][]byte{}
	}
	cache.values[n] = v
	return v, nil
}

// access reads one secret version (under cache.mu).
func access(ctx context.Context, n string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, ReadTimeout)
	defer cancel()
	if host := os.Getenv(EndpointEnv); cache.client != nil && cache.host != host {
		cache.client.Close()
		cache.client = nil
	}
	if cache.client == nil {
		c, err := secretmanager.NewClient(ctx, clientOptions()...)
		if err != nil {
			return nil, &Error{Code: CodeUnavailable, Detail: "secret version " + n + ": cannot create the Secret Manager client", Err: err}
		}
		cache.client, cache.host = c, os.Getenv(EndpointEnv)
	}
	resp, err := cache.client.AccessSecretVersion(ctx, &secretmanagerpb.AccessSecretVersionRequest{Name: n})
	if err != nil {
		return nil, accessErr(n, err)
	}
	data := resp.GetPayload().GetData()
	if sum := resp.GetPayload().DataCrc32C; sum != nil && int64(crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli))) != *sum {
		return nil, &Error{Code: CodeCorrupt, Detail: "secret version " + n + ": the payload does not match its CRC32C checksum"}
	}
	return data, nil
}

func clientOptions() []option.ClientOption {
	host := os.Getenv(EndpointEnv)
	if host == "" {
		return nil
	}
	return []option.ClientOption{
		option.WithEndpoint(host), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
	}
}

// accessErr turns a failed access into a coded error naming the version, never the data.
func accessErr(n string, err error) error {
	st, _ := status.FromError(err)
	switch st.Code() {
	case codes.NotFound:
		return &Error{Code: CodeNotFound, Detail: fmt.Sprintf("secret version %s does not exist (or is disabled or destroyed)", n)}
	case codes.PermissionDenied, codes.Unauthenticated:
		return &Error{Code: CodePermissionDenied, Detail: fmt.Sprintf("secret version %s: access denied to this worker's credentials (it needs roles/secretmanager.secretAccessor on the secret)", n)}
	case codes.FailedPrecondition:
		return &Error{Code: CodeNotFound, Detail: fmt.Sprintf("secret version %s is disabled or destroyed", n)}
	}
	return &Error{Code: CodeUnavailable, Detail: fmt.Sprintf("secret version %s: Secret Manager answered %s", n, st.Code())}
}
