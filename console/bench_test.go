package console_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/console"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/transforms"
)

func TestMain(m *testing.M) {
	// ptest.MainRet, not ptest.Main, so that the benchmarks' run directory is removed.
	code := ptest.MainRet(m)
	if runDir != "" {
		os.RemoveAll(runDir)
	}
	os.Exit(code)
}

var benchN = flag.Int("bench.n", 10000, "envelopes of the run whose outputs the ingest benchmarks read")

var (
	runOnce sync.Once
	runDir  string
	runErr  error
)

// runOutputs runs the support agent on Prism over n envelopes (1000 keys, each answered by
// a reply; one envelope in a hundred undecodable) and returns its output directory.
func runOutputs(b *testing.B, n int) string {
	runOnce.Do(func() {
		dir, err := os.MkdirTemp("", "console-bench-")
		if err != nil {
			runErr = err
			return
		}
		runDir = dir
		s, err := support.Schema()
		if err != nil {
			runErr = err
			return
		}
		doc := fmt.Sprintf(`{"schema":%q,"root_type_id":%q,"schema_digest":%q,"value":{"case":"support.reply","fields":{"support.reply.text":"Thanks, noted."}}}`,
			interaction.ValueFormat, s.RootTypeID(), s.Digest())
		script := filepath.Join(dir, "script.jsonl")
		os.WriteFile(script, fmt.Appendf(nil, "{\"response_text\":%q,\"input_tokens\":120,\"output_tokens\":12}\n", doc), 0o644)
		var in []byte
		for i := range n {
			rec, _ := proto.Marshal(&pb.AgentEnvelope{EntityKey: fmt.Appendf(nil, "customer-%05d", i%1000), EventTimeMs: 1767225600000 + int64(i)*100,
				Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: fmt.Appendf(nil, "message %d", i)}})
			if i%100 == 99 {
				rec = []byte{0x0a, 0xff} // not an envelope: an envelope_invalid dead letter
			}
			in = records.AppendFrame(in, rec)
		}
		input := filepath.Join(dir, "in.binpb")
		os.WriteFile(input, in, 0o644)
		_, runErr = pipeline.Run(context.Background(), "prism", pipeline.Options{
			Options: transforms.Options{Agent: support.Name, Config: fmt.Appendf(nil, `{"script":%q}`, script), AllowUnsignedIntents: true},
			Input:   input, OutputDir: filepath.Join(dir, "out"), Mode: pipeline.Batch,
		})
	})
	if runErr != nil {
		b.Fatal(runErr)
	}
	return filepath.Join(runDir, "out")
}

// BenchmarkIngest times ingesting a run's outputs into a new store, and then serving the
// overview, against the baseline of reading and decoding the same records without a store.
func BenchmarkIngest(b *testing.B) {
	out := runOutputs(b, *benchN)
	files, kinds, err := console.OutputFiles(out)
	if err != nil {
		b.Fatal(err)
	}
	// A record file opens with its header naming the type (docs/files.md).
	frames := func(f string) ([][]byte, error) {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		_, body, err := records.Split(data)
		recs, _, _ := records.SplitFrames(body)
		return recs, err
	}
	total := 0
	for _, f := range files {
		recs, err := frames(f)
		if err != nil {
			b.Fatal(err)
		}
		total += len(recs)
	}
	if total == 0 {
		b.Fatal("the run wrote no records")
	}
	b.Run("read_and_decode", func(b *testing.B) {
		for range b.N {
			for _, f := range files {
				recs, err := frames(f)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range recs {
					if err := proto.Unmarshal(r, kinds[f].New()); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
		b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
	for _, serve := range []bool{false, true} {
		name := "ingest"
		if serve {
			name = "ingest_and_overview"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				st, err := console.Open(filepath.Join(b.TempDir(), "console.db"))
				if err != nil {
					b.Fatal(err)
				}
				n, err := (&console.Follower{Store: st, Dir: out}).Scan()
				if err != nil || n != total {
					b.Fatalf("ingested %d of %d records: %v", n, total, err)
				}
				if serve {
					overviewOnce(b, st)
				}
				st.Close()
			}
			b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkOverview times serving the overview of a store holding a run's outputs.
func BenchmarkOverview(b *testing.B) {
	out := runOutputs(b, *benchN)
	st, err := console.Open(filepath.Join(b.TempDir(), "console.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if _, err := (&console.Follower{Store: st, Dir: out}).Scan(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		overviewOnce(b, st)
	}
}

var handlers sync.Map // *console.Store → http.Handler

func overviewOnce(b *testing.B, st *console.Store) {
	h, ok := handlers.Load(st)
	if !ok {
		nh, err := console.New(console.Options{Store: st, Now: func() time.Time { return time.UnixMilli(0) }})
		if err != nil {
			b.Fatal(err)
		}
		h, _ = handlers.LoadOrStore(st, nh)
	}
	w := httptest.NewRecorder()
	h.(http.Handler).ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != 200 {
		b.Fatalf("overview: %d", w.Code)
	}
}
