package pipeline_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"google.golang.org/protobuf/encoding/protodelim"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/transforms"
)

func init() {
	register.Function2x0(recordSize)
	register.Function2x0(one)
	register.Function3x1(writeTotals)
}

func recordSize(rec []byte, emit func(int64)) { emit(int64(len(rec))) }

func one(_ int64, emit func(int64)) { emit(1) }

func writeTotals(path string, n, total int64) error {
	return os.WriteFile(path, fmt.Appendf(nil, "%d %d", n, total), 0o644)
}

// largeEnvelope is record i of a generated input: about 1 KiB of event per envelope.
func largeEnvelope(i int) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: fmt.Appendf(nil, "customer-%d", i%1000), EventTimeMs: 1767225600000 + int64(i),
		Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: bytes.Repeat([]byte{byte('a' + i%26)}, 1000)}}
}

// writeLargeInput writes n generated envelopes as JSON Lines or length-delimited binary and
// returns the file's size.
func writeLargeInput(t testing.TB, path string, format transforms.Format, n int) int64 {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range n {
		env := largeEnvelope(i)
		if format == transforms.Binary {
			protodelim.MarshalTo(w, env)
			continue
		}
		fmt.Fprintf(w, `{"entityKey":%q,"eventTimeMs":"%d","externalEvent":%q}`+"\n",
			base64.StdEncoding.EncodeToString(env.EntityKey), env.EventTimeMs, base64.StdEncoding.EncodeToString(env.GetExternalEvent()))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	return st.Size()
}

// TestLargeInputWorker is the subprocess of TestLargeInput: it runs one pipeline over the file
// in BEAMAGENTS_LARGE_INPUT and prints the process's peak resident memory (VmHWM).
func TestLargeInputWorker(t *testing.T) {
	in := os.Getenv("BEAMAGENTS_LARGE_INPUT")
	if in == "" {
		t.Skip("run by TestLargeInput as a subprocess")
	}
	out := os.Getenv("BEAMAGENTS_LARGE_OUTPUT")
	p, s := beam.NewPipelineWithRoot()
	format := transforms.Format(os.Getenv("BEAMAGENTS_LARGE_FORMAT"))
	records, _ := pipeline.ReadRecords(s, in, format)
	switch os.Getenv("BEAMAGENTS_LARGE_MODE") {
	case "read":
		sizes := beam.ParDo(s, recordSize, records)
		n := stats.Sum(s, beam.ParDo(s, one, sizes))
		beam.ParDo0(s, writeTotals, beam.Create(s, filepath.Join(out, "totals")), beam.SideInput{Input: n}, beam.SideInput{Input: stats.Sum(s, sizes)})
	case "shards":
		keyed, _ := transforms.DecodeEnvelopes(s, format, records)
		envs := beam.DropKey(s, keyed)
		pipeline.WriteShards(s, out, "envelopes", "beam_agents.v1.AgentEnvelope", envs, 8, 0)
	case "sorted":
		keyed, _ := transforms.DecodeEnvelopes(s, format, records)
		pipeline.WriteRecords(s, out, "envelopes", "beam_agents.v1.AgentEnvelope", beam.DropKey(s, keyed))
	}
	if _, err := pipeline.Execute(context.Background(), "prism", p); err != nil {
		t.Fatal(err)
	}
	status, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			fmt.Println("PEAK", strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:")))
		}
	}
}

// A run over an input far larger than a worker should hold in one piece, in a subprocess
// whose peak resident memory is measured: the JSON Lines file is read in splits and the
// binary file streamed, record by record (the reader holds no file whole, so the peak stays
// below the input's size), and the sharded sink writes every record. The figures are in
// docs/benchmarks.md.
func TestLargeInput(t *testing.T) {
	if testing.Short() {
		t.Skip("generates about 300 MB of input")
	}
	dir := t.TempDir()
	var base int64 // the peak of the small run: the process without a large input
	for _, tc := range []struct {
		name, mode string
		format     transforms.Format
		n          int
		belowInput bool // what the input adds to the peak must stay below half the input's size
	}{
		{"json read, small", "read", transforms.JSON, 1000, false},
		{"json read", "read", transforms.JSON, 120000, true},
		{"binary read", "read", transforms.Binary, 120000, true},
		{"json read and sharded sink", "shards", transforms.JSON, 40000, false},
		{"json read and sorted single-file sink", "sorted", transforms.JSON, 40000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+map[transforms.Format]string{transforms.JSON: ".jsonl", transforms.Binary: ".binpb"}[tc.format])
			size := writeLargeInput(t, in, tc.format, tc.n)
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+"_out")
			os.MkdirAll(out, 0o755)
			cmd := exec.Command(os.Args[0], "-test.run", "^TestLargeInputWorker$", "-test.v")
			cmd.Env = append(os.Environ(), "BEAMAGENTS_LARGE_INPUT="+in, "BEAMAGENTS_LARGE_OUTPUT="+out,
				"BEAMAGENTS_LARGE_FORMAT="+string(tc.format), "BEAMAGENTS_LARGE_MODE="+tc.mode)
			b, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("worker: %v\n%s", err, b)
			}
			peak := peakKiB(t, b) << 10
			t.Logf("FIGURE %s: input %d MiB (%d records), peak RSS %d MiB (%.2f x input)", tc.name, size>>20, tc.n, peak>>20, float64(peak)/float64(size))
			if base == 0 {
				base = peak
			}
			if tc.belowInput && peak-base >= size/2 {
				t.Errorf("peak RSS %d bytes grew by %d over the small run's, not below half the input's %d bytes", peak, peak-base, size)
			}
			got := countRecords(t, out, tc.mode)
			if got != int64(tc.n) {
				t.Errorf("%d records came out, want %d", got, tc.n)
			}
		})
	}
}

func peakKiB(t *testing.T, out []byte) int64 {
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "PEAK" && f[2] == "kB" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil {
				return n
			}
		}
	}
	t.Fatalf("no peak in the worker's output:\n%s", out)
	return 0
}

func countRecords(t *testing.T, out, mode string) int64 {
	if mode == "read" {
		b, err := os.ReadFile(filepath.Join(out, "totals"))
		if err != nil {
			t.Fatal(err)
		}
		var n, total int64
		fmt.Sscan(string(b), &n, &total)
		return n
	}
	if mode == "sorted" {
		b, err := os.ReadFile(filepath.Join(out, "envelopes.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return int64(bytes.Count(b, []byte("\n")))
	}
	files, _ := filepath.Glob(filepath.Join(out, "envelopes-*-of-00008.jsonl"))
	var n int64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n += int64(bytes.Count(b, []byte("\n")))
	}
	if len(files) != 8 {
		t.Errorf("%d shards, want 8", len(files))
	}
	return n
}
