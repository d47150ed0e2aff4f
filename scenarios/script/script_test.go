package script_test

import (
	"strings"
	"testing"

	"mqsim/scenarios"
	"mqsim/scenarios/script"
)

// FuzzParse checks that any text either fails to parse with a positioned error or parses
// to steps that format back to a file that parses to the same steps.
func FuzzParse(f *testing.F) {
	for _, e := range scenarios.Catalog() {
		f.Add(e.Text)
	}
	for _, s := range []string{"run for=1ms\n----\n", "# c\nx a=(1, 2) b\n----\n----\nout\n\nmore\n----\n----\n",
		"cmd \\\n  cont\n----\n", "----\n", "a\nb\n", "p\ninput\n----\nout\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := script.Parse("fuzz", text)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz:") {
				t.Fatalf("error without position: %v", err)
			}
			return
		}
		var b strings.Builder
		for i, st := range s.Steps {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(st.Format(st.Expected))
		}
		again, err := script.Parse("fuzz", b.String())
		if err != nil {
			t.Fatalf("formatted script does not parse: %v\n%s", err, b.String())
		}
		if len(again.Steps) != len(s.Steps) {
			t.Fatalf("round trip changed the step count %d -> %d\n%s", len(s.Steps), len(again.Steps), b.String())
		}
		for i := range s.Steps {
			a, z := s.Steps[i], again.Steps[i]
			if a.Text != z.Text || a.Input != z.Input || a.Expected != z.Expected {
				t.Fatalf("step %d changed:\n%+v\n%+v", i, a, z)
			}
		}
	})
}
