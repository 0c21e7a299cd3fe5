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
	d := newDriver(b, benchScript(b), 1000)
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

// benchScript is the throughput harness's model script (transforms.workload): every request
// answered with the same canonical reply document, so that these benchmarks profile the
// driver's share of the harness's batch variant.
func benchScript(b *testing.B) []byte {
	s, err := support.Schema()
	if err != nil {
		b.Fatal(err)
	}
	doc := fmt.Sprintf(`{"schema":%q,"root_type_id":%q,"schema_digest":%q,"value":{"case":"support.reply","fields":{"support.reply.text":"Thanks, noted."}}}`+"\n",
		interaction.ValueFormat, s.RootTypeID(), s.Digest())
	return []byte(fmt.Sprintf("{\"response_text\":%q,\"input_tokens\":120,\"output_tokens\":12}\n", doc))
}

var outputsOnly = flag.Bool("drive.outputs_only", false, "benchmark the driver with OutputsOnly")

// BenchmarkDriverOneEach runs 1,000 keys of one external event each.
func BenchmarkDriverOneEach(b *testing.B) {
	d := newDriver(b, benchScript(b), 1000)
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
