package outfiles

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"   // gs:// output folders
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // local output folders

	"github.com/beamagents/beamagents/records"
)

// Globs are the files of the outputs named names: NAME.binpb and NAME.jsonl, their shards
// NAME-….binpb and NAME-….jsonl, and the temporary files of an unfinished write.
func Globs(names ...string) []string {
	var g []string
	for _, n := range names {
		g = append(g, n+".binpb", n+".jsonl", n+"-*.binpb", n+"-*.jsonl", "."+n+"*.partial")
	}
	return g
}

// List lists the files under dir matching globs (names relative to dir).
func List(ctx context.Context, dir string, globs []string) ([]string, error) {
	fs, err := filesystem.New(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	var out []string
	for _, g := range globs {
		files, err := fs.List(ctx, Join(dir, g))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			out = append(out, strings.TrimPrefix(strings.TrimPrefix(f, strings.TrimSuffix(dir, "/")), "/"))
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Remove removes the files under dir matching globs.
func Remove(ctx context.Context, dir string, globs []string) error {
	names, err := List(ctx, dir, globs)
	if err != nil || len(names) == 0 {
		return err
	}
	fs, err := filesystem.New(ctx, dir)
	if err != nil {
		return err
	}
	defer fs.Close()
	rm, ok := fs.(filesystem.Remover)
	if !ok {
		return fmt.Errorf("the file system of %s cannot remove files", dir)
	}
	for _, n := range names {
		if err := rm.Remove(ctx, Join(dir, n)); err != nil {
			return err
		}
	}
	return nil
}

// Join is the path of name in dir, a local folder or a URL.
func Join(dir, name string) string {
	if strings.Contains(dir, "://") {
		return strings.TrimSuffix(dir, "/") + "/" + name
	}
	return filepath.Join(dir, name)
}

// Head is the first bytes of the file at path, as many as records.Sniff looks at.
func Head(ctx context.Context, path string) ([]byte, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, int64(records.SniffBytes())))
}
