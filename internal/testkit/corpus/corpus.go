// Package corpus loads the interaction value-document corpus (interaction/testdata/docs): one
// directory per schema (named by its root type id), one file per document, named
// "valid--<what>.json" for documents that must be admitted and "<rule>--<what>.json" for
// documents that must be refused with that rule.
//
// Files are templates so that they survive schema edits and stay readable. Before use:
//
//	@DIGEST@              becomes the schema's digest
//	@REPEAT:<n>:<text>@   becomes text repeated n times (text contains no '@')
//	@PAD:<n>@             becomes as many 'x' as make the whole document exactly n bytes
//
// Every other byte, including invalid UTF-8, a BOM, CR and the terminal LF, is taken as is.
package corpus

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Doc is one expanded corpus document.
type Doc struct {
	Schema string // root type id
	Name   string // file name without .json
	Bytes  []byte
}

// Valid reports whether the document must be admitted.
func (d Doc) Valid() bool { return strings.HasPrefix(d.Name, "valid--") }

// Rule returns the rule a hostile document must be refused with ("" for a valid one).
func (d Doc) Rule() string {
	if d.Valid() {
		return ""
	}
	rule, _, _ := strings.Cut(d.Name, "--")
	return rule
}

// ID returns "<schema>/<name>".
func (d Doc) ID() string { return d.Schema + "/" + d.Name }

// Load reads every document under dir, sorted by schema and name; digest maps a root type id
// to its schema digest.
func Load(dir string, digest func(root string) (string, error)) ([]Doc, error) {
	schemas, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var docs []Doc
	for _, s := range schemas {
		if !s.IsDir() {
			continue
		}
		d, err := digest(s.Name())
		if err != nil {
			return nil, err
		}
		files, err := filepath.Glob(filepath.Join(dir, s.Name(), "*.json"))
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			b, err := Expand(raw, d)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			docs = append(docs, Doc{Schema: s.Name(), Name: strings.TrimSuffix(filepath.Base(f), ".json"), Bytes: b})
		}
	}
	return docs, nil
}

// Expand applies the template macros.
func Expand(raw []byte, digest string) ([]byte, error) {
	out := bytes.ReplaceAll(raw, []byte("@DIGEST@"), []byte(digest))
	for {
		i := bytes.Index(out, []byte("@REPEAT:"))
		if i < 0 {
			break
		}
		rest := out[i+len("@REPEAT:"):]
		n, text, end, err := repeatArgs(rest)
		if err != nil {
			return nil, err
		}
		expanded := append(append([]byte(nil), out[:i]...), bytes.Repeat(text, n)...)
		out = append(expanded, rest[end:]...)
	}
	return pad(out)
}

func repeatArgs(rest []byte) (n int, text []byte, end int, err error) {
	colon := bytes.IndexByte(rest, ':')
	at := bytes.IndexByte(rest, '@')
	if colon < 0 || at < colon {
		return 0, nil, 0, fmt.Errorf("malformed @REPEAT@")
	}
	n, err = strconv.Atoi(string(rest[:colon]))
	if err != nil {
		return 0, nil, 0, fmt.Errorf("malformed @REPEAT@ count: %w", err)
	}
	return n, rest[colon+1 : at], at + 1, nil
}

func pad(out []byte) ([]byte, error) {
	i := bytes.Index(out, []byte("@PAD:"))
	if i < 0 {
		return out, nil
	}
	end := bytes.IndexByte(out[i+1:], '@')
	if end < 0 {
		return nil, fmt.Errorf("malformed @PAD@")
	}
	macro := out[i : i+1+end+1]
	total, err := strconv.Atoi(string(macro[len("@PAD:") : len(macro)-1]))
	if err != nil {
		return nil, fmt.Errorf("malformed @PAD@ size: %w", err)
	}
	fill := total - (len(out) - len(macro))
	if fill < 0 {
		return nil, fmt.Errorf("@PAD@: the document is already longer than %d", total)
	}
	return bytes.Replace(out, macro, bytes.Repeat([]byte("x"), fill), 1), nil
}
