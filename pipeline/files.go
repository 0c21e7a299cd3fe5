package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/records"
)

func init() {
	register.DoFn4x1[context.Context, []byte, func(*[]byte) bool, func(int), error](&writeRecordsFn{})
	register.DoFn3x0[context.Context, []byte, func(*int) bool](&countWrittenFn{})
	register.Emitter1[[]byte]()
	register.Emitter1[int]()
	register.Iter1[[]byte]()
	register.Iter1[int]()
}

func deadLetter(err error) []byte {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(host.DeadLetter(nil, 0, &agent.Error{Reason: records.ReasonEnvelopeInvalid, Err: err}))
	return b
}

// WriteRecords writes a PCollection<[]byte> of binary messages of the named type to two files
// under dir: NAME.binpb (a typed record file: a header naming the type, then
// varint-length-delimited records; docs/files.md) and NAME.jsonl (protojson, one per line).
// The records are sorted by their bytes, so the same records always make the same files, and
// both files are written even when there are no records. Each file is written under a
// temporary name and renamed when complete, so a file under its final name is whole.
//
// The count of records written goes to the counter records_written.NAME, from a stage of
// its own: Prism waits for a bundle of a stage without outputs by polling, which would cost
// a core for as long as the files are being written.
func WriteRecords(s beam.Scope, dir, name string, msgType protoreflect.FullName, col beam.PCollection) {
	s = s.Scope("Write_" + name)
	written := beam.ParDo(s, &writeRecordsFn{Dir: dir, Name: name, Type: string(msgType)}, beam.Impulse(s), beam.SideInput{Input: col})
	beam.ParDo0(s, &countWrittenFn{Name: name}, beam.Impulse(s), beam.SideInput{Input: written})
}

type writeRecordsFn struct {
	Dir, Name, Type string
}

func (f *writeRecordsFn) ProcessElement(ctx context.Context, _ []byte, next func(*[]byte) bool, emit func(int)) error {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(f.Type))
	if err != nil {
		return err
	}
	var all [][]byte
	var r []byte
	for next(&r) {
		all = append(all, r)
	}
	slices.SortFunc(all, bytes.Compare)
	bin, js, err := render(mt, all)
	if err != nil {
		return err
	}
	if err := writeFile(ctx, join(f.Dir, f.Name+".binpb"), bin); err != nil {
		return err
	}
	if err := writeFile(ctx, join(f.Dir, f.Name+".jsonl"), js); err != nil {
		return err
	}
	emit(len(all))
	return nil
}

// countWrittenFn adds the records a writeRecordsFn wrote to records_written.NAME.
type countWrittenFn struct {
	Name string
}

func (f *countWrittenFn) ProcessElement(ctx context.Context, _ []byte, written func(*int) bool) {
	var n int
	for written(&n) {
		beam.NewCounter("beamagents", "records_written."+f.Name).Inc(ctx, int64(n))
	}
}

func render(mt protoreflect.MessageType, recs [][]byte) (bin, js []byte, err error) {
	bin = records.Header(mt.Descriptor().FullName())
	for _, r := range recs {
		bin = records.AppendFrame(bin, r)
		if js, err = appendJSONLine(js, mt, r); err != nil {
			return nil, nil, err
		}
	}
	return bin, js, nil
}

// appendJSONLine appends record r, a binary message of type mt, as one compact protojson line.
func appendJSONLine(js []byte, mt protoreflect.MessageType, r []byte) ([]byte, error) {
	m := mt.New().Interface()
	if err := proto.Unmarshal(r, m); err != nil {
		return nil, fmt.Errorf("%s record does not decode: %v", mt.Descriptor().FullName(), err)
	}
	line, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	// protojson varies its whitespace on purpose; compacting makes the line stable.
	c := bytes.NewBuffer(js)
	if err := json.Compact(c, line); err != nil {
		return nil, err
	}
	return append(c.Bytes(), '\n'), nil
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	if len(dir) > 5 && dir[:5] == "gs://" {
		return dir + "/" + name
	}
	return path.Join(dir, name)
}

// writeFile writes data to p through p's file system, atomically (see openAtomic).
func writeFile(ctx context.Context, p string, data []byte) error {
	w, err := openAtomic(ctx, p)
	if err != nil {
		return err
	}
	defer w.Abort()
	if _, err := w.Write(data); err != nil {
		return err
	}
	return w.Commit()
}
