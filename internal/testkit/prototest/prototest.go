// Package prototest compiles .proto sources for tests with a real protobuf compiler
// (github.com/bufbuild/protocompile), resolving beam_agents/v1 imports from the repository's
// protos/ directory and google/protobuf imports from the standard set.
package prototest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/linker"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// ProtosDir returns the repository's protos/ directory.
func ProtosDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "protos")
}

// CompileDir compiles the named files (paths relative to dir).
func CompileDir(tb testing.TB, dir string, files ...string) linker.Files {
	tb.Helper()
	out, err := Compile(dir, files...)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// Compile compiles the named files (paths relative to dir) outside a test, for examples.
func Compile(dir string, files ...string) (linker.Files, error) {
	return compileErr(&protocompile.SourceResolver{ImportPaths: []string{dir, ProtosDir()}}, files...)
}

// Find returns the message with the given full name from files.
func Find(files linker.Files, name string) (protoreflect.MessageDescriptor, error) {
	for _, f := range files {
		if d := f.FindDescriptorByName(protoreflect.FullName(name)); d != nil {
			if md, ok := d.(protoreflect.MessageDescriptor); ok {
				return md, nil
			}
		}
	}
	return nil, fmt.Errorf("no message %s", name)
}

// CompileSources compiles in-memory sources (file name to text); imports of other files
// resolve among sources first, then protos/ and the standard imports.
func CompileSources(tb testing.TB, sources map[string]string) linker.Files {
	tb.Helper()
	mem := &protocompile.SourceResolver{Accessor: protocompile.SourceAccessorFromMap(sources)}
	disk := &protocompile.SourceResolver{ImportPaths: []string{ProtosDir()}}
	names := make([]string, 0, len(sources))
	for n := range sources {
		names = append(names, n)
	}
	return compile(tb, protocompile.CompositeResolver{mem, disk}, names...)
}

func compile(tb testing.TB, r protocompile.Resolver, files ...string) linker.Files {
	tb.Helper()
	out, err := compileErr(r, files...)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func compileErr(r protocompile.Resolver, files ...string) (linker.Files, error) {
	var diag strings.Builder
	c := protocompile.Compiler{
		Resolver:       protocompile.WithStandardImports(r),
		SourceInfoMode: protocompile.SourceInfoNone,
		Reporter:       reporterTo(&diag),
	}
	out, err := c.Compile(context.Background(), files...)
	if err != nil {
		return nil, fmt.Errorf("compile %v: %v\n%s", files, err, diag.String())
	}
	return out, nil
}

// reporterTo collects every error (not only the first) so a failing fixture says all that
// is wrong with it.
func reporterTo(w io.Writer) reporter.Reporter {
	return reporter.NewReporter(func(err reporter.ErrorWithPos) error {
		io.WriteString(w, err.Error()+"\n")
		return nil
	}, nil)
}

// Message returns the message with the given full name from files.
func Message(tb testing.TB, files linker.Files, name string) protoreflect.MessageDescriptor {
	tb.Helper()
	md, err := Find(files, name)
	if err != nil {
		tb.Fatal(err)
	}
	return md
}

// FileSet returns files and all their imports as a FileDescriptorSet in dependency order,
// as `protoc --include_imports -o` writes it.
func FileSet(files linker.Files) *descriptorpb.FileDescriptorSet {
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var add func(f protoreflect.FileDescriptor)
	add = func(f protoreflect.FileDescriptor) {
		if seen[f.Path()] {
			return
		}
		seen[f.Path()] = true
		for i := 0; i < f.Imports().Len(); i++ {
			add(f.Imports().Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(f))
	}
	for _, f := range files {
		add(f)
	}
	return set
}

// WriteFileSet writes the binary FileDescriptorSet of files to a new file under tb's temp
// directory and returns its path.
func WriteFileSet(tb testing.TB, files linker.Files) string {
	tb.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(FileSet(files))
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "set.binpb")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// NewMessage returns a dynamic message of the named type with fields set by name path:
// "refund.total.currency" sets currency in the message in field total of the message in
// field refund. A nil value only marks the message at that path present.
func NewMessage(tb testing.TB, files linker.Files, name string, set map[string]any) *dynamicpb.Message {
	tb.Helper()
	m := dynamicpb.NewMessage(Message(tb, files, name))
	for path, v := range set {
		SetPath(tb, m, path, v)
	}
	return m
}

// SetPath sets one field of m by name path (see NewMessage).
func SetPath(tb testing.TB, m protoreflect.Message, path string, v any) {
	tb.Helper()
	names := strings.Split(path, ".")
	for _, n := range names[:len(names)-1] {
		fd := m.Descriptor().Fields().ByName(protoreflect.Name(n))
		if fd == nil {
			tb.Fatalf("no field %s in %s", n, m.Descriptor().FullName())
		}
		m = m.Mutable(fd).Message()
	}
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(names[len(names)-1]))
	if fd == nil {
		tb.Fatalf("no field %s in %s", names[len(names)-1], m.Descriptor().FullName())
	}
	if v == nil {
		m.Mutable(fd)
		return
	}
	m.Set(fd, protoreflect.ValueOf(v))
}
