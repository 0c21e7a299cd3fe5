package protobind

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Bindings finds the .proto files of sources under importRoot (Find), compiles them,
// generates their Go files in layout l, and checks their interaction schemas (Check).
func Bindings(importRoot string, sources []string, l Layout) ([]File, []Refusal, error) {
	names, err := Find(importRoot, sources)
	if err != nil {
		return nil, nil, err
	}
	compiled, err := Compile(context.Background(), importRoot, names)
	if err != nil {
		return nil, nil, err
	}
	files, err := Generate(compiled, l)
	if err != nil {
		return nil, nil, err
	}
	return files, Check(compiled), nil
}

// Write writes each file under out, calling wrote with its path. A name that would leave
// out (an import path with "..") is refused before anything is written.
func Write(out string, files []File, wrote func(path string)) error {
	for _, f := range files {
		if !filepath.IsLocal(filepath.FromSlash(f.Name)) {
			return errors.New(f.Name + ": the output path leaves --out")
		}
	}
	for _, f := range files {
		p := filepath.Join(out, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Content, 0o644); err != nil {
			return err
		}
		wrote(p)
	}
	return nil
}

// ModulePath reads the module path of a go.mod, or "" without one: the files then go to
// their full import paths under the output directory.
func ModulePath(goMod string) string {
	f, err := os.Open(goMod)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module")
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		rest, _, _ = strings.Cut(strings.TrimSpace(rest), "//")
		rest = strings.TrimSpace(rest)
		if unq, err := strconv.Unquote(rest); err == nil {
			return unq
		}
		return rest
	}
	return ""
}
