package testkit_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/internal/apicount"
	"github.com/beamagents/beamagents/records"
)

// root is the module's root, from this package's directory.
const root = "../.."

// agentExportBound bounds package agent's exported identifiers. Its API serves two
// audiences: authors of handler agents (Definition, Limits, Handler, Trigger, Context and
// its operations, the durable waits (Sleep, Until, ToolsBy, Await, AwaitBy) and long-term
// memory (Recall, Remember) among them, the operations' types and errors, New and Register:
// about 60) and framework adapters (FromContext, AdmitCall, RunCalls, ToolMessage, Outcome),
// plus what an Agent says of itself and the registry's Build and Registered. The hosts that
// run agents (the DoFns, the driver, replay, the harness) call the core through agent/host
// (Activate, Fire, Restore, Batch, Store, Result, Deps, the cells and timer tags, DeadLetter),
// so an author reading this package meets none of it. The bindings agent lives in
// agent/bindings, the dead-letter reasons in records, typed tools in effector/tool, hot-key
// sharding in agent/shard, bursts in agent/burst and tenant budgets in budget; a new concept
// belongs in a package of its own, not in agent: the bound is today's count.
const agentExportBound = 77

// Package agent's exported identifiers stay under agentExportBound.
func TestAgentExportBound(t *testing.T) {
	n := 0
	for _, f := range sources(t, filepath.Join(root, "agent"), false) {
		n += apicount.Exported(f.ast)
	}
	if n > agentExportBound {
		t.Fatalf("package agent exports %d identifiers; the bound is %d (see agentExportBound)", n, agentExportBound)
	}
	t.Logf("package agent exports %d identifiers (bound %d)", n, agentExportBound)
}

// Only package records spells an output kind: no other package's code holds a kind's topic
// flag, file name or record message type as a string; they take it from records.Kinds.
func TestOnlyRecordsNamesAnOutputKind(t *testing.T) {
	names := map[string]string{}
	for _, k := range records.Kinds() {
		names[k.Topic] = "the topic flag of the " + k.Noun + " output"
		names[k.Name+".binpb"], names[k.Name+".jsonl"] = "a file name of the "+k.Noun+" output", "a file name of the "+k.Noun+" output"
		names[string(k.Type)] = "the message type of the " + k.Noun + " output"
	}
	for _, f := range sources(t, root, true) {
		if owner(f.path) {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if v, err := strconv.Unquote(lit.Value); err == nil && names[v] != "" {
				t.Errorf("%s: %q spells %s (take it from package records)", f.fset.Position(lit.Pos()), v, names[v])
			}
			return true
		})
	}
}

// owner reports whether a file belongs to the owner of the output kinds (records) or to the
// generated bindings.
func owner(path string) bool {
	rel, _ := filepath.Rel(root, path)
	rel = filepath.ToSlash(rel)
	return strings.HasPrefix(rel, "records/") || strings.HasPrefix(rel, "gen/")
}

type source struct {
	path string
	fset *token.FileSet
	ast  *ast.File
}

// sources parses the non-test Go files of dir (and, with deep, of every directory under it
// that belongs to the root module: no testdata, no nested module).
func sources(t *testing.T, dir string, deep bool) []source {
	t.Helper()
	var out []source
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && p != dir && (!deep || skipDir(p)):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		out = append(out, source{path: p, fset: fset, ast: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// skipDir reports the directories outside the root module's packages.
func skipDir(p string) bool {
	base := filepath.Base(p)
	if base == "testdata" || strings.HasPrefix(base, ".") {
		return true
	}
	_, err := os.Stat(filepath.Join(p, "go.mod"))
	return err == nil
}
