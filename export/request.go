package export

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"mqsim/scenarios"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
)

// Request is one export: what `mqsim export` is asked for, flag by flag.
type Request struct {
	// Scenario is a catalogue name or a file path.
	Scenario string
	Format   Format
	// Seed overrides the scenario's seed when SeedSet.
	Seed    uint64
	SeedSet bool
	// Fix applies the scenario's "fix:" settings; Set overrides cluster settings.
	Fix bool
	Set []string
	// From and To choose steps (0: not given).
	From, To int
	// Nodes and Hide shape the diagrams (see Options).
	Nodes, Hide []string
	// Budget bounds porcupine's search (0: none).
	Budget time.Duration
	// Record records the run as the terminal UI does, for the html format (package tui
	// does that; export, its peer, does not import it).
	Record func(*script.Script, runner.Options) (Recording, error)
	// Full asks an SVG for the whole-run diagram (about 600 events, see
	// Format.DefaultEvents) rather than the slide the SVG defaults to without --from/--to
	// (see WriteSlide).
	Full bool
}

// Slide reports whether the request draws a slide: an SVG with no window given and no --full.
func (q Request) Slide() bool {
	return q.Format == SVG && !q.Full && q.From == 0 && q.To == 0
}

// Validate checks the combination of flags before anything runs.
func (q Request) Validate() error {
	switch {
	case (q.From != 0 || q.To != 0) && !q.Format.Windowed():
		return fmt.Errorf("--from/--to choose kernel steps of the trace; --format %s always exports the whole history", q.Format)
	case (len(q.Nodes) > 0 || len(q.Hide) > 0) && !q.Format.Diagram():
		return fmt.Errorf("--nodes and --hide shape the diagrams (svg, mermaid), not --format %s", q.Format)
	case q.From < 0 || q.To < 0:
		return fmt.Errorf("--from and --to are step numbers, from 1")
	case q.Full && q.Format != SVG:
		return fmt.Errorf("--full asks the svg format for the whole run instead of a slide; --format %s has no slide", q.Format)
	case q.Full && (q.From != 0 || q.To != 0):
		return fmt.Errorf("--full draws the whole run and --from/--to a window of it: give one or the other")
	}
	return nil
}

// CommandLine is the request as an `mqsim export` command (without -o). Diagrams carry
// it, so that a file says how it was made; ParseCommandLine reads it back.
func (q Request) CommandLine() string {
	parts := []string{"mqsim export", q.Scenario, "--format", string(q.Format)}
	if q.SeedSet {
		parts = append(parts, "--seed", strconv.FormatUint(q.Seed, 10))
	}
	if q.Fix {
		parts = append(parts, "--fix")
	}
	if q.Full {
		parts = append(parts, "--full")
	}
	for _, s := range q.Set {
		parts = append(parts, "--set", s)
	}
	if q.From != 0 {
		parts = append(parts, "--from", strconv.Itoa(q.From))
	}
	if q.To != 0 {
		parts = append(parts, "--to", strconv.Itoa(q.To))
	}
	if len(q.Nodes) > 0 {
		parts = append(parts, "--nodes", strings.Join(q.Nodes, ","))
	}
	if len(q.Hide) > 0 {
		parts = append(parts, "--hide", strings.Join(q.Hide, ","))
	}
	return strings.Join(parts, " ")
}

// ParseCommandLine reads a command written by CommandLine (words separated by spaces;
// -o FILE is accepted and ignored).
func ParseCommandLine(line string) (Request, error) {
	words := strings.Fields(line)
	if len(words) < 3 || words[0] != "mqsim" || words[1] != "export" {
		return Request{}, fmt.Errorf("%q is not an mqsim export command", line)
	}
	q := Request{Format: SVG, Budget: 10 * time.Second}
	var err error
	for i := 2; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "-") {
			if q.Scenario != "" {
				return q, fmt.Errorf("%q: two scenarios, %s and %s", line, q.Scenario, w)
			}
			q.Scenario = w
			continue
		}
		if w == "--fix" || w == "--full" {
			q.Fix = q.Fix || w == "--fix"
			q.Full = q.Full || w == "--full"
			continue
		}
		if i+1 >= len(words) {
			return q, fmt.Errorf("%q: %s needs a value", line, w)
		}
		i++
		v := words[i]
		switch w {
		case "--format":
			q.Format, err = ParseFormat(v)
		case "--seed":
			q.Seed, err = strconv.ParseUint(v, 10, 64)
			q.SeedSet = true
		case "--set":
			q.Set = append(q.Set, v)
		case "--from":
			q.From, err = strconv.Atoi(v)
		case "--to":
			q.To, err = strconv.Atoi(v)
		case "--nodes":
			q.Nodes = strings.Split(v, ",")
		case "--hide":
			q.Hide = strings.Split(v, ",")
		case "-o", "--output":
		default:
			return q, fmt.Errorf("%q: unknown flag %s", line, w)
		}
		if err != nil {
			return q, fmt.Errorf("%q: %s %s: %v", line, w, v, err)
		}
	}
	if q.Scenario == "" {
		return q, fmt.Errorf("%q names no scenario", line)
	}
	return q, q.Validate()
}

// Result says what an export exported.
type Result struct {
	Run *Run
	// Window is the steps exported (zero for the history formats); Defaulted says the
	// request gave neither end and the window was chosen.
	Window    Window
	Defaulted bool
	// Slide says the SVG is a slide (Request.Slide); Moment is then its key moment, if
	// the run has one (HasMoment).
	Slide     bool
	Moment    Moment
	HasMoment bool
}

// Export runs the request's scenario and writes the export to w, in full or (on an
// error) not at all.
func Export(q Request, w io.Writer) (Result, error) {
	if err := q.Validate(); err != nil {
		return Result{}, err
	}
	script, err := scenarios.Load(q.Scenario)
	if err != nil {
		return Result{}, err
	}
	opts := runner.Options{Seed: q.Seed, SeedSet: q.SeedSet, Set: q.Set}
	if q.Fix {
		if len(script.Fix) == 0 {
			return Result{}, fmt.Errorf("%s names no fix (no \"fix:\" line in its narration)", script.Name)
		}
		opts.Set = append(slices.Clone(script.Fix), q.Set...)
	}
	run, err := Record(script, opts)
	if err != nil {
		return Result{}, err
	}
	res := Result{Run: run, Slide: q.Slide()}
	o := Options{Nodes: q.Nodes, Hide: q.Hide, Command: q.CommandLine()}
	var b bytes.Buffer
	if res.Slide {
		res.Moment, res.HasMoment = run.KeyMoment()
		if res.Window, err = run.SlideWindow(o); err != nil {
			return res, err
		}
		res.Defaulted = true
		if err := run.WriteSlide(&b, o); err != nil {
			return res, err
		}
		_, err = w.Write(b.Bytes())
		return res, err
	}
	if q.Format.Windowed() {
		if res.Window, err = run.CheckWindow(q.From, q.To, q.Format.DefaultEvents()); err != nil {
			return res, err
		}
		res.Defaulted = q.From == 0 && q.To == 0
	}
	o.Window = res.Window
	switch q.Format {
	case SVG:
		err = run.WriteSVG(&b, o)
	case Mermaid:
		err = run.WriteMermaid(&b, o)
	case JSONL:
		err = run.WriteJSONLines(&b, res.Window)
	case History:
		err = run.WriteHistory(&b)
	case Jepsen:
		err = run.WriteJepsen(&b)
	case Porcupine:
		err = run.WritePorcupine(&b, q.Budget)
	case Metrics:
		err = run.WriteMetrics(&b)
	case HTML:
		if q.Record == nil {
			return res, fmt.Errorf("--format html needs the terminal UI's recording of the run (Request.Record)")
		}
		var rec Recording
		if rec, err = q.Record(script, opts); err == nil {
			err = run.WriteHTML(&b, rec, q.CommandLine())
		}
	default:
		err = fmt.Errorf("format %q", q.Format)
	}
	if err != nil {
		return res, err
	}
	_, err = w.Write(b.Bytes())
	return res, err
}
