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
	var names []string
	for _, e := range Catalog() {
		names = append(names, e.Name)
	}
	return nil, fmt.Errorf("no scenario file or catalogue entry named %q (catalogue: %s; see mqsim list)", nameOrPath, strings.Join(names, ", "))
}
