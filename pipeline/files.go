package pipeline

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/transforms"
)

func init() {
	register.DoFn4x1[context.Context, fileio.ReadableFile, func([]byte), func([]byte), error](&readRecordsFn{})
	register.DoFn3x1[context.Context, []byte, func(*[]byte) bool, error](&writeRecordsFn{})
	register.Emitter1[[]byte]()
	register.Iter1[[]byte]()
}

// ReadRecords reads envelope records from the files matching glob: one record per non-blank
// line for JSON, varint-length-delimited records (the protodelim framing) for Binary. A file
// whose framing is broken yields a dead letter (envelope_invalid) for the rest of the file.
func ReadRecords(s beam.Scope, glob string, format transforms.Format) (records, dead beam.PCollection) {
	s = s.Scope("ReadRecords")
	files := fileio.ReadMatches(s, fileio.MatchFiles(s, glob))
	return beam.ParDo2(s, &readRecordsFn{Format: format}, files)
}

type readRecordsFn struct {
	Format transforms.Format
}

func (f *readRecordsFn) ProcessElement(ctx context.Context, file fileio.ReadableFile, emit, dead func([]byte)) error {
	data, err := file.Read(ctx)
	if err != nil {
		return err // an unreadable file is an infrastructure failure: let the runner retry
	}
	var bad error
	switch f.Format {
	case transforms.JSON:
		splitLines(data, emit)
	case transforms.Binary:
		bad = splitDelimited(data, emit)
	default:
		bad = fmt.Errorf("unknown record format %q", f.Format)
	}
	if bad != nil {
		dead(deadLetter(fmt.Errorf("%s: %w", file.Metadata.Path, bad)))
	}
	return nil
}

func splitLines(data []byte, emit func([]byte)) {
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte{'\n'})
		data = rest
		if line = bytes.TrimSpace(line); len(line) > 0 {
			emit(line)
		}
	}
}

// splitDelimited emits each varint-length-prefixed record; it stops at the first broken frame.
func splitDelimited(data []byte, emit func([]byte)) error {
	for off := 0; off < len(data); {
		n, w := binary.Uvarint(data[off:])
		if w <= 0 || n > uint64(len(data)-off-w) {
			return fmt.Errorf("broken record framing at byte %d", off)
		}
		emit(data[off+w : off+w+int(n)])
		off += w + int(n)
	}
	return nil
}

func deadLetter(err error) []byte {
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(agent.DeadLetter(nil, 0, &agent.Error{Reason: agent.ReasonEnvelopeInvalid, Err: err}))
	return b
}

// WriteRecords writes a PCollection<[]byte> of binary messages of the named type to two files
// under dir: NAME.binpb (varint-length-delimited) and NAME.jsonl (protojson, one per line). The
// records are sorted by their bytes, so the same records always make the same files, and both
// files are written even when there are no records.
func WriteRecords(s beam.Scope, dir, name string, msgType protoreflect.FullName, col beam.PCollection) {
	s = s.Scope("Write_" + name)
	imp := beam.Impulse(s)
	beam.ParDo0(s, &writeRecordsFn{Dir: dir, Name: name, Type: string(msgType)}, imp, beam.SideInput{Input: col})
}

type writeRecordsFn struct {
	Dir, Name, Type string
}

func (f *writeRecordsFn) ProcessElement(ctx context.Context, _ []byte, records func(*[]byte) bool) error {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(f.Type))
	if err != nil {
		return err
	}
	var all [][]byte
	var r []byte
	for records(&r) {
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
	return writeFile(ctx, join(f.Dir, f.Name+".jsonl"), js)
}

func render(mt protoreflect.MessageType, records [][]byte) (bin, js []byte, err error) {
	for _, r := range records {
		bin = binary.AppendUvarint(bin, uint64(len(r)))
		bin = append(bin, r...)
		m := mt.New().Interface()
		if err := proto.Unmarshal(r, m); err != nil {
			return nil, nil, fmt.Errorf("%s record does not decode: %v", mt.Descriptor().FullName(), err)
		}
		line, err := protojson.Marshal(m)
		if err != nil {
			return nil, nil, err
		}
		// protojson varies its whitespace on purpose; compacting makes the line stable.
		var c bytes.Buffer
		if err := json.Compact(&c, line); err != nil {
			return nil, nil, err
		}
		js = append(append(js, c.Bytes()...), '\n')
	}
	return bin, js, nil
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

func writeFile(ctx context.Context, p string, data []byte) error {
	fs, err := filesystem.New(ctx, p)
	if err != nil {
		return err
	}
	defer fs.Close()
	w, err := fs.OpenWrite(ctx, p)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
