package statecodec_test

import (
	"bytes"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	goldenv1 "github.com/beamagents/beamagents/golden/v1"
	"github.com/beamagents/beamagents/statecodec"
)

func goldenIntent(t testing.TB, name string) *pb.ToolIntent {
	ti := &pb.ToolIntent{}
	if err := proto.Unmarshal(golden(t, name), ti); err != nil {
		t.Fatal(err)
	}
	return ti
}

func intentWithID(id string, kind pb.ToolIntent_Kind) *pb.ToolIntent {
	return &pb.ToolIntent{IntentId: id, ToolName: "refund", Kind: kind}
}

func pendingIDs(p *statecodec.Pending) []string {
	var ids []string
	for ti := range p.All() {
		ids = append(ids, ti.GetIntentId())
	}
	return ids
}

func TestPendingOperations(t *testing.T) {
	p := statecodec.NewPending()
	for _, ti := range []*pb.ToolIntent{intentWithID("a", pb.ToolIntent_TOOL), intentWithID("b", pb.ToolIntent_APPROVAL), intentWithID("c", pb.ToolIntent_TOOL)} {
		if err := p.Add(ti); err != nil {
			t.Fatal(err)
		}
	}
	refusals := []struct {
		name string
		ti   *pb.ToolIntent
	}{
		{"nil intent", nil},
		{"no intent id", intentWithID("", pb.ToolIntent_TOOL)},
		{"already pending", intentWithID("b", pb.ToolIntent_TOOL)},
		{"non-UTF-8 string field", &pb.ToolIntent{IntentId: "d", ToolName: "\xff"}},
	}
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			wantErr(t, p.Add(r.ti), statecodec.ErrInvalidArgument, statecodec.CellPending)
			if !slices.Equal(pendingIDs(p), []string{"a", "b", "c"}) {
				t.Fatal("a refused Add changed the set")
			}
		})
	}
	if ti, ok := p.Get("b"); !ok || ti.GetKind() != pb.ToolIntent_APPROVAL {
		t.Fatalf("Get(b) = %v, %v", ti, ok)
	} else {
		ti.Kind = pb.ToolIntent_TOOL // a copy
	}
	if ti, _ := p.Get("b"); ti.GetKind() != pb.ToolIntent_APPROVAL {
		t.Fatal("Get returned the stored intent, not a copy")
	}
	if _, ok := p.Get("z"); ok {
		t.Fatal("Get of a missing id")
	}
	if ti, ok := p.Remove("b"); !ok || ti.GetIntentId() != "b" {
		t.Fatalf("Remove(b) = %v, %v", ti, ok)
	}
	if _, ok := p.Remove("b"); ok {
		t.Fatal("Remove twice")
	}
	if p.Len() != 2 || !slices.Equal(pendingIDs(p), []string{"a", "c"}) {
		t.Fatalf("after remove: %v", pendingIDs(p))
	}
}

func TestPendingAddCopiesTheIntent(t *testing.T) {
	ti := intentWithID("a", pb.ToolIntent_TOOL)
	p := statecodec.NewPending()
	if err := p.Add(ti); err != nil {
		t.Fatal(err)
	}
	ti.ToolName = "changed"
	if got, _ := p.Get("a"); got.GetToolName() != "refund" {
		t.Fatal("the set aliases the caller's intent")
	}
}

func TestDecodePending(t *testing.T) {
	signed := goldenIntent(t, "tool_intent_signed.binpb")
	future := goldenIntent(t, "tool_intent_future_field.binpb")
	future.IntentId = "other-id"
	cell := func(intents ...[]byte) []byte {
		var b []byte
		for _, i := range intents {
			b = protowire.AppendBytes(protowire.AppendTag(b, 1, protowire.BytesType), i)
		}
		return b
	}
	tests := []struct {
		name      string
		in        []byte
		wantIDs   []string
		wantStats statecodec.Stats
		wantErr   bool
	}{
		{name: "empty cell", wantIDs: nil},
		{name: "golden intents, unknown fields and signatures intact", in: cell(marshal(t, signed), marshal(t, future)),
			wantIDs: []string{signed.IntentId, "other-id"}},
		{name: "repeated id keeps the later intent", in: cell(marshal(t, intentWithID("a", 1)), marshal(t, intentWithID("b", 1)), marshal(t, intentWithID("a", 2))),
			wantIDs: []string{"b", "a"}, wantStats: statecodec.Stats{DuplicatesDropped: 1}},
		{name: "an unknown cell field is kept", in: withUnknown(cell(marshal(t, intentWithID("a", 1)))), wantIDs: []string{"a"}},
		{name: "field 1 as a varint is corrupt", in: []byte{0x08, 0x01}, wantErr: true},
		{name: "truncated length is corrupt", in: []byte{0x0a, 0x05, 0x01}, wantErr: true},
		{name: "bad tag is corrupt", in: []byte{0x80}, wantErr: true},
		{name: "an intent that does not parse is corrupt", in: cell([]byte{0x0a, 0x02, 0xff, 0xff}), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := bytes.Clone(tc.in)
			p, err := statecodec.DecodePending(in)
			if !bytes.Equal(in, tc.in) {
				t.Fatal("decode modified its input")
			}
			if tc.wantErr {
				wantErr(t, err, statecodec.ErrCorrupt, statecodec.CellPending)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(pendingIDs(p), tc.wantIDs) || p.Stats() != tc.wantStats {
				t.Fatalf("ids %v stats %+v, want %v %+v", pendingIDs(p), p.Stats(), tc.wantIDs, tc.wantStats)
			}
			out, err := p.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantStats == (statecodec.Stats{}) && !bytes.Equal(out, tc.in) {
				t.Fatalf("re-encoded cell differs:\n got %x\nwant %x", out, tc.in)
			}
		})
	}
}

// A signed intent survives the cell byte for byte, so the effector still verifies it, even one
// carrying a field this binary does not know.
func TestPendingKeepsSignedIntentsVerbatim(t *testing.T) {
	for _, c := range goldenv1.Cases() {
		if c.File != "tool_intent_signed.binpb" && c.File != "tool_intent_future_field.binpb" {
			continue
		}
		p := statecodec.NewPending()
		if err := p.Add(goldenIntent(t, c.File)); err != nil {
			t.Fatal(err)
		}
		b, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		back, err := statecodec.DecodePending(b)
		if err != nil {
			t.Fatal(err)
		}
		for ti := range back.All() {
			if !bytes.Equal(marshal(t, ti), golden(t, c.File)) {
				t.Fatalf("%s changed in the pending cell", c.File)
			}
		}
	}
}
