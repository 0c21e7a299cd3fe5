package effector

import (
	"errors"
	"testing"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pubsub/wire"
)

// FuzzDecodeIntentMessage: any message data, binary or JSON, decodes to an intent or is
// refused with ErrInput; a decoded binary intent round-trips.
func FuzzDecodeIntentMessage(f *testing.F) {
	ti := &pb.ToolIntent{IntentId: "i", EntityKey: []byte("k"), ToolName: "t", ArgsJson: `{}`}
	b, _ := proto.Marshal(ti)
	js, _ := protojson.Marshal(ti)
	f.Add(b, false)
	f.Add(js, true)
	f.Add([]byte{0xff, 0x01}, false)
	f.Add([]byte(`{"intentId":1}`), true)
	f.Fuzz(func(t *testing.T, data []byte, asJSON bool) {
		m := &pubsubpb.PubsubMessage{Data: data, MessageId: "m"}
		if asJSON {
			m.Attributes = map[string]string{wire.AttrContentType: wire.ContentTypeJSON}
		}
		got, err := decodeIntentMessage(m)
		if err != nil {
			if !errors.Is(err, ErrInput) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if got == nil {
			t.Fatal("nil intent without an error")
		}
	})
}
