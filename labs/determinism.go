package labs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// The learner's code runs inside the simulation, so it obeys the model's determinism
// rules (DESIGN.md, "Determinism guard"): one seed must decide everything it does. The
// check reads the package's Go files (go/parser, go/ast, no type checking) and names
// each breach by file and line, with the reason.

// Problem is one breach of the rules.
type Problem struct {
	File string // path as the learner knows it: labs/NAME/starter/x.go
	Line int
	Why  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Why) }

// Reasons, one per rule.
const (
	whyGo      = "a go statement starts a goroutine: the simulation runs one event at a time, and a goroutine would run in an order the seed does not decide"
	whyChan    = "a channel passes values between goroutines, and the simulation has one: keep state in your struct or in the database"
	whySelect  = "select waits on channels, and the simulation has no goroutines to wait for"
	whyClock   = "reads or waits on the real clock: the simulation has its own virtual clock, and only time.Duration and its units (time.Second ...) are allowed"
	whyMapIter = "ranges over a map, whose order Go randomises from run to run: range over sorted keys instead (slices.Sorted(maps.Keys(m)))"
	whyGlobal  = "is a package-level variable, which outlives a run: the next seed would see what this one left; keep state in your Handler's fields or in the database"
)

// forbiddenImports are the standard packages the rules exclude, by path or path prefix
// (a trailing "/"), and why.
var forbiddenImports = []struct{ path, why string }{
	{"os", "reaches the operating system: a run must depend on its seed alone"},
	{"os/", "reaches the operating system: a run must depend on its seed alone"},
	{"net", "reaches the real network: the lab's nodes talk over the simulated one"},
	{"net/", "reaches the real network: the lab's nodes talk over the simulated one"},
	{"math/rand", "draws from a random source the seed does not decide"},
	{"math/rand/v2", "draws from a random source the seed does not decide"},
	{"crypto/rand", "draws from a random source the seed does not decide"},
	{"sync", "synchronises goroutines, and the simulation runs on one"},
	{"sync/", "synchronises goroutines, and the simulation runs on one"},
	{"runtime", "reaches the Go runtime's scheduler, which the seed does not decide"},
	{"syscall", "reaches the operating system: a run must depend on its seed alone"},
	{"unsafe", "steps outside Go's rules"},
}

// timeAllowed are the names of package time the code may use: durations, not clocks.
var timeAllowed = []string{"Duration", "Nanosecond", "Microsecond", "Millisecond", "Second", "Minute", "Hour"}

// CheckFS checks the package whose Go files are at the root of fsys (test files left
// out). dir is how problems name the folder; labPkg is the one mqsim package the code
// may import, the lab's interface.
func CheckFS(fsys fs.FS, dir, labPkg string) ([]Problem, error) {
	names, err := fs.Glob(fsys, "*.go")
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		src, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, path.Join(dir, n), src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no Go files", dir)
	}
	maps := mapNames(files)
	var ps []Problem
	for _, f := range files {
		ps = append(ps, checkFile(fset, f, labPkg, maps)...)
	}
	return ps, nil
}

// checkFile checks one file.
func checkFile(fset *token.FileSet, f *ast.File, labPkg string, maps map[string]bool) []Problem {
	var ps []Problem
	add := func(n ast.Node, why string) {
		p := fset.Position(n.Pos())
		ps = append(ps, Problem{File: p.Filename, Line: p.Line, Why: why})
	}
	timeName := ""
	for _, is := range f.Imports {
		p, _ := strconv.Unquote(is.Path.Value)
		switch {
		case p == "time":
			timeName = "time"
			if is.Name != nil {
				timeName = is.Name.Name
			}
		case (p == "mqsim" || strings.HasPrefix(p, "mqsim/")) && p != labPkg:
			add(is, fmt.Sprintf("imports %s: a lab's code may import only its lab's package, %s", p, labPkg))
		}
		for _, fi := range forbiddenImports {
			if p == fi.path || (strings.HasSuffix(fi.path, "/") && strings.HasPrefix(p, fi.path)) {
				add(is, fmt.Sprintf("imports %s, which %s", p, fi.why))
				break
			}
		}
	}
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.VAR {
			for _, spec := range gd.Specs {
				for _, id := range spec.(*ast.ValueSpec).Names {
					if id.Name != "_" {
						add(id, id.Name+" "+whyGlobal)
					}
				}
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			add(n, whyGo)
		case *ast.ChanType:
			add(n, whyChan)
		case *ast.SendStmt:
			add(n, whyChan)
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				add(n, whyChan)
			}
		case *ast.SelectStmt:
			add(n, whySelect)
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && timeName != "" && x.Name == timeName && !slices.Contains(timeAllowed, n.Sel.Name) {
				add(n, "time."+n.Sel.Name+" "+whyClock)
			}
		case *ast.RangeStmt:
			if rangesOverMap(n.X, maps) {
				add(n, whyMapIter)
			}
		}
		return true
	})
	return ps
}

// mapNames are the names the package declares with a map type: variables, struct
// fields, parameters and results, and those of named map types. Without type checking
// the check sees only these, which is what a lab's small package has.
func mapNames(files []*ast.File) map[string]bool {
	types := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if _, isMap := ts.Type.(*ast.MapType); isMap {
					types[ts.Name.Name] = true
				}
			}
			return true
		})
	}
	isMap := func(e ast.Expr) bool {
		switch t := e.(type) {
		case *ast.MapType:
			return true
		case *ast.Ident:
			return types[t.Name]
		case *ast.StarExpr:
			id, ok := t.X.(*ast.Ident)
			return ok && types[id.Name]
		case *ast.CompositeLit:
			_, ok := t.Type.(*ast.MapType)
			if id, named := t.Type.(*ast.Ident); named {
				ok = types[id.Name]
			}
			return ok
		case *ast.CallExpr:
			if fn, ok := t.Fun.(*ast.Ident); ok && fn.Name == "make" && len(t.Args) > 0 {
				_, ok := t.Args[0].(*ast.MapType)
				return ok
			}
		}
		return false
	}
	names := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field:
				if isMap(n.Type) {
					for _, id := range n.Names {
						names[id.Name] = true
					}
				}
			case *ast.ValueSpec:
				for i, id := range n.Names {
					if (n.Type != nil && isMap(n.Type)) || (i < len(n.Values) && isMap(n.Values[i])) {
						names[id.Name] = true
					}
				}
			case *ast.AssignStmt:
				for i, lhs := range n.Lhs {
					if id, ok := lhs.(*ast.Ident); ok && i < len(n.Rhs) && isMap(n.Rhs[i]) {
						names[id.Name] = true
					}
				}
			case *ast.KeyValueExpr:
				if id, ok := n.Key.(*ast.Ident); ok && isMap(n.Value) {
					names[id.Name] = true
				}
			}
			return true
		})
	}
	return names
}

// rangesOverMap reports whether a range expression is one of the package's maps (a
// name, or a field of that name), a map literal, or maps.Keys or maps.Values of one.
func rangesOverMap(x ast.Expr, maps map[string]bool) bool {
	switch e := x.(type) {
	case *ast.Ident:
		return maps[e.Name]
	case *ast.SelectorExpr:
		return maps[e.Sel.Name]
	case *ast.CompositeLit:
		_, ok := e.Type.(*ast.MapType)
		return ok
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok {
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "maps" && (sel.Sel.Name == "Keys" || sel.Sel.Name == "Values" || sel.Sel.Name == "All") {
				return true
			}
		}
	}
	return false
}
