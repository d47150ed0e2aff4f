package export

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"mqsim/model/broker"
	"mqsim/scenarios"
	"mqsim/sim"
)

// slideEl is one element of a slide, with its attributes, its own text and its parents'
// classes.
type slideEl struct {
	name    string
	attr    map[string]string
	text    string
	parents []map[string]string // attributes of the enclosing elements, outermost first
}

func parseSlide(t *testing.T, data []byte) []*slideEl {
	t.Helper()
	var out, stack []*slideEl
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the slide is not well-formed XML: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			e := &slideEl{name: el.Name.Local, attr: map[string]string{}}
			for _, a := range el.Attr {
				e.attr[a.Name.Local] = a.Value
			}
			for _, p := range stack {
				e.parents = append(e.parents, p.attr)
			}
			out = append(out, e)
			stack = append(stack, e)
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(el)
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	return out
}

// pxSizes are the sizes of every "NNpx" in a style text and every font-size attribute.
func fontSizes(els []*slideEl) []int {
	var sizes []int
	for _, e := range els {
		if v, ok := e.attr["font-size"]; ok {
			n, _ := strconv.Atoi(v)
			sizes = append(sizes, n)
		}
		styles := e.attr["style"]
		if e.name == "style" {
			styles += e.text
		}
		for _, w := range strings.FieldsFunc(styles, func(r rune) bool { return r == ' ' || r == ';' || r == ':' || r == '{' || r == '}' || r == '\n' }) {
			if n, ok := strings.CutSuffix(w, "px"); ok {
				v, err := strconv.Atoi(n)
				if err != nil {
					continue
				}
				sizes = append(sizes, v)
			}
		}
	}
	return sizes
}

// The slide of acks1-leader-crash, as `mqsim export acks1-leader-crash --format svg`
// draws it by default: 16:9, readable from the back of a room, the lanes named as the run
// names its nodes, the acknowledgement that breaks the guarantee called out and marked at
// its own step (not the step where the checker dates the violation's beginning), and each
// replica's log and HW as they are right after it.
func TestSlideOfAcks1(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	var b bytes.Buffer
	if err := r.WriteSlide(&b, Options{Command: "mqsim export acks1-leader-crash --format svg"}); err != nil {
		t.Fatal(err)
	}
	els := parseSlide(t, b.Bytes())

	// 16:9, and no text under the projector minimum.
	var vw, vh float64
	if _, err := fmt.Sscanf(els[0].attr["viewBox"], "0 0 %g %g", &vw, &vh); err != nil || els[0].name != "svg" {
		t.Fatalf("root %s viewBox %q: %v", els[0].name, els[0].attr["viewBox"], err)
	}
	if math.Abs(vw/vh-16.0/9) > 0.01 {
		t.Errorf("viewBox %gx%g is not 16:9", vw, vh)
	}
	sizes := fontSizes(els)
	if len(sizes) < 5 {
		t.Fatalf("found only %d font sizes: %v", len(sizes), sizes)
	}
	for _, n := range sizes {
		if n < SlideMinFont {
			t.Errorf("a %dpx font: the minimum is %dpx", n, SlideMinFont)
		}
	}

	// The acknowledgement of "lost": b1's Acked event for offset 1, after the step where
	// the checker dates the lost write (the send of "lost").
	ack := -1
	for i, e := range r.Events {
		if a, ok := e.Data.(broker.Acked); ok && e.Node == "b1" && a.Offset == 1 {
			ack = i
			break
		}
	}
	if ack < 0 {
		t.Fatal("no ack of offset 1 by b1 in the trace")
	}
	ackStep := fmt.Sprint(r.Events[ack].Step)
	if begins := r.firstViolationStep(); fmt.Sprint(begins) == ackStep {
		t.Fatalf("the lost write begins at step %d, the step of its ack: the test shows nothing", begins)
	}

	var lanes, callouts, marks []string
	replicas := map[string]string{}
	rowsOf := map[string]bool{} // data-index of every row
	maxY := 0
	for _, e := range els {
		switch {
		case e.name == "text" && e.attr["class"] == "lane-name" && len(e.parents) == 1:
			lanes = append(lanes, e.text)
		case e.name == "text" && e.attr["class"] == "callout":
			callouts = append(callouts, e.text)
			if p := e.parents[len(e.parents)-2]; p["data-step"] != ackStep || p["data-index"] != fmt.Sprint(ack) {
				t.Errorf("the callout is on event %s at step %s, want the ack, event %d at step %s", p["data-index"], p["data-step"], ack, ackStep)
			}
		case e.name == "g" && e.attr["class"] == "violation":
			marks = append(marks, e.attr["data-step"])
		case e.name == "g" && e.attr["class"] == "replica":
			replicas[e.attr["data-broker"]] = "HW " + e.attr["data-hw"] + " LEO " + e.attr["data-leo"]
		case e.name == "g" && e.attr["class"] == "event":
			rowsOf[e.attr["data-index"]] = true
		}
		if y, err := strconv.Atoi(e.attr["y"]); err == nil && e.name == "text" {
			maxY = max(maxY, y)
		}
		if strings.Contains(e.text, "#1") || strings.Contains(e.text, "[#") {
			t.Errorf("a node named by id, not by name: %q", e.text)
		}
	}
	if got := strings.Join(lanes, " "); got != "env ctl b1 b2 b3 p1" {
		t.Errorf("lanes %q, want env ctl b1 b2 b3 p1", got)
	}
	if len(callouts) != 1 || callouts[0] != "◀ b1 acks offset 1 to p1 at HW 1" {
		t.Errorf("callouts %q", callouts)
	}
	if len(marks) != 1 || marks[0] != ackStep {
		t.Errorf("violation marks at steps %v, want one at the ack's step %s", marks, ackStep)
	}
	// Right after the ack, only b1 has "lost", above its HW; b2 and b3 were cut off.
	want := map[string]string{"b1": "HW 1 LEO 2", "b2": "HW 0 LEO 1", "b3": "HW 0 LEO 1"}
	if fmt.Sprint(replicas) != fmt.Sprint(want) {
		t.Errorf("replicas %v, want %v", replicas, want)
	}
	if maxY > SlideHeight {
		t.Errorf("text at y=%d, below the slide's %d", maxY, SlideHeight)
	}
	// A message whose receipt (here, its drop by the partition) is the next row shares its
	// send's row: b1's FetchResponse to b3, lost at once.
	merged := 0
	for i, e := range r.Events {
		if _, ok := e.Data.(sim.Dropped); ok && e.Node == "b3" && rowsOf[fmt.Sprint(i-1)] {
			if rowsOf[fmt.Sprint(i)] {
				t.Errorf("the drop (event %d) has a row of its own beside its send's", i)
			}
			merged++
		}
	}
	if merged == 0 {
		t.Errorf("no drop of a message to b3 on the slide")
	}
	for _, name := range []string{"steps 43..52 of 344", "t/0 after step " + ackStep, "lost-write"} {
		if !bytes.Contains(b.Bytes(), []byte(name)) {
			t.Errorf("no %q on the slide", name)
		}
	}
}

// A window asked for is drawn as a slide of those steps; without the key moment in it,
// there is no callout and no mark. A run whose checks find nothing is drawn around its
// first fault, called out without a violation's mark.
func TestSlideOfAWindowWithoutTheMoment(t *testing.T) {
	r := record(t, "acks1-leader-crash")
	var b bytes.Buffer
	if err := r.WriteSlide(&b, Options{Window: Window{1, 20}}); err != nil {
		t.Fatal(err)
	}
	for _, e := range parseSlide(t, b.Bytes()) {
		if c := e.attr["class"]; c == "callout" || c == "violation" || c == "replica" {
			t.Errorf("a %s outside the key moment's window", c)
		}
		if s, err := strconv.Atoi(e.attr["data-step"]); err == nil && s > 20 {
			t.Errorf("a row of step %d in steps 1..20", s)
		}
	}

	q := record(t, "rabbit-quorum-leader-crash")
	if q.Report != nil && len(q.Report.Violations) > 0 {
		t.Fatalf("rabbit-quorum-leader-crash has violations now: pick a valid run")
	}
	b.Reset()
	if err := q.WriteSlide(&b, Options{}); err != nil {
		t.Fatal(err)
	}
	var callouts []string
	for _, e := range parseSlide(t, b.Bytes()) {
		if e.attr["class"] == "callout" {
			callouts = append(callouts, e.text)
		}
		if e.attr["class"] == "violation" || e.attr["class"] == "violation-text" {
			t.Errorf("a violation's %s on a valid run's slide", e.attr["class"])
		}
	}
	crashed := ""
	for _, e := range q.Events {
		if _, ok := e.Data.(sim.NodeCrashed); ok {
			crashed = e.Node
			break
		}
	}
	if crashed == "" || len(callouts) != 1 || callouts[0] != "◀ "+crashed+" crash" {
		t.Errorf("callouts %q, want the first fault, %s's crash", callouts, crashed)
	}
}

// MQSIM_CHROMIUM=chromium go test ./export -run TestSlidePNG renders the slide in a
// headless Chromium and checks the picture: 1600x900, the callout's red box where the
// SVG puts it. MQSIM_SLIDE_PNG=FILE keeps the picture to look at.
func TestSlidePNG(t *testing.T) {
	browser := os.Getenv("MQSIM_CHROMIUM")
	if browser == "" {
		t.Skip("set MQSIM_CHROMIUM to a chromium binary to render the slide")
	}
	r := record(t, "acks1-leader-crash")
	dir := t.TempDir()
	svg := filepath.Join(dir, "slide.svg")
	var b bytes.Buffer
	if err := r.WriteSlide(&b, Options{Command: "mqsim export acks1-leader-crash --format svg"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(svg, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "slide.png")
	if keep := os.Getenv("MQSIM_SLIDE_PNG"); keep != "" {
		out = keep
	}
	cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		fmt.Sprintf("--window-size=%d,%d", SlideWidth, SlideHeight), "--screenshot="+out, "file://"+svg)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, msg)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds().Size(); got != (image.Point{SlideWidth, SlideHeight}) {
		t.Fatalf("picture %v, want %dx%d", got, SlideWidth, SlideHeight)
	}
	// The callout's box: its rect's centre is the red of a lost message.
	var box *slideEl
	for _, e := range parseSlide(t, b.Bytes()) {
		if e.name == "rect" && len(e.parents) > 0 && e.parents[len(e.parents)-1]["class"] == "callout-box" {
			box = e
		}
	}
	if box == nil {
		t.Fatal("no callout box")
	}
	x, _ := strconv.Atoi(box.attr["x"])
	y, _ := strconv.Atoi(box.attr["y"])
	red := 0
	for dx := 0; dx < 6; dx++ {
		cr, cg, cb, _ := img.At(x+4+dx, y+3).RGBA()
		if cr>>8 > 0xc0 && cg>>8 < 0x60 && cb>>8 < 0x60 {
			red++
		}
	}
	if red < 5 {
		t.Errorf("the callout box at %d,%d is not red in the picture", x, y)
	}
}

// Every catalogue scenario has a slide that fits: no row, text or panel line below the
// slide's height; a callout exactly when the run has a key moment (a violation dated in
// the trace, or else a fault), and a violation's mark only when a violation happens there.
func TestEveryCatalogScenarioHasASlide(t *testing.T) {
	for _, e := range scenarios.Catalog() {
		t.Run(e.Name, func(t *testing.T) {
			r := record(t, e.Name)
			var b bytes.Buffer
			if err := r.WriteSlide(&b, Options{}); err != nil {
				t.Fatal(err)
			}
			callouts, marks := 0, 0
			for _, el := range parseSlide(t, b.Bytes()) {
				for _, k := range []string{"y", "y2"} {
					if y, err := strconv.Atoi(el.attr[k]); err == nil && y > SlideHeight {
						t.Errorf("<%s %s=%d> below the slide", el.name, k, y)
					}
				}
				switch el.attr["class"] {
				case "callout":
					callouts++
				case "violation":
					marks++
				}
			}
			m, moment := r.KeyMoment()
			if (callouts == 1) != moment || callouts > 1 {
				t.Errorf("%d callouts, key moment %v", callouts, moment)
			}
			// The violation's mark only where a violation happens.
			if violated := r.firstViolationStep() > 0 && len(m.Violations) > 0; (marks == 1) != violated || marks > 1 {
				t.Errorf("%d violation marks, violations at the moment: %d", marks, len(m.Violations))
			}
		})
	}
}
