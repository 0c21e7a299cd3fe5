package effector_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/effector"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/records"
)

// FuzzReadIntents feeds arbitrary bytes as a binary and a JSON Lines intent file: the file is
// refused as a whole (another type, a broken header) or every record decodes or is returned
// with an ErrInput, nothing panics, and every decoded intent
// gets a result (or waits as an approval) without an error.
func FuzzReadIntents(f *testing.F) {
	kr := testRing(f)
	good := lookupIntent(f, kr, "c", 1, "A-1001")
	b, _ := proto.Marshal(good)
	framed := records.AppendFrame(nil, b)
	for _, seed := range [][]byte{framed, append(framed, 0xff), {0x05, 0x01}, nil, []byte(`{"intentId":"x","entityKey":"YQ==","toolName":"orders.lookup"}` + "\n{")} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		for _, name := range []string{"in.binpb", "in.jsonl"} {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			recs, err := effector.ReadIntents(p)
			if errors.Is(err, effector.ErrInput) && (errors.Is(err, records.ErrWrongType) || errors.Is(err, records.ErrHeader)) {
				continue // a file of another type, or a broken header: refused as a whole
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if (r.Err == nil) == (r.Intent == nil) {
					t.Fatalf("record %s: intent %v, err %v", r.Source, r.Intent, r.Err)
				}
				if r.Err != nil && !errors.Is(r.Err, effector.ErrInput) {
					t.Fatalf("untyped error %v", r.Err)
				}
			}
			fx := newFixture(t, intent.ModePermissive, openBolt(t))
			if _, _, err := fx.e.HandleAll(context.Background(), recs, 4); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzArguments feeds arbitrary argument documents to the support agent's tools: each is
// either presented to the tool or REJECTED with bad_arguments; nothing panics.
func FuzzArguments(f *testing.F) {
	for _, s := range []string{`{"support.lookup_order.order_id":"A-1001"}`, `{}`, `{"support.lookup_order.order_id":1}`, `[`, `{"support.lookup_order.order_id":"\u0000"}`} {
		f.Add(s)
	}
	fx := newFixture(f, intent.ModeOff, &memStore{m: map[string][]byte{}})
	var n int64
	f.Fuzz(func(t *testing.T, args string) {
		n++
		ti := &pb.ToolIntent{IntentId: intent.ID([]byte("f"), n, 0), EntityKey: []byte("f"), ToolName: "orders.lookup", ArgsJson: args}
		out, err := fx.e.Handle(context.Background(), ti)
		if err != nil {
			t.Fatal(err)
		}
		switch st := out.Envelope.GetToolResult().GetStatus(); st {
		case pb.ToolResult_OK, pb.ToolResult_REJECTED:
		default:
			t.Fatalf("status %v", st)
		}
	})
}
