package prismsmoke

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

func init() {
	register.Function2x0(keyByEntity)
	register.DoFn6x0[beam.Window, state.Provider, timers.Provider, []byte, *pb.AgentEnvelope, func(string)](&countFn{})
	register.Emitter2[[]byte, *pb.AgentEnvelope]()
	register.Emitter1[string]()
}

func keyByEntity(env *pb.AgentEnvelope, emit func([]byte, *pb.AgentEnvelope)) {
	emit(env.GetEntityKey(), env)
}

// countFn numbers each key's envelopes in its keyed state and, when the watermark passes the
// end of the window, reports the final count from a timer.
type countFn struct {
	Seq   state.Value[[]byte]
	Flush timers.EventTime
}

func newCountFn() *countFn {
	return &countFn{Seq: state.MakeValueState[[]byte]("seq.v1"), Flush: timers.InEventTime("flush.v1")}
}

func (f *countFn) ProcessElement(w beam.Window, sp state.Provider, tp timers.Provider, key []byte, env *pb.AgentEnvelope, emit func(string)) {
	n := f.read(sp) + 1
	f.Seq.Write(sp, binary.AppendUvarint(nil, n))
	f.Flush.Set(tp, w.MaxTimestamp().ToTime(), timers.WithTag("final"))
	emit(fmt.Sprintf("%s#%d:%s", key, n, env.GetExternalEvent()))
}

func (f *countFn) OnTimer(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key []byte, t timers.Context, emit func(string)) {
	emit(fmt.Sprintf("%s final %s=%d", key, t.Tag, f.read(sp)))
}

func (f *countFn) read(sp state.Provider) uint64 {
	b, ok, err := f.Seq.Read(sp)
	if err != nil {
		panic(err)
	}
	if !ok {
		return 0
	}
	n, _ := binary.Uvarint(b)
	return n
}

// Pipeline numbers the envelopes per entity key in event-time order of arrival.
func Pipeline(s beam.Scope, envs []*pb.AgentEnvelope) beam.PCollection {
	s = s.Scope("PrismSmoke")
	in := beam.CreateList(s, envs)
	keyed := beam.ParDo(s, keyByEntity, in)
	return beam.ParDo(s, newCountFn(), keyed)
}
