// Package apicount counts a Go file's exported identifiers: package-level constants,
// variables, types and functions whose name is exported, and exported methods of exported
// types. It is the one count behind scripts/exported's table and the architecture tests'
// bounds, so both measure the same thing.
package apicount

import "go/ast"

// Exported returns the number of exported identifiers f declares.
func Exported(f *ast.File) int {
	n := 0
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && (d.Recv == nil || receiverExported(d.Recv.List[0].Type)) {
				n++
			}
		case *ast.GenDecl:
			n += exportedSpecs(d.Specs)
		}
	}
	return n
}

func exportedSpecs(specs []ast.Spec) int {
	n := 0
	for _, s := range specs {
		switch s := s.(type) {
		case *ast.TypeSpec:
			if s.Name.IsExported() {
				n++
			}
		case *ast.ValueSpec:
			for _, id := range s.Names {
				if id.IsExported() {
					n++
				}
			}
		}
	}
	return n
}

func receiverExported(t ast.Expr) bool {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}
