// Package protobind turns a module's own .proto schemas into Go bindings in-process, with no
// protoc, buf or plugin binary: it compiles the sources with github.com/bufbuild/protocompile
// (the runtime's beam_agents/v1 protos, embedded in package protos, and the standard
// google/protobuf imports resolve without a copy on disk), generates Go with protoc-gen-go's
// own generator (the version this module requires, so the output is byte for byte what that
// protoc-gen-go writes for the same sources), and checks every message that declares a
// (beam_agents.v1.type_id) with package interaction, so a schema the runtime would refuse is
// reported when it is generated rather than when an agent first runs.
//
// It serves the `generate proto` command of package cli: Bindings runs the whole chain,
// Write puts the files under the output directory (never outside it), ModulePath reads the
// module path that output paths are relative to. Errors are *Error values with a
// stable Code.
package protobind
