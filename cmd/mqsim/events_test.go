package main

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var rewriteEvents = flag.Bool("rewrite-events", false, "rewrite notes/event-kinds.md from the code")

// The docs' list of event kinds is generated from the code, never written by hand.
func TestEventKindsPageIsGenerated(t *testing.T) {
	const page = "../../notes/event-kinds.md"
	var b strings.Builder
	if err := writeEventsMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if *rewriteEvents {
		if err := os.WriteFile(page, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if string(have) != b.String() {
		t.Errorf("%s differs from `mqsim events --markdown`; regenerate it with go test ./cmd/mqsim -run TestEventKindsPageIsGenerated -rewrite-events", page)
	}
}

// Every type an events.go declares with a Kind method is listed in its package's
// EventDocs, so the generated page cannot leave one out.
func TestEveryEventTypeIsListed(t *testing.T) {
	listed := map[string]bool{}
	for _, p := range eventPackages() {
		for _, d := range p.Docs {
			listed[typeName(d.Example)] = true
		}
	}
	files, _ := filepath.Glob("../../model/*/events.go")
	labFiles, _ := filepath.Glob("../../labs/*/events.go")
	files = append(files, labFiles...)
	files = append(files, "../../sim/events.go")
	if len(files) < 2 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		fset := token.NewFileSet()
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range af.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "Kind" {
				continue
			}
			recv := fn.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			name := af.Name.Name + "." + recv.(*ast.Ident).Name
			if !listed[name] {
				t.Errorf("%s: event type %s is missing from its package's EventDocs (or the package from eventPackages)", f, name)
			}
		}
	}
	if !slices.ContainsFunc(eventPackages(), func(p eventPackage) bool { return p.Path == "sim" }) {
		t.Error("the kernel's events are not listed")
	}
}
