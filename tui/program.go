package tui

import (
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"mqsim/scenarios"
	"mqsim/scenarios/runner"
)

// Open loads a scenario by catalogue name or file path and records it.
func Open(nameOrPath string, opts runner.Options) (*Run, error) {
	s, err := scenarios.Load(nameOrPath)
	if err != nil {
		return nil, err
	}
	return Record("main", s, opts)
}

// ProgramOptions are the Bubble Tea options for the UI options: in no-colour mode the
// output keeps no colour.
func ProgramOptions(opts Options) []tea.ProgramOption {
	if opts.NoColor {
		return []tea.ProgramOption{tea.WithColorProfile(colorprofile.Ascii)}
	}
	return nil
}
