package console

import (
	"context"
	"crypto/sha256"
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
		if _, err := f.Scan(); err != nil {
			f.logger().Warn("console: reading outputs", "dir", f.Dir, "err", err)
		}
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
func (f *Follower) Scan() (int, error) {
	files, kinds, err := OutputFiles(f.Dir)
	if err != nil {
		return 0, err
	}
	if f.seen == nil {
		f.seen = map[string]fileStamp{}
	}
	total := 0
	for _, file := range files {
		st, err := os.Stat(file)
		if err != nil {
			continue // removed since the glob
		}
		stamp := fileStamp{st.Size(), st.ModTime()}
		if f.seen[file] == stamp {
			continue
		}
		n, err := f.readFile(file, kinds[file], st.Size())
		total += n
		if err != nil {
			return total, err
		}
		f.seen[file] = stamp
	}
	return total, nil
}

// readFile ingests file from its recorded offset up to size, a chunk per transaction.
func (f *Follower) readFile(file string, kind records.Kind, size int64) (int, error) {
	fh, err := os.Open(file)
	if err != nil {
		return 0, &Error{Code: CodeInput, Detail: "opening " + file, Err: err}
	}
	defer fh.Close()
	off, err := f.Store.Offset(file)
	if err != nil {
		return 0, err
	}
	if off.Bytes > size || off.Bytes > 0 && prefixOf(fh, off.Bytes) != off.Prefix {
		off = Offset{} // rewritten: read it again (records already ingested are skipped)
	}
	if off.Bytes == 0 {
		start, ok, err := f.skipHeader(fh, file, kind, size)
		if !ok || err != nil {
			return 0, err
		}
		off.Bytes = start
	}
	total := 0
	for off.Bytes < size {
		buf := make([]byte, min(size-off.Bytes, chunkBytes))
		n, err := fh.ReadAt(buf, off.Bytes)
		if err != nil && err != io.EOF {
			return total, &Error{Code: CodeInput, Detail: "reading " + file, Err: err}
		}
		frames, used, broken := records.SplitFrames(buf[:n])
		if used == 0 && !broken {
			need, ok := records.FrameSize(buf[:n])
			if !ok || off.Bytes+need > size {
				return total, nil // a record still being written
			}
			// One record larger than a chunk: read it whole.
			buf = make([]byte, need)
			if _, err := fh.ReadAt(buf, off.Bytes); err != nil && err != io.EOF {
				return total, &Error{Code: CodeInput, Detail: "reading " + file, Err: err}
			}
			frames, used, broken = records.SplitFrames(buf)
		}
		recs := make([]Record, len(frames))
		for i, fr := range frames {
			recs[i] = Record{Kind: kind, Data: fr}
		}
		next := off.Bytes + int64(used)
		if broken {
			recs = append(recs, Record{Data: fmt.Appendf(nil, "%s:%d", file, off.Bytes+int64(used))}) // counted as malformed; the rest of the file is skipped
			next = size
			f.logger().Warn("console: broken record framing, skipping the rest of the file", "file", file, "offset", off.Bytes+int64(used))
		}
		added, _, err := f.Store.Ingest(file, Offset{Bytes: next, Prefix: prefixOf(fh, next)}, recs)
		total += added
		if err != nil {
			return total, err
		}
		off.Bytes = next
	}
	return total, nil
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
	head := make([]byte, min(size, headerBytes))
	n, err := fh.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return 0, false, &Error{Code: CodeInput, Detail: "reading " + file, Err: err}
	}
	t, rest, herr := records.Split(head[:n])
	switch {
	case herr != nil && size < headerBytes:
		return 0, false, nil // still being written
	case herr == nil && t == "":
		return 0, true, nil // an unheadered file: records from the first byte
	case herr == nil:
		if t == kind.Type {
			return int64(n - len(rest)), true, nil
		}
		herr = fmt.Errorf("it holds %s records", t)
	}
	f.logger().Warn("console: skipping a file that is not of its name's type", "file", file, "err", herr)
	_, _, err = f.Store.Ingest(file, Offset{Bytes: size, Prefix: prefixOf(fh, size)}, nil)
	return 0, false, err
}

// headerBytes bounds what skipHeader reads for a type header.
const headerBytes = 512
