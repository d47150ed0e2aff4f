package tui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The views never read the project's own event text back: they switch on the events'
// types (sim.Event.Data). This test fails when a file of tui/, export/, checker/ or metrics/
// imports regexp, or hands an event's Detail to a function that takes text apart.
func TestViewsDoNotParseEventText(t *testing.T) {
	for _, dir := range []string{".", "../export", "../checker", "../metrics"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			for _, problem := range textParsing(t, f) {
				t.Errorf("%s", problem)
			}
		}
	}
}

// takesTextApart are the functions that read structure out of a string.
var takesTextApart = map[string]bool{
	"strings.Cut": true, "strings.HasPrefix": true, "strings.HasSuffix": true, "strings.Contains": true,
	"strings.Fields": true, "strings.Split": true, "strings.SplitN": true, "strings.Index": true,
	"strings.TrimPrefix": true, "strings.CutPrefix": true, "strings.CutSuffix": true,
	"fmt.Sscanf": true, "fmt.Sscan": true, "strconv.Atoi": true, "strconv.ParseInt": true,
}

func textParsing(t *testing.T, path string) []string {
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	for _, imp := range af.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "regexp" {
			problems = append(problems, fset.Position(imp.Pos()).String()+": imports regexp")
		}
	}
	// Names that hold an event's text (d := e.Detail) count as the text itself.
	holdsDetail := map[string]bool{}
	ast.Inspect(af, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok && len(as.Lhs) == len(as.Rhs) {
			for i, rhs := range as.Rhs {
				if s, ok := rhs.(*ast.SelectorExpr); ok && s.Sel.Name == "Detail" {
					if id, ok := as.Lhs[i].(*ast.Ident); ok {
						holdsDetail[id.Name] = true
					}
				}
			}
		}
		return true
	})
	isDetail := func(e ast.Expr) bool {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			return x.Sel.Name == "Detail"
		case *ast.Ident:
			return holdsDetail[x.Name]
		}
		return false
	}
	ast.Inspect(af, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok || !takesTextApart[pkg.Name+"."+sel.Sel.Name] {
			return true
		}
		for _, arg := range call.Args {
			if isDetail(arg) {
				problems = append(problems, fset.Position(call.Pos()).String()+": "+pkg.Name+"."+sel.Sel.Name+" takes an event's Detail apart")
			}
		}
		return true
	})
	return problems
}
