// Command exported counts the exported identifiers of every package of the root module at
// one or two git revisions, read from the repository itself (no checkout, no build):
//
//	go run ./scripts/exported REV            one column: the count per package at REV
//	go run ./scripts/exported BASE HEAD      before, after and the change per package
//
// An exported identifier is a package-level constant, variable, type or function whose name
// is exported, or an exported method of an exported type; test files, testdata, generated
// bindings' tests and the nested modules (examples/quickstart, tools) are not counted. The
// output is a Markdown table, packages by import path relative to the module root.
package main

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"

	"github.com/beamagents/beamagents/internal/apicount"
)

func main() {
	revs := os.Args[1:]
	if len(revs) < 1 || len(revs) > 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/exported REV [REV]")
		os.Exit(2)
	}
	counts := make([]map[string]int, len(revs))
	for i, rev := range revs {
		c, err := count(rev)
		if err != nil {
			fmt.Fprintf(os.Stderr, "exported: %s: %v\n", rev, err)
			os.Exit(1)
		}
		counts[i] = c
	}
	os.Stdout.WriteString(table(revs, counts))
}

// count returns the exported identifiers per package directory at rev.
func count(rev string) (map[string]int, error) {
	files, err := git("ls-tree", "-r", "--name-only", rev)
	if err != nil {
		return nil, err
	}
	nested := map[string]bool{}
	var sources []string
	for _, f := range strings.Split(strings.TrimSpace(string(files)), "\n") {
		switch {
		case path.Base(f) == "go.mod" && f != "go.mod":
			nested[path.Dir(f)] = true
		case strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, "_test.go") && !strings.Contains("/"+f, "/testdata/"):
			sources = append(sources, f)
		}
	}
	out := map[string]int{}
	fset := token.NewFileSet()
	for _, f := range sources {
		if inNested(f, nested) {
			continue
		}
		src, err := git("show", rev+":"+f)
		if err != nil {
			return nil, err
		}
		af, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if af.Name.Name == "main" && path.Dir(f) != "." && strings.HasPrefix(f, "scripts/") {
			continue // the repository's own tools
		}
		out[path.Dir(f)] += apicount.Exported(af)
	}
	return out, nil
}

func inNested(f string, nested map[string]bool) bool {
	for d := path.Dir(f); d != "."; d = path.Dir(d) {
		if nested[d] {
			return true
		}
	}
	return false
}

func table(revs []string, counts []map[string]int) string {
	var pkgs []string
	for _, c := range counts {
		for p := range c {
			if !slices.Contains(pkgs, p) {
				pkgs = append(pkgs, p)
			}
		}
	}
	slices.Sort(pkgs)
	var b bytes.Buffer
	if len(revs) == 1 {
		fmt.Fprintf(&b, "| package | %s |\n|---|---:|\n", revs[0])
	} else {
		fmt.Fprintf(&b, "| package | %s | %s | change |\n|---|---:|---:|---:|\n", revs[0], revs[1])
	}
	total := make([]int, len(revs))
	row := func(name string, v []int, ok []bool) {
		if len(v) == 1 {
			fmt.Fprintf(&b, "| %s | %d |\n", name, v[0])
			return
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %+d |\n", name, cell(v[0], ok[0]), cell(v[1], ok[1]), v[1]-v[0])
	}
	for _, p := range pkgs {
		v, ok := make([]int, len(revs)), make([]bool, len(revs))
		for i, c := range counts {
			v[i], ok[i] = c[p]
			total[i] += v[i]
		}
		row(p, v, ok)
	}
	row("**total**", total, []bool{true, true})
	return b.String()
}

// cell is a count, or "–" for a package that does not exist at the revision.
func cell(n int, ok bool) string {
	if !ok {
		return "–"
	}
	return fmt.Sprint(n)
}

func git(args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
