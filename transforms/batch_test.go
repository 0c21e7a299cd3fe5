package transforms_test

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/transforms"
)

func init() {
	register.Function3x1(stampOutput)
	register.Function2x1(windowOf)
	register.Function3x0(atEventTime)
	register.Emitter3[beam.EventTime, []byte, []byte]()
}

// atEventTime gives a keyed envelope its event time as its timestamp.
func atEventTime(key, b []byte, emit func(beam.EventTime, []byte, []byte)) {
	env := &pb.AgentEnvelope{}
	if err := proto.Unmarshal(b, env); err != nil {
		panic(err)
	}
	emit(beam.EventTime(env.GetEventTimeMs()), key, b)
}

// stampOutput names an output by its window, its timestamp and its bytes.
func stampOutput(w beam.Window, ts beam.EventTime, b []byte) string {
	return fmt.Sprintf("%v %d %x", w, ts, sha256.Sum256(b))
}

func windowOf(w beam.Window, _ []byte) string { return fmt.Sprint(w) }

// TestBatchWorkersKeepTimestampsAndWindows: keys run at once emit each output with its own
// key's timestamp, as keys run one after another do, even when a group of keys is emitted
// after the last key's call; an input not in the global window runs one key at a time, so
// each output stays in its key's window.
func TestBatchWorkersKeepTimestampsAndWindows(t *testing.T) {
	const hour = int64(time.Hour / time.Millisecond)
	var answers []answer
	var envs = envelopes()
	for i, key := range []string{"early", "late", "later"} {
		at := t0 + int64(i)*3*hour
		for seq := range int64(3) {
			envs = append(envs, envelopes(ext(key, at+seq*1000, fmt.Sprintf("message %d", seq)))...)
			answers = append(answers, answer{key, seq, 0, reply("noted")})
		}
	}
	opts := transforms.Options{Agent: support.Name, Config: agentConfig(t, answers), AllowUnsignedIntents: true}
	p, s := beam.NewPipelineWithRoot()
	keyed, _ := transforms.DecodeEnvelopes(s, transforms.Binary, beam.CreateList(s, envs))
	windowed := beam.WindowInto(s, window.NewFixedWindows(time.Hour), beam.ParDo(s, atEventTime, keyed))
	stamped := func(in beam.PCollection, workers int) beam.PCollection {
		o := opts
		o.BatchWorkers = workers
		out := transforms.RunAgentBatch(s, o, in)
		all := beam.Flatten(s, out.Finals, out.Traces)
		return beam.WindowInto(s, window.NewGlobalWindows(), beam.ParDo(s, stampOutput, all))
	}
	passert.Equals(s, stamped(keyed, 4), stamped(keyed, 1))
	passert.Count(s, transforms.RunAgentBatch(s, transforms.Options{Agent: opts.Agent, Config: opts.Config, BatchWorkers: 4}, keyed).Finals, "finals", 9)
	passert.Equals(s, stamped(windowed, 4), stamped(windowed, 1))
	finals := transforms.RunAgentBatch(s, transforms.Options{Agent: opts.Agent, Config: opts.Config, BatchWorkers: 4}, windowed).Finals
	var want []any
	for i := range 3 {
		start := time.UnixMilli(t0 + int64(i)*3*hour)
		for range 3 {
			want = append(want, fmt.Sprint(window.IntervalWindow{Start: beam.EventTime(start.UnixMilli()), End: beam.EventTime(start.UnixMilli() + hour)}))
		}
	}
	passert.Equals(s, beam.WindowInto(s, window.NewGlobalWindows(), beam.ParDo(s, windowOf, finals)), want...)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}
