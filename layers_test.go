package mqsim_test

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// layers are the rooms of the project, lowest first, as DESIGN.md draws them: a package
// may import packages of lower layers only, and, within model/, other model packages; a
// lab's code (labs/NAME/starter, solution) imports its lab's package, labs/NAME.
// Packages of one layer are peers and do not import each other.
var layers = [][]string{
	{"mqsim/sim", "mqsim/internal/machinetest", "mqsim/estimate"},
	{"mqsim/model/..."},
	{"mqsim/checker", "mqsim/metrics", "mqsim/internal/benchhistory"},
	{"mqsim/labs/..."},
	{"mqsim/scenarios/script"},
	{"mqsim/scenarios", "mqsim/scenarios/runner"},
	{"mqsim/scenarios/swarm", "mqsim/scenarios/compare", "mqsim/scenarios/quiz", "mqsim/gateway"},
	{"mqsim/labs"},
	{"mqsim/export", "mqsim/tui"},
	{"mqsim/export/page"},
	{"mqsim/cmd/mqsim", "mqsim/cmd/genhistory", "mqsim/notes"},
}

// layerOf is the layer of a package, or -1 when it has none.
func layerOf(pkg string) int {
	for i, l := range layers {
		for _, p := range l {
			if p == pkg || (strings.HasSuffix(p, "/...") && strings.HasPrefix(pkg, strings.TrimSuffix(p, "..."))) {
				return i
			}
		}
	}
	return -1
}

// wrongWay lists the imports (package -> its imports, both module paths) that point up
// or sideways, and the packages no layer names.
func wrongWay(imports map[string][]string) []string {
	var bad []string
	for _, pkg := range slices.Sorted(mapKeys(imports)) {
		from := layerOf(pkg)
		if from < 0 {
			bad = append(bad, pkg+" is in no layer: add it to DESIGN.md's picture and to layers")
			continue
		}
		for _, imp := range imports[pkg] {
			to := layerOf(imp)
			modelToModel := strings.HasPrefix(pkg, "mqsim/model/") && strings.HasPrefix(imp, "mqsim/model/")
			codeToItsLab := strings.HasPrefix(imp, "mqsim/labs/") && strings.HasPrefix(pkg, imp+"/")
			if to < 0 || (to >= from && !modelToModel && !codeToItsLab) {
				bad = append(bad, fmt.Sprintf("%s imports %s", pkg, imp))
			}
		}
	}
	return bad
}

func mapKeys(m map[string][]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// moduleImports reads the imports of the module's own packages from the source (test
// files left out: a test may reach up to drive what it tests).
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	imports := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := "mqsim/" + filepath.ToSlash(filepath.Dir(path))
		if _, ok := imports[pkg]; !ok {
			imports[pkg] = nil
		}
		for _, is := range f.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			if (p == "mqsim" || strings.HasPrefix(p, "mqsim/")) && !slices.Contains(imports[pkg], p) {
				imports[pkg] = append(imports[pkg], p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return imports
}

// The package graph stays one-way, as DESIGN.md's layout states.
func TestImportsPointOneWay(t *testing.T) {
	imports := moduleImports(t)
	if len(imports) < 10 {
		t.Fatalf("found only %d packages: is the test running at the module root?", len(imports))
	}
	for _, b := range wrongWay(imports) {
		t.Error(b)
	}
}

// The rule catches an import that points up, one between peers, and a package in no layer.
func TestWrongWayCatchesPlantedImports(t *testing.T) {
	got := wrongWay(map[string][]string{
		"mqsim/checker":          {"mqsim/model/history", "mqsim/scenarios/runner"},
		"mqsim/scenarios/runner": {"mqsim/scenarios/script", "mqsim/scenarios"},
		"mqsim/model/broker":     {"mqsim/model/wal", "mqsim/sim"},
		"mqsim/elsewhere":        nil,
		"mqsim/labs/a/starter":   {"mqsim/labs/a", "mqsim/labs/b"},
	})
	want := []string{
		"mqsim/checker imports mqsim/scenarios/runner",
		"mqsim/elsewhere is in no layer: add it to DESIGN.md's picture and to layers",
		"mqsim/labs/a/starter imports mqsim/labs/b",
		"mqsim/scenarios/runner imports mqsim/scenarios",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
