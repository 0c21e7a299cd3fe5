package protobind

import (
	"strings"

	"github.com/bufbuild/protocompile/linker"
	gengo "google.golang.org/protobuf/cmd/protoc-gen-go/internal_gengo"
	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

// Layout says where generated files go, as protoc-gen-go's own options do.
type Layout struct {
	// Paths is "import" (the default: a file goes to the directory of its go_package import
	// path) or "source_relative" (next to its .proto name).
	Paths string
	// Module, with Paths "import", is the import path prefix removed from every output path:
	// the module's path, so a file lands in its package's directory inside the module.
	Module string
}

// parameter is the plugin parameter protoc-gen-go reads.
func (l Layout) parameter() string {
	var p []string
	if l.Paths != "" {
		p = append(p, "paths="+l.Paths)
	}
	if l.Module != "" {
		p = append(p, "module="+l.Module)
	}
	return strings.Join(p, ",")
}

// File is one generated file: its path (slash-separated, relative to the output directory)
// and its content.
type File struct {
	Name    string
	Content []byte
}

// Generate runs protoc-gen-go in-process over files (as Compile returns them) and returns the
// .pb.go file of each, laid out by l. Its imports are not generated: the runtime's own
// bindings are package gen/beam_agents/v1, the standard ones protobuf's.
func Generate(files linker.Files, l Layout) ([]File, error) {
	req := request(files, l.parameter())
	gen, err := protogen.Options{}.New(req)
	if err != nil {
		return nil, generateError(err.Error())
	}
	for _, f := range gen.Files {
		if f.Generate {
			gengo.GenerateFile(gen, f)
		}
	}
	gen.SupportedFeatures = gengo.SupportedFeatures
	gen.SupportedEditionsMinimum = gengo.SupportedEditionsMinimum
	gen.SupportedEditionsMaximum = gengo.SupportedEditionsMaximum
	resp := gen.Response()
	if resp.Error != nil {
		return nil, generateError(resp.GetError())
	}
	out := make([]File, len(resp.File))
	for i, f := range resp.File {
		out[i] = File{Name: f.GetName(), Content: []byte(f.GetContent())}
	}
	return out, nil
}

// generateError keeps the first line of protoc-gen-go's message: the rest is advice about
// its command line, which this caller does not have.
func generateError(msg string) *Error {
	first, _, _ := strings.Cut(msg, "\n")
	return &Error{Code: CodeGenerate, Message: first}
}

// request is the CodeGeneratorRequest protoc (or buf) would send: the files to generate, and
// every file they import, dependencies first, with source info. The compiler version is left
// unset, as buf leaves it, so the header reads "protoc (unknown)".
func request(files linker.Files, parameter string) *pluginpb.CodeGeneratorRequest {
	req := &pluginpb.CodeGeneratorRequest{}
	if parameter != "" {
		req.Parameter = &parameter
	}
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
		req.ProtoFile = append(req.ProtoFile, fileProto(f))
	}
	for _, f := range files {
		req.FileToGenerate = append(req.FileToGenerate, f.Path())
		add(f)
	}
	return req
}

// fileProto returns the descriptor proto a file was compiled to, or, for a file that comes
// prebuilt (the standard imports), its conversion.
func fileProto(f protoreflect.FileDescriptor) *descriptorpb.FileDescriptorProto {
	if r, ok := f.(linker.Result); ok {
		return r.FileDescriptorProto()
	}
	if u, ok := f.(interface {
		Unwrap() protoreflect.FileDescriptor
	}); ok {
		return fileProto(u.Unwrap())
	}
	return protodesc.ToFileDescriptorProto(f)
}
