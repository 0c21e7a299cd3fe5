package bindings_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// seam is what package agent may use of agent/internal/bind: the kind it asks instead of
// branching, the run a bindings step reaches it through, and the hooks. Any other name (an
// action, a prompt builder's input) would be the bindings runtime back in the core.
var seam = map[string]bool{"Kind": true, "Tool": true, "Run": true, "MemoryItem": true, "Build": true, "RunOf": true}

// TestAgentUsesOnlyTheSeam: package agent's code names nothing of the bindings vocabulary.
func TestAgentUsesOnlyTheSeam(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "bind" && !seam[sel.Sel.Name] {
				t.Errorf("%s: package agent uses bind.%s, which is not of the seam", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
}
