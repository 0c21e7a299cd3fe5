package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// generate proto writes, byte for byte, the committed bindings of the repository's own protos
// (what scripts/gen_proto.sh's pinned protoc-gen-go writes), in either layout.
func TestGenerateRepositoryBindings(t *testing.T) {
	committed := filepath.Join("..", "gen", "beam_agents", "v1")
	for _, tc := range []struct {
		name  string
		flags []string
		dir   string // where the files land under --out
	}{
		{"import paths less the module", []string{"--module", "github.com/beamagents/beamagents"}, "gen/beam_agents/v1"},
		{"source relative", []string{"--paths", "source_relative"}, "beam_agents/v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"generate", "proto", "--proto_path", "../protos", "--out", out}, tc.flags...)
			code, stdout, stderr := runCLI(t, "", append(args, "../protos/beam_agents")...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			want, err := filepath.Glob(filepath.Join(committed, "*.pb.go"))
			if err != nil || len(want) == 0 {
				t.Fatalf("no committed bindings: %v", err)
			}
			if n := strings.Count(stdout, "\n"); n != len(want) {
				t.Fatalf("%d files written, %d committed:\n%s", n, len(want), stdout)
			}
			for _, w := range want {
				got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(tc.dir), filepath.Base(w)))
				if err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(w); !bytes.Equal(got, b) {
					t.Errorf("%s differs from the committed file", filepath.Base(w))
				}
			}
		})
	}
}

const toolProto = `syntax = "proto3";
package shop.v1;
import "beam_agents/v1/interaction_options.proto";
option go_package = "example.com/shop/shoppb;shoppb";
message RefundArgs {
  option (beam_agents.v1.type_id) = "shop.refund.args";
  string order_id = 1 [(beam_agents.v1.field_id) = "order_id", (beam_agents.v1.max_bytes) = 64];
  uint64 cents = 2 [(beam_agents.v1.field_id) = "cents", (beam_agents.v1.maximum) = "100000"];
}
`

// writeTree writes files (slash-separated names to contents) under a new temporary directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Without --module, the files land in their packages' directories of the module OUT/go.mod
// declares; without one, under their full import paths.
func TestGenerateDefaultsToTheModuleOfOut(t *testing.T) {
	for _, tc := range []struct {
		name, goMod, want string
	}{
		{"module", "module example.com/shop\n\ngo 1.26\n", "shoppb/tool.pb.go"},
		{"quoted module", "// the shop\nmodule \"example.com/shop\" // ours\n", "shoppb/tool.pb.go"},
		{"no go.mod", "", "example.com/shop/shoppb/tool.pb.go"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"proto/shop/v1/tool.proto": toolProto}
			if tc.goMod != "" {
				files["go.mod"] = tc.goMod
			}
			dir := writeTree(t, files)
			code, stdout, stderr := runCLI(t, "", "generate", "proto", "--proto_path", filepath.Join(dir, "proto"), "--out", dir)
			want := filepath.Join(dir, filepath.FromSlash(tc.want))
			if code != 0 || stdout != want+"\n" {
				t.Fatalf("exit %d, stdout %q, want %q\n%s", code, stdout, want, stderr)
			}
			b, err := os.ReadFile(want)
			if err != nil || !bytes.Contains(b, []byte("package shoppb")) || !bytes.Contains(b, []byte("source: shop/v1/tool.proto")) {
				t.Fatalf("%v\n%s", err, b)
			}
		})
	}
}

// A file that does not compile, a path outside --proto_path and a bad flag are refused with
// one line (exit 2), and nothing is written.
func TestGenerateRefusesWhatDoesNotCompile(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"go.mod":         "module example.com/shop\n",
		"proto/ok.proto": toolProto,
		"proto/bad.proto": "syntax = \"proto3\";\npackage shop.v1;\noption go_package = \"example.com/shop/shoppb\";\n" +
			"message Broken {\n  strin name = 1;\n}\n",
		"proto/missing_import.proto": "syntax = \"proto3\";\nimport \"shop/v1/nowhere.proto\";\n",
		"proto/no_go_package.proto":  "syntax = \"proto3\";\npackage other;\nmessage M {}\n",
		"elsewhere/x.proto":          "syntax = \"proto3\";\n",
		"proto/notes/README":         "no schema here\n",
	})
	proto := filepath.Join(dir, "proto")
	for _, tc := range []struct {
		name string
		args []string
		want string // the whole line after "beamagents: generate proto: "
	}{
		{"syntax", []string{filepath.Join(proto, "bad.proto")}, filepath.Join(proto, "bad.proto") + `:5:3: field shop.v1.Broken.name: unknown type strin`},
		{"import", []string{filepath.Join(proto, "missing_import.proto")}, filepath.Join(proto, "missing_import.proto") + `:2:8: file not found: shop/v1/nowhere.proto (neither under ` + proto + ` nor built in)`},
		{"no go_package", []string{filepath.Join(proto, "no_go_package.proto")}, `unable to determine Go import path for "no_go_package.proto"`},
		{"outside the import root", []string{filepath.Join(dir, "elsewhere", "x.proto")}, filepath.Join(dir, "elsewhere", "x.proto") + ": not under the import root " + proto},
		{"missing", []string{filepath.Join(proto, "nope.proto")}, filepath.Join(proto, "nope.proto") + ": no such file or directory"},
		{"no .proto file", []string{filepath.Join(proto, "notes")}, filepath.Join(proto, "notes") + ": no .proto file"},
		{"--paths", []string{"--paths", "relative"}, `--paths must be import or source_relative, not "relative"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"generate", "proto", "--proto_path", proto, "--out", dir}, tc.args...)
			code, stdout, stderr := runCLI(t, "", args...)
			if code != 2 || stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			if tc.want != "" && stderr != "beamagents: generate proto: "+tc.want+"\n" {
				t.Fatalf("stderr %q\nwant %q", stderr, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "shoppb")); !os.IsNotExist(err) {
				t.Fatal("a refused run wrote bindings")
			}
		})
	}
}

// A message that declares a type_id but that the runtime would refuse as a schema is reported
// with its diagnostic (exit 1); its bindings, valid protobuf, are written all the same.
func TestGenerateReportsASchemaTheRuntimeRefuses(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"go.mod": "module example.com/shop\n",
		"shop/v1/tool.proto": strings.Replace(toolProto, "}\n", `}
message Quote {
  option (beam_agents.v1.type_id) = "shop.quote";
  double amount = 1 [(beam_agents.v1.field_id) = "amount"];
  message Line {
    option (beam_agents.v1.type_id) = "shop.quote.line";
    string sku = 1;
  }
}
message Plain { double ratio = 1; }
`, 1),
	})
	code, stdout, stderr := runCLI(t, "", "generate", "proto", "--proto_path", dir, "--out", dir, filepath.Join(dir, "shop"))
	// One line per refused schema: the file, the message, then the code, rule and element
	// (the message text after them is package interaction's).
	want := []string{
		"beamagents: generate proto: shop/v1/tool.proto: shop.v1.Quote: SPX-Z202 type.field.float: shop.v1.Quote.amount: ",
		"beamagents: generate proto: shop/v1/tool.proto: shop.v1.Quote.Line: SPX-Z202 type.field.id.missing: shop.v1.Quote.Line.sku: ",
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != 1 || len(lines) != len(want) {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q\nwant the prefix %q", i, lines[i], w)
		}
	}
	if _, err := os.Stat(strings.TrimSpace(stdout)); err != nil {
		t.Fatalf("the bindings were not written: %v (stdout %q)", err, stdout)
	}
}
