package cli

import (
	"path/filepath"

	"github.com/beamagents/beamagents/internal/protobind"
)

func init() {
	register(&command{name: "generate", summary: "generate Go bindings for your own .proto schemas (generate proto)",
		usage: generateUsage, subs: []*command{
			{name: "proto", summary: "compile .proto files and write their Go bindings", run: runGenerateProto},
		}})
}

const generateUsage = `generate proto [--proto_path DIR] [--out DIR] [--paths import|source_relative] [--module PATH]
               [FILE_OR_DIR ...]

Compiles the .proto files named (a directory: every .proto file under it; none: all under
--proto_path) in-process, with the runtime's beam_agents/v1 protos built in, so
import "beam_agents/v1/interaction_options.proto" resolves in any module, and writes each
file's Go bindings as protoc-gen-go (the version this binary is built with) writes them.
From a module: go get -tool github.com/beamagents/beamagents/cmd/beamagents, then
go tool beamagents generate proto.
Every message that declares a (beam_agents.v1.type_id) is then compiled as an interaction
schema; one the runtime would refuse is reported as "FILE: MESSAGE: SPX-… rule: …".
Exit status: 0 written; 1 written, but a schema is refused; 2 a file that does not compile
(one line "FILE:LINE:COL: message"), a bad flag or path; nothing is written then.`

const generateProtoUsage = "generate proto [--proto_path DIR] [--out DIR] [--paths import|source_relative] [--module PATH] [FILE_OR_DIR ...]"

func runGenerateProto(e *env, args []string) int {
	fs := newFlags(e, "generate proto", generateProtoUsage)
	protoPath := fs.String("proto_path", ".", "import root: file names, and the imports between them, are relative to it")
	out := fs.String("out", ".", "directory the bindings are written under")
	paths := fs.String("paths", "import", "import: a file goes to its go_package's directory (less --module); source_relative: next to its .proto name")
	module := fs.String("module", "", "with --paths import, the import path prefix removed from output paths (default: the module path of OUT/go.mod)")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	layout := protobind.Layout{Paths: *paths, Module: *module}
	if *paths != "import" && *paths != "source_relative" {
		e.errorf("generate proto: --paths must be import or source_relative, not %q", *paths)
		return 2
	}
	if *paths == "import" && *module == "" {
		layout.Module = protobind.ModulePath(filepath.Join(*out, "go.mod"))
	}
	sources := fs.Args()
	if len(sources) == 0 {
		sources = []string{*protoPath}
	}
	files, refusals, err := protobind.Bindings(*protoPath, sources, layout)
	if err != nil {
		e.errorf("generate proto: %v", err)
		return 2
	}
	if err := protobind.Write(*out, files, func(p string) { e.stdout.Write([]byte(p + "\n")) }); err != nil {
		e.errorf("generate proto: %v", err)
		return 2
	}
	for _, r := range refusals {
		e.errorf("generate proto: %s: %s: %v", r.File, r.Message, r.Err)
	}
	if len(refusals) > 0 {
		return 1
	}
	return 0
}
