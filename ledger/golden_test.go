package ledger_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/ledger"
	"github.com/beamagents/beamagents/tracing"
)

// The record of the golden model call (golden/v1/trace_event.binpb, with the attributes the
// core adds for a tenant, an agent and a version) is the golden ledger entry, byte for byte.
func TestGoldenEntry(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "golden", "v1", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ev := &pb.TraceEvent{}
	if err := proto.Unmarshal(read("trace_event.binpb"), ev); err != nil {
		t.Fatal(err)
	}
	ev.Attributes[tracing.AttrTenant] = "acme"
	ev.Attributes[tracing.AttrAgent] = "support"
	ev.Attributes[tracing.AttrAgentVersion] = "2026-12"
	prices, err := ledger.DecodePrices([]byte(`{"models":{"scripted-1":{"input":2.5,"output":10}}}`))
	if err != nil {
		t.Fatal(err)
	}
	e, ok := ledger.Entry(ev, prices)
	if !ok {
		t.Fatal("no entry")
	}
	got, err := proto.MarshalOptions{Deterministic: true}.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if want := read("ledger_entry.binpb"); !bytes.Equal(got, want) {
		t.Fatalf("entry %v\n= %x\nwant %x", e, got, want)
	}
}
