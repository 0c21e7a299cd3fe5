package console

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/beamagents/beamagents/records"
)

// prefixBytes is how much of a file's start identifies it across reads.
const prefixBytes = 4096

// chunkBytes bounds one read, and so one transaction.
const chunkBytes = 8 << 20

// OutputFiles lists the record files of a run's output directory, sorted: per output, the
// sorted file NAME.binpb and the shards NAME-*.binpb (windowed or not). The JSON Lines twins
// hold the same records and are not read.
func OutputFiles(dir string) ([]string, map[string]records.Kind, error) {
	var files []string
	kinds := map[string]records.Kind{}
	for _, k := range records.Kinds() {
		for _, pat := range []string{k.Name + ".binpb", k.Name + "-*.binpb"} {
			m, err := filepath.Glob(filepath.Join(dir, pat))
			if err != nil {
				return nil, nil, &Error{Code: CodeConfig, Detail: "bad output directory " + dir, Err: err}
			}
			for _, f := range m {
				files = append(files, f)
				kinds[f] = k
			}
		}
	}
	slices.Sort(files)
	return files, kinds, nil
}

// Follower ingests a run's output directory into a store, and keeps following it: files
// that grow are read from where the last read ended, new shards as they appear.
type Follower struct {
	Store  *Store
	Dir    string
	Logger *slog.Logger
	seen   map[string]fileStamp
}

type fileStamp struct {
	size int64
	mod  time.Time
}

// Follow polls the directory every interval until ctx ends.
func (f *Follower) Follow(ctx context.Context, interval time.Duration) error {
	for {
		f.Scan() // logs what failed
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

func (f *Follower) logger() *slog.Logger {
	if f.Logger == nil {
		return slog.Default()
	}
	return f.Logger
}

// Scan reads whatever is new in the directory once and returns how many records it added.
// A file that fails is logged and the others are still read: one that cannot be read is
// tried again once it changes, one the store failed on at the next scan. The error joins
// the files' errors.
func (f *Follower) Scan() (int, error) {
	files, kinds, err := OutputFiles(f.Dir)
	if err != nil {
		f.logger().Warn("console: listing outputs", "dir", f.Dir, "err", err)
		return 0, err
	}
	if f.seen == nil {
		f.seen = map[string]fileStamp{}
	}
	total := 0
	var errs []error
	for _, file := range files {
		n, err := f.scanFile(file, kinds[file])
		total += n
		if err != nil {
			f.logger().Warn("console: reading an output file failed; the others are read", "file", file, "err", err)
			errs = append(errs, err)
		}
	}
	return total, errors.Join(errs...)
}

// scanFile reads file when it changed since it was last read to its end or failed to read.
func (f *Follower) scanFile(file string, kind records.Kind) (int, error) {
	st, err := os.Stat(file)
	if err != nil {
		return 0, nil // removed since the glob
	}
	stamp := fileStamp{st.Size(), st.ModTime()}
	if f.seen[file] == stamp {
		return 0, nil
	}
	n, err := f.readFile(file, kind, st.Size())
	if !errors.Is(err, ErrStore) {
		f.seen[file] = stamp // read, or unreadable as it stands: logged once, not every poll
	}
	return n, err
}

// readFile ingests file from its recorded offset up to size, a chunk per transaction.
func (f *Follower) readFile(file string, kind records.Kind, size int64) (int, error) {
	fh, err := os.Open(file)
	if err != nil {
		return 0, &Error{Code: CodeInput, Detail: "opening " + file, Err: err}
	}
	defer fh.Close()
	off, ok, err := f.start(fh, file, kind, size)
	if !ok || err != nil {
		return 0, err
	}
	total := 0
	for off < size {
		next, added, err := f.readChunk(fh, file, kind, off, size)
		total += added
		if err != nil || next == off {
			return total, err
		}
		off = next
	}
	return total, nil
}

// start returns where file is read from: its recorded offset, or its first record when it
// was never read or has been rewritten since. ok is false while there is nothing to read.
func (f *Follower) start(fh *os.File, file string, kind records.Kind, size int64) (int64, bool, error) {
	off, err := f.Store.Offset(file)
	if err != nil {
		return 0, false, err
	}
	if off.Bytes > size || off.Bytes > 0 && prefixOf(fh, off.Bytes) != off.Prefix {
		off = Offset{} // rewritten: read it again (records already ingested are skipped)
	}
	if off.Bytes > 0 {
		return off.Bytes, true, nil
	}
	return f.skipHeader(fh, file, kind, size)
}

// readChunk ingests the whole records of file from off: up to chunkBytes of them, or the one
// record there when it is longer. It returns where the next read starts: off itself while
// the record there is still being written. A record that does not decode is counted and
// passed, and so is the rest of the file from where its framing breaks: each is logged once,
// after the commit that moves the file's offset past it.
func (f *Follower) readChunk(fh *os.File, file string, kind records.Kind, off, size int64) (next int64, added int, err error) {
	buf, err := readAt(fh, file, off, min(size-off, chunkBytes))
	if err != nil {
		return off, 0, err
	}
	frames, used, broken := records.SplitFrames(buf)
	if used == 0 && !broken {
		need, ok := records.FrameSize(buf)
		switch {
		case !ok || off+need > size:
			return off, 0, nil // a record still being written
		case recordLen(buf) > MaxRecordBytes:
			return f.skipLarge(fh, file, off, need, recordLen(buf))
		}
		// One record larger than a chunk: read it whole.
		if buf, err = readAt(fh, file, off, need); err != nil {
			return off, 0, err
		}
		frames, used, broken = records.SplitFrames(buf)
	}
	next = off + int64(used)
	recs := chunkRecords(file, kind, frames, broken, next)
	if broken {
		next = size // the rest of the file cannot be read as records
	}
	added, bad, err := f.Store.Ingest(file, Offset{Bytes: next, Prefix: prefixOf(fh, next)}, recs)
	if err != nil {
		return off, added, err
	}
	f.logUndecoded(file, kind, off, buf, frames, bad, size)
	return next, added, nil
}

// chunkRecords is the records of frames, each of kind, and when the framing broke after them
// at byte at of file, a record of no kind naming that place: counted as one that does not
// decode, once however often the file is read.
func chunkRecords(file string, kind records.Kind, frames [][]byte, broken bool, at int64) []Record {
	recs := make([]Record, len(frames), len(frames)+1)
	for i, fr := range frames {
		recs[i] = Record{Kind: kind, Data: fr}
	}
	if broken {
		recs = append(recs, Record{Data: fmt.Appendf(nil, "%s:%d", file, at)})
	}
	return recs
}

// logUndecoded logs the records of file the store counted as not decoding (bad indexes the
// chunkRecords of frames, split from buf, read at off): each one's offset, length and code,
// console_input_invalid for a record, file_bad_framing for broken framing (its length is
// then the rest of the file, up to size).
func (f *Follower) logUndecoded(file string, kind records.Kind, off int64, buf []byte, frames [][]byte, bad []int, size int64) {
	for _, i := range bad {
		at := off + frameStart(buf, frames, i)
		if i == len(frames) {
			f.logger().Warn("console: broken record framing, skipping the rest of the file", "file", file,
				"offset", at, "bytes", size-at, "code", string(records.CodeFraming))
			continue
		}
		f.logger().Warn("console: skipping a record that does not decode", "file", file, "offset", at,
			"bytes", len(frames[i]), "code", string(CodeInput), "type", string(kind.Type))
	}
}

// frameStart is where the i-th of frames, split from buf, starts in buf (at its length
// prefix): where the one before it ends, or 0. Each frame is a slice of buf, so what follows
// its end in buf is its capacity past its length. i may be len(frames): where they end.
func frameStart(buf []byte, frames [][]byte, i int) int64 {
	if i == 0 {
		return 0
	}
	fr := frames[i-1]
	return int64(cap(buf) - cap(fr) + len(fr))
}

// MaxRecordBytes bounds one record the console reads from a file, and so what one record
// may hold in its memory. A longer record is not read: it is counted on the overview, its
// file and offset are logged, and the file is read on past it. A run writes none that long:
// its longest record, a dead letter, holds an input envelope of at most 16 MiB (the
// pipeline's bound) besides its key and detail.
const MaxRecordBytes = 64 << 20

// skipLarge moves file's offset past the record at off (n bytes, need with its length),
// which is longer than MaxRecordBytes, without reading it. The count and the offset are
// committed together, so the record is counted and logged once.
func (f *Follower) skipLarge(fh *os.File, file string, off, need, n int64) (int64, int, error) {
	next := off + need
	if err := f.Store.SkipRecord(file, Offset{Bytes: next, Prefix: prefixOf(fh, next)}); err != nil {
		return off, 0, err
	}
	f.logger().Warn("console: skipping a record longer than the console reads", "file", file, "offset", off,
		"bytes", n, "max_bytes", MaxRecordBytes)
	return next, 0, nil
}

// recordLen is the length the frame at the start of buf announces for its record.
func recordLen(buf []byte) int64 {
	n, _ := binary.Uvarint(buf)
	return int64(n)
}

// readAt reads up to n bytes of file at off.
func readAt(fh *os.File, file string, off, n int64) ([]byte, error) {
	buf := make([]byte, n)
	m, err := fh.ReadAt(buf, off)
	if err != nil && err != io.EOF {
		return nil, &Error{Code: CodeInput, Detail: "reading " + file, Err: err}
	}
	return buf[:m], nil
}

// prefixOf hashes the first min(n, prefixBytes) bytes of fh.
func prefixOf(fh *os.File, n int64) [32]byte {
	buf := make([]byte, min(n, prefixBytes))
	m, _ := fh.ReadAt(buf, 0)
	return sha256.Sum256(buf[:m])
}

// String names the follower in logs.
func (f *Follower) String() string { return fmt.Sprintf("outputs %s", f.Dir) }

// skipHeader returns where file's records start: after its type header, when it has one.
// A file whose header names another type than kind's, or a broken header, is skipped whole
// (recorded as read to its end) with a warning; ok is false then, as it is while a header
// is still incomplete.
func (f *Follower) skipHeader(fh *os.File, file string, kind records.Kind, size int64) (start int64, ok bool, err error) {
	head, err := readAt(fh, file, 0, min(size, headerBytes))
	if err != nil {
		return 0, false, err
	}
	t, rest, herr := records.Split(head)
	switch {
	case herr != nil && size < headerBytes:
		return 0, false, nil // still being written
	case herr == nil && t == "":
		return 0, true, nil // an unheadered file: records from the first byte
	case herr == nil:
		if t == kind.Type {
			return int64(len(head) - len(rest)), true, nil
		}
		herr = fmt.Errorf("it holds %s records", t)
	}
	f.logger().Warn("console: skipping a file that is not of its name's type", "file", file, "err", herr)
	_, _, err = f.Store.Ingest(file, Offset{Bytes: size, Prefix: prefixOf(fh, size)}, nil)
	return 0, false, err
}

// headerBytes bounds what skipHeader reads for a type header.
const headerBytes = 512
