package protobind

import (
	"os"
	"path/filepath"
	"testing"
)

func TestModulePath(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, gomod, want string }{
		{"plain", "module example.com/agents\n\ngo 1.24\n", "example.com/agents"},
		{"quoted, commented", "// x\nmodule \"example.com/q\" // the module\n", "example.com/q"},
		{"not a module line", "modules example.com/no\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name+".mod")
			if err := os.WriteFile(p, []byte(tc.gomod), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := ModulePath(p); got != tc.want {
				t.Fatalf("ModulePath = %q, want %q", got, tc.want)
			}
		})
	}
	if got := ModulePath(filepath.Join(dir, "none")); got != "" {
		t.Errorf("no go.mod: %q", got)
	}
}

// Write puts every file under out, and nothing at all when one would leave it.
func TestWrite(t *testing.T) {
	out := t.TempDir()
	var wrote []string
	if err := Write(out, []File{{Name: "a/b.pb.go", Content: []byte("package b\n")}}, func(p string) { wrote = append(wrote, p) }); err != nil {
		t.Fatal(err)
	}
	if len(wrote) != 1 || wrote[0] != filepath.Join(out, "a", "b.pb.go") {
		t.Fatalf("wrote %q", wrote)
	}
	err := Write(out, []File{{Name: "c.pb.go", Content: []byte("x")}, {Name: "../d.pb.go", Content: []byte("x")}}, func(string) {})
	if err == nil {
		t.Fatal("a path leaving out was written")
	}
	if _, err := os.Stat(filepath.Join(out, "c.pb.go")); err == nil {
		t.Fatal("a file was written before the refusal")
	}
}
