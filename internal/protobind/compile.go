package protobind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/linker"
	"github.com/bufbuild/protocompile/reporter"

	"github.com/beamagents/beamagents/protos"
)

// Compile compiles the named files (names relative to importRoot, as Find returns them).
// Imports resolve from importRoot first, then from the runtime's embedded beam_agents/v1
// protos, then from the standard google/protobuf set. Source info (comments) is kept: the
// generated code carries the comments. The first error is returned as a CodeCompile *Error
// naming the file and position.
func Compile(ctx context.Context, importRoot string, names []string) (linker.Files, error) {
	disk := &protocompile.SourceResolver{ImportPaths: []string{importRoot}}
	embedded := &protocompile.SourceResolver{Accessor: func(name string) (io.ReadCloser, error) {
		return protos.FS.Open(name)
	}}
	c := protocompile.Compiler{
		Resolver:       protocompile.WithStandardImports(notFound{protocompile.CompositeResolver{disk, embedded}, importRoot}),
		SourceInfoMode: protocompile.SourceInfoStandard,
	}
	files, err := c.Compile(ctx, names...)
	if err != nil {
		return nil, compileError(importRoot, err)
	}
	return files, nil
}

// notFound says where a missing import was looked for, rather than the one disk path the
// first resolver tried.
type notFound struct {
	protocompile.Resolver
	importRoot string
}

func (r notFound) FindFileByPath(name string) (protocompile.SearchResult, error) {
	res, err := r.Resolver.FindFileByPath(name)
	if errors.Is(err, fs.ErrNotExist) {
		err = fmt.Errorf("file not found: %s (neither under %s nor built in)", name, r.importRoot)
	}
	return res, err
}

// compileError names the file as the user can open it (under the import root when it is
// there) and the position protocompile reports.
func compileError(importRoot string, err error) *Error {
	var pe reporter.ErrorWithPos
	if !errors.As(err, &pe) {
		return &Error{Code: CodeCompile, Message: err.Error()}
	}
	pos := pe.GetPosition()
	file := pos.Filename
	if onDisk := filepath.Join(importRoot, filepath.FromSlash(file)); fileExists(onDisk) {
		file = onDisk
	}
	where := file
	if pos.Line > 0 {
		where = fmt.Sprintf("%s:%d:%d", file, pos.Line, pos.Col)
	}
	return &Error{Code: CodeCompile, Where: where, Message: pe.Unwrap().Error()}
}

func fileExists(p string) bool {
	info, err := os.Stat(p)
	return err == nil && !info.IsDir()
}
