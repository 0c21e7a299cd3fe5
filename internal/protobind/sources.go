package protobind

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Find lists the .proto files that args name, each by its name relative to importRoot (the
// name an import statement uses): a file names itself, a directory every .proto file under
// it (hidden directories skipped). The list is sorted and without duplicates; a path outside
// importRoot, a missing path, or no .proto file at all is a CodeSource error.
func Find(importRoot string, args []string) ([]string, error) {
	root, err := filepath.Abs(importRoot)
	if err != nil {
		return nil, &Error{Code: CodeSource, Where: importRoot, Message: err.Error()}
	}
	var names []string
	for _, arg := range args {
		found, err := protoFiles(arg)
		if err != nil {
			return nil, err
		}
		for _, p := range found {
			name, ok := nameUnder(root, p)
			if !ok {
				return nil, &Error{Code: CodeSource, Where: p, Message: "not under the import root " + importRoot}
			}
			names = append(names, name)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		return nil, &Error{Code: CodeSource, Where: strings.Join(args, " "), Message: "no .proto file"}
	}
	return names, nil
}

// protoFiles returns arg itself when it is a .proto file, else the .proto files under it.
func protoFiles(arg string) ([]string, error) {
	info, err := os.Stat(arg)
	if err != nil {
		return nil, &Error{Code: CodeSource, Where: arg, Message: "no such file or directory"}
	}
	if !info.IsDir() {
		if !strings.HasSuffix(arg, ".proto") {
			return nil, &Error{Code: CodeSource, Where: arg, Message: "not a .proto file"}
		}
		return []string{arg}, nil
	}
	var out []string
	err = filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && p != arg && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(p, ".proto"):
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, &Error{Code: CodeSource, Where: arg, Message: err.Error()}
	}
	return out, nil
}

// nameUnder returns p relative to root with forward slashes, refusing a path outside root:
// an import name never climbs out of its import root.
func nameUnder(root, p string) (string, bool) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}
