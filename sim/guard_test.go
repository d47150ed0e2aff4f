package sim

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// forbiddenImports are the packages through which nondeterminism gets in: the OS, the
// network, real concurrency, and the global or unseeded random sources.
var forbiddenImports = []string{"os", "os/exec", "net", "net/http", "sync", "sync/atomic", "math/rand", "crypto/rand", "unsafe", "runtime"}

// forbiddenTimeCalls read or wait on the wall clock.
var forbiddenTimeCalls = []string{"Now", "Since", "Until", "Sleep", "After", "AfterFunc", "Tick", "NewTimer", "NewTicker"}

// determinismLeaks parses every non-test Go file under dir and lists the constructs that
// would make a run depend on something other than its seed.
func determinismLeaks(dir string) ([]string, error) {
	var leaks []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" && path != dir {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		report := func(n ast.Node, what string) {
			leaks = append(leaks, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), what))
		}
		timeName := ""
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if slices.Contains(forbiddenImports, p) {
				report(imp, "imports "+p)
			}
			if p == "time" {
				timeName = "time"
				if imp.Name != nil {
					timeName = imp.Name.Name
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				report(n, "go statement")
			case *ast.ChanType:
				report(n, "channel type")
			case *ast.SendStmt:
				report(n, "channel send")
			case *ast.SelectStmt:
				report(n, "select statement")
			case *ast.UnaryExpr:
				if n.Op == token.ARROW {
					report(n, "channel receive")
				}
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && timeName != "" && id.Name == timeName && slices.Contains(forbiddenTimeCalls, n.Sel.Name) {
					report(n, "wall clock: time."+n.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	return leaks, err
}

// deterministicDirs are the code that runs inside a world: the kernel, the model, and each
// lab's nodes, interface, starter and solution (labs/NAME; the harness in labs/ itself
// builds runs from outside).
func deterministicDirs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("../labs")
	if err != nil {
		t.Fatal(err)
	}
	var labs []string
	for _, e := range entries {
		if e.IsDir() {
			labs = append(labs, filepath.Join("../labs", e.Name()))
		}
	}
	if len(labs) == 0 {
		t.Fatal("no lab under ../labs: the guard would cover none")
	}
	return append([]string{".", "../model"}, labs...)
}

func TestDeterministicCoreHasNoLeaks(t *testing.T) {
	for _, dir := range deterministicDirs(t) {
		leaks, err := determinismLeaks(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range leaks {
			t.Errorf("determinism leak: %s", l)
		}
	}
}

// The guard must catch what it is there to catch: a fixture with one of each leak.
func TestGuardCatchesEveryLeakKind(t *testing.T) {
	leaks, err := determinismLeaks("testdata/leaky")
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(leaks, "\n")
	for _, want := range []string{"imports math/rand", "imports os", "imports sync", "go statement", "channel type",
		"channel send", "channel receive", "select statement", "wall clock: time.Now", "wall clock: time.Sleep"} {
		if !strings.Contains(all, want) {
			t.Errorf("guard missed %q; it reported:\n%s", want, all)
		}
	}
}
