package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/records"
)

// NoInputEnd is what InputEnd returns for an input without a single envelope and nothing
// parked to resume: every timer is then after the end.
const NoInputEnd = int64(math.MinInt64)

// InputEnd is the event time a bounded run of o ends at: the latest event time of the
// envelopes in o.Input, and of the snapshots it restores (o.Restore's, and the parked ones of
// o.Resume, whose snapshot time is the end of the run that parked them), so a resumed run
// without new envelopes parks its keys again exactly as they were. Records that do not decode are passed over (the run
// dead-letters them). It reads the files once, in the launching process, through Beam's file
// systems (local paths, gs://): this is how a bounded run knows where its input ends, which
// the stateful step only learns as the watermark jumping to the end of time.
func InputEnd(ctx context.Context, o Options) (int64, error) {
	end := NoInputEnd
	if o.Input != "" {
		err := eachRecord(ctx, o.Input, o.format(), func(rec []byte) {
			if env, _, err := records.DecodeEnvelope(o.format(), rec); err == nil {
				end = max(end, env.GetEventTimeMs())
			}
		})
		if err != nil {
			return 0, err
		}
	}
	for _, glob := range []string{o.Restore, o.Resume} {
		if glob == "" {
			continue
		}
		format := records.FormatOf(glob)
		err := eachRecord(ctx, glob, format, func(rec []byte) {
			if snap, err := drive.DecodeSnapshot(format, rec); err == nil && (glob == o.Restore || snap.GetRequestId() == drive.ParkedRequestID) {
				end = max(end, snap.GetSnapshotAtMs())
			}
		})
		if err != nil {
			return 0, err
		}
	}
	return end, nil
}

// eachRecord hands every record of the files matching glob to fn: JSON Lines (non-blank
// lines) or typed record files, as ReadRecords reads them.
func eachRecord(ctx context.Context, glob string, format records.Format, fn func([]byte)) error {
	fs, err := filesystem.New(ctx, glob)
	if err != nil {
		return err
	}
	defer fs.Close()
	files, err := fs.List(ctx, glob)
	if err != nil {
		return err
	}
	for _, name := range files {
		if err := eachRecordOf(ctx, fs, name, format, fn); err != nil {
			return fmt.Errorf("reading %s for the end of the input: %w", name, err)
		}
	}
	return nil
}

func eachRecordOf(ctx context.Context, fs filesystem.Interface, name string, format records.Format, fn func([]byte)) error {
	rc, err := fs.OpenRead(ctx, name)
	if err != nil {
		return err
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 1<<16)
	if format != records.JSON {
		if _, err := records.ReadHeader(br); err != nil {
			return nil // not a record file the run reads either: its dead letter says so
		}
		_, err := records.ReadFrames(br, MaxRecordBytes, fn)
		return err
	}
	for {
		line, err := br.ReadBytes('\n')
		if b := bytes.TrimSpace(line); len(b) > 0 && len(b) <= MaxRecordBytes {
			fn(b)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
