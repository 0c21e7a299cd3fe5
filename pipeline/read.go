package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/textio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/transforms"
)

func init() {
	register.DoFn3x0[string, func([]byte), func([]byte)](&lineRecordFn{})
	register.DoFn4x1[context.Context, fileio.ReadableFile, func([]byte), func([]byte), error](&readDelimitedFn{})
}

// MaxRecordBytes bounds one input record. A longer JSON line, or a binary frame announcing
// more, is a dead letter (envelope_invalid) instead of an allocation of that size.
const MaxRecordBytes = 16 << 20

// ReadRecords reads envelope records from the files matching glob: one record per non-blank
// line for JSON, varint-length-delimited records (the protodelim framing) for Binary.
//
// JSON Lines files are read in splits of byte offsets (Beam's splittable text reader: a split
// starts at the first line beginning at or after its offset), so one large file is read by
// many workers, each holding one line at a time. Binary files are streamed record by record,
// one file per worker: varint framing has no marker from which a reader starting mid-file
// could find the next record, so a binary file is not split; give a large binary input as
// several files. A binary file whose framing breaks yields a dead letter (envelope_invalid)
// for the rest of that file.
//
// A binary file is a typed record file (docs/files.md): one whose header names another type
// than AgentEnvelope is a dead letter naming both types, and none of its records is read; a
// file without a header is read as envelopes.
func ReadRecords(s beam.Scope, glob string, format transforms.Format) (records, dead beam.PCollection) {
	return ReadRecordsOf(s, glob, format, envelopeType)
}

// ReadRecordsOf is ReadRecords for files of records of type msgType (StateSnapshot for a
// restore).
func ReadRecordsOf(s beam.Scope, glob string, format transforms.Format, msgType protoreflect.FullName) (records, dead beam.PCollection) {
	s = s.Scope("ReadRecords")
	if format == transforms.JSON {
		//lint:ignore SA1019 textio.Read would rename the step the --update manifest pins (textio.ReadSdf) and guess compression from file extensions.
		return beam.ParDo2(s, &lineRecordFn{}, textio.ReadSdf(s, glob))
	}
	files := fileio.ReadMatches(s, fileio.MatchFiles(s, glob))
	return beam.ParDo2(s, &readDelimitedFn{Format: format, Type: string(msgType)}, files)
}

var envelopeType = (&pb.AgentEnvelope{}).ProtoReflect().Descriptor().FullName()

// lineRecordFn turns a text line into a record: blank lines are skipped, overlong ones are
// dead letters.
type lineRecordFn struct{}

func (f *lineRecordFn) ProcessElement(line string, emit, dead func([]byte)) {
	b := bytes.TrimSpace([]byte(line))
	switch {
	case len(b) == 0:
	case len(b) > MaxRecordBytes:
		dead(deadLetter(fmt.Errorf("a JSON line of %d bytes exceeds the record bound of %d", len(b), MaxRecordBytes)))
	default:
		emit(b)
	}
}

type readDelimitedFn struct {
	Format transforms.Format
	Type   string // the records' message type; "" reads any
}

func (f *readDelimitedFn) ProcessElement(ctx context.Context, file fileio.ReadableFile, emit, dead func([]byte)) error {
	if f.Format != transforms.Binary {
		dead(deadLetter(fmt.Errorf("%s: unknown record format %q", file.Metadata.Path, f.Format)))
		return nil
	}
	rc, err := file.Open(ctx)
	if err != nil {
		return err // an unreadable file is an infrastructure failure: let the runner retry
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 1<<16)
	got, herr := records.ReadHeader(br)
	if herr == nil && f.Type != "" {
		herr = records.Check(file.Metadata.Path, got, protoreflect.FullName(f.Type))
	}
	if herr != nil {
		dead(deadLetter(herr))
		return nil
	}
	bad, err := records.ReadFrames(br, MaxRecordBytes, emit)
	var fe *records.Error
	if errors.As(bad, &fe) {
		dead(deadLetter(fmt.Errorf("%s: %s", file.Metadata.Path, fe.Detail)))
	}
	return err
}
