package drive_test

import (
	"context"
	"flag"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
)

// BenchmarkDriver runs one key's 1,000 external events (100 ms apart, every answer a reply)
// through the driver: the in-memory cost of the bounded fast path per key.
func BenchmarkDriver(b *testing.B) {
	s, err := support.Schema()
	if err != nil {
		b.Fatal(err)
	}
	doc := fmt.Sprintf(`{"schema":%q,"root_type_id":%q,"schema_digest":%q,"value":{"case":"support.reply","fields":{"support.reply.text":"Thanks, noted."}}}`,
		interaction.ValueFormat, s.RootTypeID(), s.Digest())
	d := newDriver(b, []byte(fmt.Sprintf("{\"response_text\":%q}\n", doc)), 1000)
	var values [][]byte
	for i := range 1000 {
		v, _ := proto.MarshalOptions{Deterministic: true}.Marshal(&pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: 1767225600000 + int64(i)*100,
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(fmt.Sprintf("message %d", i))}})
		values = append(values, v)
	}
	b.ResetTimer()
	for range b.N {
		d.Run(context.Background(), []byte("k"), values, func(int64, []byte) {})
	}
	b.ReportMetric(float64(len(values)*b.N)/b.Elapsed().Seconds(), "envelopes/s")
}

var outputsOnly = flag.Bool("drive.outputs_only", false, "benchmark the driver with OutputsOnly")

// BenchmarkDriverOneEach runs 1,000 keys of one external event each.
func BenchmarkDriverOneEach(b *testing.B) {
	s, err := support.Schema()
	if err != nil {
		b.Fatal(err)
	}
	doc := fmt.Sprintf(`{"schema":%q,"root_type_id":%q,"schema_digest":%q,"value":{"case":"support.reply","fields":{"support.reply.text":"Thanks, noted."}}}`,
		interaction.ValueFormat, s.RootTypeID(), s.Digest())
	d := newDriver(b, []byte(fmt.Sprintf("{\"response_text\":%q}\n", doc)), 1000)
	d.OutputsOnly = *outputsOnly
	var values [][]byte
	for i := range 1000 {
		v, _ := proto.MarshalOptions{Deterministic: true}.Marshal(&pb.AgentEnvelope{EntityKey: []byte(fmt.Sprint(i)), EventTimeMs: 1767225600000,
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(fmt.Sprintf("message %d", i))}})
		values = append(values, v)
	}
	b.ResetTimer()
	for range b.N {
		for i, v := range values {
			d.Run(context.Background(), []byte(fmt.Sprint(i)), [][]byte{v}, func(int64, []byte) {})
		}
	}
	b.ReportMetric(float64(len(values)*b.N)/b.Elapsed().Seconds(), "envelopes/s")
}
