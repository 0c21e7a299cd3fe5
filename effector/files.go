package effector

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// Output file names of a files run.
const (
	ResultsName   = records.ResultsName // results.binpb and results.jsonl: ToolResult and Approval envelopes
	MalformedName = "malformed"         // malformed.jsonl: input records that are not intents, and intents held back
)

// Record is one input record: a ToolIntent, or the reason it is not one.
type Record struct {
	Source string // file:record number (1-based)
	Intent *pb.ToolIntent
	Err    error
	// Emitted is when the intent was emitted as its file records it: the file's
	// modification time (zero: unknown). ExpiryEmission measures the intent's window from it.
	Emitted time.Time
}

// ReadIntents reads the intent files matching glob, as the pipeline writes them: JSON Lines
// (protojson, *.jsonl or *.json) or typed record files of ToolIntents (anything else; an
// unheadered binary file is read as varint-length-delimited ToolIntents). A record that does
// not decode is returned with Err set; a broken binary framing ends its file with one such
// record. A file of another type (a binary file whose header names another message, a JSON
// Lines file whose first record has another message's shape) is refused as a whole, and of
// the two renderings of one output (NAME.binpb and NAME.jsonl side by side, as `run` writes
// them, the binary one typed) only the binary one is read, so that a glob such as 'out/intents.*' reads each intent
// once. Each file is read whole, up to records.MaxFileBytes. Each record carries its file's
// modification time as its emission (Record.Emitted).
func ReadIntents(glob string) ([]Record, error) {
	files, err := filepath.Glob(glob)
	if err != nil {
		return nil, &Error{Code: CodeInput, Detail: "bad glob " + glob, Err: err}
	}
	files = slices.DeleteFunc(files, func(f string) bool { st, err := os.Stat(f); return err == nil && st.IsDir() })
	if len(files) == 0 {
		return nil, &Error{Code: CodeInput, Detail: "no file matches " + glob}
	}
	slices.Sort(files)
	var out []Record
	for _, f := range renderings(files) {
		recs, err := readIntentFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

// readIntentFile reads the records of one intent file; each carries the file's modification
// time as its emission.
func readIntentFile(f string) ([]Record, error) {
	// The modification time is read before the records: a file replaced in between is
	// judged by the earlier, stricter time.
	st, err := os.Stat(f)
	if err != nil {
		return nil, &Error{Code: CodeInput, Detail: "reading " + f, Err: err}
	}
	data, err := records.ReadCapped(f, records.MaxFileBytes)
	if err != nil {
		return nil, &Error{Code: CodeInput, Detail: "reading " + f, Err: err}
	}
	var recs []Record
	if records.IsJSONL(f) {
		if err := records.CheckJSON(f, records.FirstLine(data), intentType); err != nil {
			return nil, &Error{Code: CodeInput, Err: err}
		}
		recs = jsonRecords(f, data)
	} else {
		got, body, err := records.Split(data)
		if err == nil {
			err = records.Check(f, got, intentType)
		}
		if err != nil {
			return nil, &Error{Code: CodeInput, Err: err}
		}
		recs = binaryRecords(f, body)
	}
	for i := range recs {
		recs[i].Emitted = st.ModTime()
	}
	return recs, nil
}

var intentType = (&pb.ToolIntent{}).ProtoReflect().Descriptor().FullName()

// renderings drops each JSON Lines file whose binary twin (the same name with .binpb, a typed
// record file) is among files: the tool writes the two together, with the same records.
func renderings(files []string) []string {
	return slices.DeleteFunc(slices.Clone(files), func(f string) bool {
		base, ok := strings.CutSuffix(f, ".jsonl")
		return ok && slices.Contains(files, base+".binpb") && records.Typed(base+".binpb")
	})
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
	frames, broken := records.Frames(data)
	out := make([]Record, 0, len(frames)+1)
	for n, fr := range frames {
		src := fmt.Sprintf("%s:%d", file, n+1)
		ti := &pb.ToolIntent{}
		r := Record{Source: src}
		if err := proto.Unmarshal(fr, ti); err != nil {
			r.Err = &Error{Code: CodeInput, Detail: src + ": not a binary ToolIntent", Err: err}
		} else {
			r.Intent = ti
		}
		out = append(out, r)
	}
	var fe *records.Error
	if errors.As(broken, &fe) {
		src := fmt.Sprintf("%s:%d", file, len(frames)+1)
		out = append(out, Record{Source: src, Err: &Error{Code: CodeInput, Detail: src + ": " + fe.Detail}})
	}
	return out
}

// HandleAll handles records with up to workers concurrent intents and returns the result
// envelopes in record order (approvals waiting for a decision have none). The records not
// handled are returned: malformed ones, and intents held back because no registered agent
// provides their tool (Err is then ErrToolUnregistered; nothing is recorded for them, and
// they run once the tool is registered), and a shadow agent's intents (Err is then
// ErrShadowIntent; they never run). Nothing is dropped silently.
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
			o, err := e.HandleEmitted(ctx, r.Intent, r.Emitted)
			outs[i], errs[i] = o.Envelope, err
		}()
	}
	wg.Wait()
	for i, env := range outs {
		if errors.Is(errs[i], ErrToolUnregistered) || errors.Is(errs[i], ErrShadowIntent) {
			malformed = append(malformed, Record{Source: recs[i].Source, Intent: recs[i].Intent, Err: errs[i]})
			continue
		}
		if errs[i] != nil {
			return nil, nil, fmt.Errorf("%s: %w", recs[i].Source, errs[i])
		}
		if env != nil {
			results = append(results, env)
		}
	}
	return results, malformed, nil
}

// WriteResults writes envelopes to dir as results.binpb (a typed record file of
// AgentEnvelopes: a header, then varint-length-delimited records) and results.jsonl
// (protojson, one compact line each), sorted by their deterministic bytes so the same results
// always make the same files; records not handled (malformed, or held back) go to
// malformed.jsonl. Each file is written under a temporary name and renamed when complete: a
// write that fails (a full disk) leaves no file cut short under a final name.
func WriteResults(dir string, envs []*pb.AgentEnvelope, malformed []Record) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &Error{Code: CodeOutput, Detail: "creating " + dir, Err: err}
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
	bin := records.Header((&pb.AgentEnvelope{}).ProtoReflect().Descriptor().FullName())
	var js []byte
	for _, r := range recs {
		bin = records.AppendFrame(bin, r)
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
	written := []string{}
	for _, f := range []struct {
		name string
		data []byte
	}{{ResultsName + ".binpb", bin}, {ResultsName + ".jsonl", js}, {MalformedName + ".jsonl", bad.Bytes()}} {
		if err := records.WriteAtomic(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			// The files of one run stand together: none of them is left beside a missing one.
			for _, w := range written {
				os.Remove(filepath.Join(dir, w))
			}
			return &Error{Code: CodeOutput, Detail: "writing " + f.name, Err: err}
		}
		written = append(written, f.name)
	}
	return nil
}
