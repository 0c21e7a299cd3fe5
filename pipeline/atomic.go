package pipeline

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/beamagents/beamagents/records"
)

// atomicFile is a file-system writer behind a buffer that writes under a temporary name
// (records.TempName) and renames it to its final name on Commit, so that a file under its
// final name is always whole: a worker that fails (a full disk, a lost bundle) leaves no
// file, or the one it replaces, under that name. Abort removes the temporary file; it is a
// no-op after Commit.
type atomicFile struct {
	*bufio.Writer
	fs        filesystem.Interface
	w         io.WriteCloser
	path, tmp string
	closed    bool
	committed bool
	ctx       context.Context
}

func openAtomic(ctx context.Context, p string) (*atomicFile, error) {
	fs, err := filesystem.New(ctx, p)
	if err != nil {
		return nil, err
	}
	// Concurrent writers of one file (a retried bundle beside a slow one) each write their own
	// temporary file; the last rename wins, and both wrote the same records.
	var nonce [6]byte
	rand.Read(nonce[:])
	tmp := records.TempName(p, hex.EncodeToString(nonce[:]))
	w, err := fs.OpenWrite(ctx, tmp)
	if err != nil {
		fs.Close()
		return nil, err
	}
	return &atomicFile{Writer: bufio.NewWriterSize(w, 1<<16), fs: fs, w: w, path: p, tmp: tmp, ctx: ctx}, nil
}

func (a *atomicFile) close() error {
	if a.closed {
		return nil
	}
	a.closed = true
	err := a.Flush()
	if cerr := a.w.Close(); err == nil {
		err = cerr
	}
	return err
}

// Commit flushes and closes the file and renames it to its final name.
func (a *atomicFile) Commit() error {
	if err := a.close(); err != nil {
		return err
	}
	if err := filesystem.Rename(a.ctx, a.fs, a.tmp, a.path); err != nil {
		return err
	}
	a.committed = true
	a.fs.Close()
	return nil
}

// Abort drops an uncommitted file.
func (a *atomicFile) Abort() {
	if a.committed {
		return
	}
	a.committed = true
	a.close()
	if rm, ok := a.fs.(filesystem.Remover); ok {
		rm.Remove(context.WithoutCancel(a.ctx), a.tmp)
	}
	a.fs.Close()
}
