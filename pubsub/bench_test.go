package pubsub_test

import (
	"bytes"
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/transforms"
)

// The figures harness: throughput of Pub/Sub → RunAgent → Pub/Sub against file → RunAgent →
// files on the same envelopes in the same process, and the latency from publishing an
// envelope to its final reply being published, at low load, per ordering resolution.
//
//	go test ./pubsub -run TestFigures -pubsub.bench [-pubsub.n 4000]
var (
	benchOn = flag.Bool("pubsub.bench", false, "run the throughput and latency harness (TestFigures)")
	benchN  = flag.Int("pubsub.n", 4000, "envelopes per throughput run")
)

func TestFigures(t *testing.T) {
	if !*benchOn {
		t.Skip("figures harness: run with -pubsub.bench")
	}
	keyring := writeKeyring(t)
	const keys = 100
	start := time.Now().UnixMilli()
	envs := make([]*pb.AgentEnvelope, *benchN)
	var lines [][]byte
	for i := range envs {
		envs[i] = &pb.AgentEnvelope{EntityKey: fmt.Appendf(nil, "bench-%03d", i%keys), EventTimeMs: start + int64(i),
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: fmt.Appendf(nil, "hello %d", i)}}
		b, _ := protojson.Marshal(envs[i])
		lines = append(lines, b)
	}

	// Files.
	t0 := time.Now()
	recs := fileRunAgent(t, keyring, quickAgent, bytes.Join(lines, []byte("\n")))
	fileWall := time.Since(t0)
	if len(recs[pipeline.FinalsName]) != len(envs) {
		t.Fatalf("file run: %d finals", len(recs[pipeline.FinalsName]))
	}

	// Pub/Sub: the same envelopes as a backlog, until every final is published.
	e := newEnv(t)
	for _, env := range envs {
		e.publish(marshal(t, env), nil)
	}
	o := e.options(t, keyring)
	o.Agent = quickAgent
	t0 = time.Now()
	var psWall time.Duration
	stream(t, o, 10*time.Minute, func() bool {
		if len(messages(e.finals)) >= len(envs) {
			psWall = time.Since(t0)
			return true
		}
		return false
	})
	fileRate, psRate := float64(len(envs))/fileWall.Seconds(), float64(len(envs))/psWall.Seconds()
	t.Logf("throughput, %d envelopes over %d keys: files %.0f envelopes/s (%s), Pub/Sub %.0f envelopes/s (%s): ratio %.2fx",
		len(envs), keys, fileRate, fileWall.Round(time.Millisecond), psRate, psWall.Round(time.Millisecond), psRate/fileRate)

	for _, c := range []struct {
		name       string
		ordering   transforms.Ordering
		resolution int64
	}{
		{"event-time order, default resolution (1000 ms)", "", 0},
		{"event-time order, resolution 1 ms", "", 1},
		{"arrival order", transforms.ArrivalOrder, 0},
	} {
		p50, p99, n := latency(t, keyring, c.ordering, c.resolution)
		t.Logf("latency publish → final published, %s: p50 %s, p99 %s (%d envelopes, 10/s)", c.name, p50, p99, n)
	}
}

// latency publishes one envelope every 100 ms to a running pipeline and measures the time
// from its publication to its final reply's publication (pstest's publish times).
func latency(t *testing.T, keyring string, ordering transforms.Ordering, resolution int64) (p50, p99 time.Duration, n int) {
	const count = 20
	e := newEnv(t)
	o := e.options(t, keyring)
	o.Agent = quickAgent
	o.OrderResolutionMs = resolution
	o.Ordering = ordering
	published := map[string]time.Time{}
	go func() {
		time.Sleep(2 * time.Second) // the job is up
		for i := range count {
			key := fmt.Sprintf("lat-%03d", i)
			e.publish(marshal(t, &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: time.Now().UnixMilli(),
				Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("hi")}}), nil)
			time.Sleep(100 * time.Millisecond)
		}
	}()
	stream(t, o, 2*time.Minute, func() bool { return len(messages(e.finals)) >= count })
	for _, m := range messages(e.in) {
		env := &pb.AgentEnvelope{}
		mustUnmarshal(t, m.Data, env)
		published[string(env.GetEntityKey())] = m.PublishTime
	}
	var lat []time.Duration
	for _, m := range messages(e.finals) {
		lat = append(lat, m.PublishTime.Sub(published[m.OrderingKey]))
	}
	slices.Sort(lat)
	return lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)*99/100].Round(time.Millisecond), len(lat)
}
