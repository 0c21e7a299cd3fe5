package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/beamagents/beamagents/console"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

func init() {
	register(&command{name: "redrive", summary: "turn chosen dead letters back into envelopes for a later run", run: runRedrive})
}

// redriveFilter chooses dead letters. Zero fields choose everything.
type redriveFilter struct {
	reason, key  string
	since, until int64 // event time, since ≤ t < until; 0 is unbounded
}

func (f redriveFilter) match(d *pb.ActivationErrorRecord) bool {
	t := d.GetEventTimeMs()
	return (f.reason == "" || d.GetReason() == f.reason) && (f.key == "" || string(d.GetEntityKey()) == f.key) &&
		(f.since == 0 || t >= f.since) && (f.until == 0 || t < f.until)
}

func runRedrive(e *env, args []string) int {
	fs := newFlags(e, "redrive", "redrive --input GLOB [--reason R] [--key K] [--since T] [--until T] --output FILE")
	input := fs.String("input", "", "dead-letter files: a glob of *.binpb (length-delimited) or *.jsonl files")
	output := fs.String("output", "", "envelope file to write: JSON Lines for *.jsonl, else length-delimited binary")
	reason := fs.String("reason", "", "only dead letters with this reason (for example model_error)")
	key := fs.String("key", "", "only dead letters of this entity key")
	since := fs.String("since", "", "only dead letters whose event time is at or after T (RFC 3339 or ms since epoch)")
	until := fs.String("until", "", "only dead letters whose event time is before T (RFC 3339 or ms since epoch)")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if *input == "" || *output == "" {
		fs.Usage()
		return 2
	}
	if code, ok := checkFlags(e, noArgs(fs),
		inputGlob(context.Background(), "input", *input, deadLetterType),
		notAnInput("output", *output, *input),
		func() error {
			if st, err := os.Stat(*output); err == nil && st.IsDir() {
				return refuseFlag("output", "%s is a folder: want a file name (*.jsonl for JSON Lines, else binary)", *output)
			}
			if err := writableDir("output", filepath.Dir(*output)); err != nil {
				return err
			}
			return nil
		},
	); !ok {
		return code
	}
	f := redriveFilter{reason: *reason, key: *key}
	var err error
	if f.since, err = parseTime(*since); err != nil {
		e.errorf("--since: %v", err)
		return 2
	}
	if f.until, err = parseTime(*until); err != nil {
		e.errorf("--until: %v", err)
		return 2
	}
	files, err := listGlob(context.Background(), "input", *input)
	if err != nil {
		e.errorf("%v", err)
		return 2
	}
	jsonl := strings.HasSuffix(*output, ".jsonl")
	var out []byte
	if !jsonl {
		out = records.Header(envelopeType)
	}
	var selected, written int
	for _, file := range files { // Glob sorts: the output is the same on every run
		recs, err := readDeadLetters(file)
		if err != nil {
			e.errorf("%v", err)
			return 1
		}
		for _, d := range recs {
			if !f.match(d) {
				continue
			}
			selected++
			env, err := console.RedriveEnvelope(d) // the console's redrive and this command choose alike
			if err != nil {
				continue
			}
			written++
			if out, err = console.AppendEnvelope(out, env, jsonl); err != nil {
				e.errorf("%v", err)
				return 1
			}
		}
	}
	if err := records.WriteAtomic(*output, out, 0o644); err != nil {
		e.errorf("%v", err)
		return 1
	}
	fmt.Fprintf(e.stdout, "%d dead letters chosen, %d envelopes written to %s, %d without an envelope\n", selected, written, *output, selected-written)
	return 0
}

// parseTime reads an event time: empty (unbounded), ms since epoch, or RFC 3339.
func parseTime(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither ms since epoch nor RFC 3339", s)
	}
	return t.UnixMilli(), nil
}

var deadLetterType = (&pb.ActivationErrorRecord{}).ProtoReflect().Descriptor().FullName()

// notAnInput refuses an output file that is one of the files the input glob matches.
func notAnInput(name, output, inputGlob string) check {
	return func() error {
		ost, err := os.Stat(output)
		if err != nil {
			return nil // a new file is no input
		}
		files, _ := filepath.Glob(inputGlob)
		for _, f := range files {
			if st, err := os.Stat(f); err == nil && os.SameFile(st, ost) {
				return refuseFlag(name, "%s is one of --input's files: redrive never overwrites its input; choose another file", output)
			}
		}
		return nil
	}
}

// readDeadLetters reads a dead-letter file as the file sinks write it.
func readDeadLetters(file string) ([]*pb.ActivationErrorRecord, error) {
	return records.ReadMessages([]string{file}, func() *pb.ActivationErrorRecord { return &pb.ActivationErrorRecord{} })
}
