// Package goldenfile compares test output with golden files under a package's testdata/,
// rewriting them only when the test binary runs with its -update flag.
package goldenfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Check compares got with the file at path. With update, it writes got there instead. A
// difference is reported with the first differing line of each side.
func Check(tb testing.TB, path string, got []byte, update bool) {
	tb.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run the test with -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(gl), len(wl)); i++ {
		if g, w := line(gl, i), line(wl, i); g != w {
			tb.Errorf("%s differs from the golden file at line %d (run the test with -update after checking the change):\n got: %.3000s\nwant: %.3000s", path, i+1, g, w)
			return
		}
	}
}

func line(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "<end of file>"
}
