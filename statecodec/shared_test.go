package statecodec_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/beamagents/beamagents/statecodec"
)

const t0 = int64(1767225600000) // 2026-01-01T00:00:00Z

func golden(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "golden", "v1", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func marshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustEqualProto(t testing.TB, want, got proto.Message) {
	t.Helper()
	if d := cmp.Diff(want, got, protocmp.Transform()); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
}

// wantErr checks err against a statecodec sentinel and the cell it must name.
func wantErr(t testing.TB, err error, sentinel *statecodec.Error, cell statecodec.Cell) {
	t.Helper()
	var se *statecodec.Error
	if !errors.Is(err, sentinel) || !errors.As(err, &se) || se.Cell != cell {
		t.Fatalf("err = %v, want %s on %s", err, sentinel.Code, cell)
	}
	if !errors.Is(err, &statecodec.Error{Code: sentinel.Code, Cell: cell}) {
		t.Fatalf("err %v does not match its cell", err)
	}
}

// cacheKey returns a valid 64-hex cache key derived from s.
func cacheKey(s string) string {
	d := sha256.Sum256([]byte(s))
	return hex.EncodeToString(d[:])
}

func digest(b []byte) []byte {
	d := sha256.Sum256(b)
	return d[:]
}

// withUnknown appends a field the current schema does not know (number 99, a string).
func withUnknown(b []byte) []byte {
	return protowire.AppendString(protowire.AppendTag(bytes.Clone(b), 99, protowire.BytesType), "from-a-newer-binary")
}

func hasUnknown99(b []byte) bool {
	return bytes.Contains(b, []byte("from-a-newer-binary"))
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
