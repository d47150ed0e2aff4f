package scenarios

import (
	"embed"
	"fmt"
	"mqsim/scenarios/script"
	"os"
	"path"
	"slices"
	"strings"
)

// The catalogue: scenario files built into the binary, so `mqsim run NAME` works from
// anywhere.
//
//go:embed catalog/*.txt
var catalogFS embed.FS

// Entry is one catalogue scenario.
type Entry struct {
	Name        string
	Description string
	Tags        []string
	Text        string
}

// Catalog lists the built-in scenarios, sorted by name.
func Catalog() []Entry {
	files, _ := catalogFS.ReadDir("catalog")
	var es []Entry
	for _, f := range files {
		b, err := catalogFS.ReadFile("catalog/" + f.Name())
		if err != nil {
			continue
		}
		name := strings.TrimSuffix(f.Name(), ".txt")
		e := Entry{Name: name, Text: string(b)}
		if s, err := script.Parse(name, string(b)); err == nil {
			e.Description, e.Tags = s.Description, s.Tags
		}
		es = append(es, e)
	}
	slices.SortFunc(es, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return es
}

// Load finds a scenario by catalogue name or by file path and parses it. A name that is
// both a catalogue entry and a file is read from the file, so a local edit wins.
func Load(nameOrPath string) (*script.Script, error) {
	if b, err := os.ReadFile(nameOrPath); err == nil {
		return script.Parse(nameOrPath, string(b))
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	for _, e := range Catalog() {
		if e.Name == nameOrPath {
			return script.Parse(path.Join("catalog", e.Name+".txt"), e.Text)
		}
	}
	if near := nearNames(nameOrPath); len(near) > 0 {
		return nil, fmt.Errorf("no scenario file or catalogue entry named %q; did you mean %s? (mqsim list shows them all)", nameOrPath, strings.Join(near, " or "))
	}
	return nil, fmt.Errorf("no scenario file or catalogue entry named %q (mqsim list shows the catalogue)", nameOrPath)
}

// nearNames are the catalogue names a mistyped name probably meant: those that contain
// it, else those a few edits away (at most a quarter of its letters, and at least 2),
// nearest first; at most three.
func nearNames(typed string) []string {
	type near struct {
		name string
		dist int
	}
	var ns []near
	for _, e := range Catalog() {
		if len(typed) >= 3 && strings.Contains(e.Name, typed) {
			ns = append(ns, near{e.Name, 0})
		} else if d := editDistance(typed, e.Name); d <= max(2, len(typed)/4) {
			ns = append(ns, near{e.Name, d})
		}
	}
	slices.SortStableFunc(ns, func(a, b near) int { return a.dist - b.dist })
	var names []string
	for _, n := range ns[:min(len(ns), 3)] {
		names = append(names, n.name)
	}
	return names
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
