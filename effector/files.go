package effector

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// Output file names of a files run.
const (
	ResultsName   = "results"   // results.binpb and results.jsonl: ToolResult and Approval envelopes
	MalformedName = "malformed" // malformed.jsonl: input records that are not intents
)

// Record is one input record: a ToolIntent, or the reason it is not one.
type Record struct {
	Source string // file:record number (1-based)
	Intent *pb.ToolIntent
	Err    error
}

// ReadIntents reads the intent files matching glob, as the pipeline writes them: JSON Lines
// (protojson, *.jsonl or *.json) or varint-length-delimited binary (anything else). A record
// that does not decode is returned with Err set; a broken binary framing ends its file with
// one such record.
func ReadIntents(glob string) ([]Record, error) {
	files, err := filepath.Glob(glob)
	if err != nil {
		return nil, &Error{Code: CodeInput, Detail: "bad glob " + glob, Err: err}
	}
	if len(files) == 0 {
		return nil, &Error{Code: CodeInput, Detail: "no file matches " + glob}
	}
	slices.Sort(files)
	var out []Record
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, &Error{Code: CodeInput, Detail: "reading " + f, Err: err}
		}
		if ext := filepath.Ext(f); ext == ".jsonl" || ext == ".json" {
			out = append(out, jsonRecords(f, data)...)
		} else {
			out = append(out, binaryRecords(f, data)...)
		}
	}
	return out, nil
}

func jsonRecords(file string, data []byte) []Record {
	var out []Record
	n := 0
	for line := range strings.SplitSeq(string(data), "\n") {
		n++
		if strings.TrimSpace(line) == "" {
			continue
		}
		ti := &pb.ToolIntent{}
		r := Record{Source: fmt.Sprintf("%s:%d", file, n)}
		if err := protojson.Unmarshal([]byte(line), ti); err != nil {
			r.Err = &Error{Code: CodeInput, Detail: r.Source + ": not a JSON ToolIntent", Err: err}
		} else {
			r.Intent = ti
		}
		out = append(out, r)
	}
	return out
}

func binaryRecords(file string, data []byte) []Record {
	var out []Record
	for off, n := 0, 1; off < len(data); n++ {
		src := fmt.Sprintf("%s:%d", file, n)
		size, w := binary.Uvarint(data[off:])
		if w <= 0 || size > uint64(len(data)-off-w) {
			return append(out, Record{Source: src, Err: &Error{Code: CodeInput, Detail: fmt.Sprintf("%s: broken record framing at byte %d", src, off)}})
		}
		ti := &pb.ToolIntent{}
		r := Record{Source: src}
		if err := proto.Unmarshal(data[off+w:off+w+int(size)], ti); err != nil {
			r.Err = &Error{Code: CodeInput, Detail: src + ": not a binary ToolIntent", Err: err}
		} else {
			r.Intent = ti
		}
		out = append(out, r)
		off += w + int(size)
	}
	return out
}

// HandleAll handles records with up to workers concurrent intents and returns the result
// envelopes in record order (approvals waiting for a decision have none). Malformed records
// are counted and returned; nothing is dropped silently.
func (e *Effector) HandleAll(ctx context.Context, recs []Record, workers int) (results []*pb.AgentEnvelope, malformed []Record, err error) {
	if workers <= 0 {
		workers = 64
	}
	outs := make([]*pb.AgentEnvelope, len(recs))
	errs := make([]error, len(recs))
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i, r := range recs {
		if r.Err != nil {
			e.metrics.add(CountMalformed, 1)
			malformed = append(malformed, r)
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			o, err := e.Handle(ctx, r.Intent)
			outs[i], errs[i] = o.Envelope, err
		}()
	}
	wg.Wait()
	for i, env := range outs {
		if errs[i] != nil {
			return nil, nil, fmt.Errorf("%s: %w", recs[i].Source, errs[i])
		}
		if env != nil {
			results = append(results, env)
		}
	}
	return results, malformed, nil
}

// WriteResults writes envelopes to dir as results.binpb (varint-length-delimited binary) and
// results.jsonl (protojson, one compact line each), sorted by their deterministic bytes so
// the same results always make the same files; malformed records go to malformed.jsonl.
func WriteResults(dir string, envs []*pb.AgentEnvelope, malformed []Record) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &Error{Code: CodeInput, Detail: "creating " + dir, Err: err}
	}
	recs := make([][]byte, 0, len(envs))
	for _, env := range envs {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(env)
		if err != nil {
			return &Error{Code: CodeInput, Detail: "encoding a result", Err: err}
		}
		recs = append(recs, b)
	}
	slices.SortFunc(recs, bytes.Compare)
	var bin, js []byte
	for _, r := range recs {
		bin = binary.AppendUvarint(bin, uint64(len(r)))
		bin = append(bin, r...)
		env := &pb.AgentEnvelope{}
		proto.Unmarshal(r, env)
		line, err := protojson.Marshal(env)
		if err != nil {
			return &Error{Code: CodeInput, Detail: "rendering a result", Err: err}
		}
		var c bytes.Buffer
		json.Compact(&c, line)
		js = append(append(js, c.Bytes()...), '\n')
	}
	var bad bytes.Buffer
	w := bufio.NewWriter(&bad)
	for _, m := range malformed {
		line, _ := json.Marshal(map[string]string{"source": m.Source, "error": m.Err.Error()})
		w.Write(append(line, '\n'))
	}
	w.Flush()
	for name, data := range map[string][]byte{ResultsName + ".binpb": bin, ResultsName + ".jsonl": js, MalformedName + ".jsonl": bad.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return &Error{Code: CodeInput, Detail: "writing " + name, Err: err}
		}
	}
	return nil
}
