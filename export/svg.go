package export

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Geometry of the SVG diagram, in pixels.
const (
	svgRowH        = 16  // one event per row
	svgLaneW       = 64  // between two lanes
	svgGutterW     = 136 // step and time columns
	svgTop         = 100 // where the first row starts
	svgTextGap     = 18  // between the last lane and the event text
	svgTextMax     = 116 // characters of event text before it is clipped (the tooltip has it all)
	svgCharW       = 7   // width of a character of the 11px monospace font, rounded up
	svgHeaderEvery = 40  // rows between two repetitions of the lane names
)

// Colours.
const (
	colClient  = "#1f6fd1" // a message to or from a client
	colRepl    = "#2e8b57" // between brokers: replication
	colControl = "#8a4fbf" // to or from the controller
	colOther   = "#555555"
	colLost    = "#d62728"
	colEnv     = "#9a9a9a"
	colPending = "#aaaaaa"
)

// messageCategory names the colour class of a message between two nodes.
func (r *Run) messageCategory(from, to string) string {
	rf, rt := r.Roles[from], r.Roles[to]
	switch {
	case rf == RoleClient || rt == RoleClient:
		return "client"
	case rf == RoleController || rt == RoleController:
		return "control"
	case rf == RoleBroker && rt == RoleBroker:
		return "repl"
	case rf == RoleEnv || rt == RoleEnv:
		return "env"
	}
	return "other"
}

var categoryColour = map[string]string{
	"client": colClient, "control": colControl, "repl": colRepl, "env": colEnv, "other": colOther,
	"lost": colLost, "pending": colPending,
}

var classColour = map[eventClass]string{
	classModel: "#444444", classFault: "#d62728", classHeal: "#2e8b57", classBad: "#c2185b",
	classGood: "#2e7d32", classLeader: "#8a4fbf", classStorage: "#8d6e63",
}

// WriteSVG draws the window as a time-space diagram: one vertical lane per node, time
// going down one event per row (Maelstrom's and ShiViz's non-linear time), an arrow
// from each message's send to its receipt, faults on the lanes and as bands across the
// diagram, and each event in words in a column on the right (the full text and time
// in a tooltip).
func (r *Run) WriteSVG(w io.Writer, o Options) error {
	l, err := r.layout(o)
	if err != nil {
		return err
	}
	s := &svgWriter{l: l, yOf: map[int]int{}}
	s.place()
	s.draw()
	_, err = w.Write(s.b.Bytes())
	return err
}

type svgItem struct {
	ev     int
	header bool
}

type svgWriter struct {
	b       bytes.Buffer
	l       *layout
	items   []svgItem
	yOf     map[int]int // event index -> y of its row's centre
	bottomY int
	textX   int
	width   int
	height  int
}

func (s *svgWriter) place() {
	for k, i := range s.l.rows {
		if k > 0 && k%svgHeaderEvery == 0 {
			s.items = append(s.items, svgItem{header: true})
		}
		s.items = append(s.items, svgItem{ev: i})
	}
	for n, it := range s.items {
		if !it.header {
			s.yOf[it.ev] = svgTop + n*svgRowH + svgRowH/2
		}
	}
	s.bottomY = svgTop + len(s.items)*svgRowH
	s.textX = svgGutterW + len(s.l.lanes)*svgLaneW + svgTextGap
	s.width = s.textX + svgTextMax*svgCharW + 16
	s.height = s.bottomY + 28
}

func (s *svgWriter) laneX(n string) int {
	return svgGutterW + svgLaneW/2 + s.l.laneAt[n]*svgLaneW
}

func (s *svgWriter) printf(format string, args ...any) { fmt.Fprintf(&s.b, format, args...) }

// esc escapes text for XML content and attribute values.
func esc(t string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(t))
	return b.String()
}

func (s *svgWriter) draw() {
	l, r := s.l, s.l.r
	s.printf(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	s.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="11">`+"\n",
		s.width, s.height, s.width, s.height)
	s.printf("<style>\n" +
		"text{fill:#222}\n.hdr{font:bold 14px sans-serif}\n.sub{font:12px sans-serif;fill:#444}\n" +
		".lane-name{font:bold 12px sans-serif;text-anchor:middle}\n.lane-name.rep{font-weight:normal;fill:#999}\n" +
		".gut{fill:#777;text-anchor:end}\n.gut.same{fill:#ccc}\n.step{fill:#222;text-anchor:end}\n" +
		".recv{fill:#999}\n.fault{font-weight:bold}\n.leg{font:11px sans-serif;fill:#444}\n" +
		"</style>\n")
	s.defs()
	s.printf(`<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", s.width, s.height)
	s.header()
	s.bands()
	s.lanes()
	s.printf("<g class=\"messages\">\n")
	for _, m := range l.messages() {
		s.message(m)
	}
	s.printf("</g>\n<g class=\"events\">\n")
	prevTime, prevStep := "", int64(-1)
	for n, it := range s.items {
		if it.header {
			s.laneNames(svgTop+n*svgRowH+svgRowH/2+4, true)
			prevTime, prevStep = "", -1
			continue
		}
		e := r.Events[it.ev]
		t := e.Time.String()
		s.event(it.ev, t == prevTime, int64(e.Step) == prevStep)
		prevTime, prevStep = t, int64(e.Step)
	}
	s.printf("</g>\n")
	s.violations()
	if len(l.rows) == 0 {
		s.printf(`<text class="sub" x="%d" y="%d">no event in this window</text>`+"\n", svgGutterW, svgTop+12)
	}
	s.printf("</svg>\n")
}

func (s *svgWriter) defs() {
	s.printf("<defs>\n")
	cats := []string{"client", "control", "repl", "env", "other", "pending"}
	for _, c := range cats {
		s.printf(`<marker id="ah-%s" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="%s"/></marker>`+"\n",
			c, categoryColour[c])
	}
	s.printf("</defs>\n")
}

func (s *svgWriter) header() {
	l, r := s.l, s.l.r
	title := fmt.Sprintf("mqsim · %s · seed %d · trace-hash %s", r.Name, r.Seed, r.Hash)
	s.printf(`<text class="hdr" x="8" y="20">%s</text>`+"\n", esc(title))
	lo, hi := l.lo, l.hi
	sub := fmt.Sprintf("%s of %d (events %d..%d of %d with messages) · %s", l.o.Window, r.Steps, lo, max(lo, hi-1), len(r.Events), r.summary())
	if r.Steps == 0 {
		sub = fmt.Sprintf("%d events · %s", len(r.Events), r.summary())
	}
	s.printf(`<text class="sub" x="8" y="38">%s</text>`+"\n", esc(sub))
	line := l.o.Command
	if line == "" && len(l.o.Hide) > 0 {
		line = "hidden messages: " + strings.Join(l.o.Hide, ", ")
	}
	if line != "" {
		s.printf(`<text class="sub" x="8" y="54">%s</text>`+"\n", esc(line))
	}
	// Legend.
	x, y := 8, 72
	sample := func(cat, label string, dashed bool) {
		dash := ""
		if dashed {
			dash = ` stroke-dasharray="4,3"`
		}
		s.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="1.5"%s/>`, x, y-4, x+22, y-4, categoryColour[cat], dash)
		s.printf(`<text class="leg" x="%d" y="%d">%s</text>`+"\n", x+26, y, esc(label))
		x += 26 + len(label)*6 + 14
	}
	sample("client", "client message", false)
	sample("repl", "replication", false)
	sample("control", "controller", false)
	sample("lost", "lost ✕", true)
	sample("pending", "never delivered", true)
	s.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#e3a0a0" stroke-width="1.5" stroke-dasharray="2,4"/><text class="leg" x="%d" y="%d">node down</text>`+"\n", x, y-4, x+22, y-4, x+26, y)
	x += 26 + 9*6 + 14
	s.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#f0a030" stroke-width="2" stroke-dasharray="6,3"/><text class="leg" x="%d" y="%d">paused</text>`+"\n", x, y-4, x+22, y-4, x+26, y)
	x += 26 + 6*6 + 14
	s.printf(`<polygon points="%d,%d %d,%d %d,%d" fill="%s"/><text class="leg" x="%d" y="%d">a check's violation begins</text>`+"\n",
		x, y-9, x+8, y-4, x, y+1, colLost, x+14, y)
	s.laneNames(svgTop-8, false)
}

func (s *svgWriter) laneNames(y int, repeat bool) {
	cls := "lane-name"
	if repeat {
		cls += " rep"
	}
	s.printf(`<text class="gut" x="34" y="%d">step</text><text class="gut" x="%d" y="%d">time</text>`, y, svgGutterW-8, y)
	for _, n := range s.l.lanes {
		s.printf(`<text class="%s" x="%d" y="%d">%s</text>`, cls, s.laneX(n), y, esc(n))
	}
	s.printf(`<text class="gut" x="%d" y="%d" style="text-anchor:start">event</text>`+"\n", s.textX, y)
}

// bands shades the rows of faults across the whole diagram.
func (s *svgWriter) bands() {
	r := s.l.r
	s.printf("<g class=\"bands\">\n")
	for _, i := range s.l.rows {
		if r.isMessageEvent(i) {
			continue
		}
		fill := ""
		switch classify(r.Events[i]) {
		case classFault:
			fill = "#fdecea"
		case classHeal:
			fill = "#eaf6ea"
		default:
			if r.Events[i].Kind == "invariant" {
				fill = "#f7e1f3"
			}
		}
		if fill != "" {
			s.printf(`<rect x="0" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", s.yOf[i]-svgRowH/2, s.width, svgRowH, fill)
		}
	}
	s.printf("</g>\n")
}

// lanes draws each node's vertical line, styled by its status (up, down, paused), from
// the first event it takes part in.
func (s *svgWriter) lanes() {
	l, r := s.l, s.l.r
	before := r.statusBefore(l.lo)
	first := r.firstEvent()
	s.printf("<g class=\"lanes\">\n")
	for _, n := range l.lanes {
		x := s.laneX(n)
		s.printf(`<g class="lane" data-node="%s">`, esc(n))
		if n == EnvNode {
			s.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#dddddd" stroke-width="1" stroke-dasharray="1,3"/>`, x, svgTop, x, s.bottomY)
			s.printf("</g>\n")
			continue
		}
		f, ok := first[n]
		if !ok || f >= l.hi {
			s.printf("</g>\n")
			continue
		}
		y := svgTop
		if f >= l.lo {
			y = s.bottomY
			for _, i := range l.rows {
				if i >= f {
					y = s.yOf[i] - svgRowH/2
					break
				}
			}
		}
		st := before[n]
		for _, i := range l.rows {
			e := r.Events[i]
			if e.Node != n || r.isMessageEvent(i) || s.yOf[i] < y {
				continue
			}
			next, ok := statusChange(e)
			if !ok {
				continue
			}
			s.laneSegment(x, y, s.yOf[i], st, &diagramLanes)
			y, st = s.yOf[i], next
		}
		s.laneSegment(x, y, s.bottomY, st, &diagramLanes)
		s.printf("</g>\n")
	}
	s.printf("</g>\n")
}

// laneStyles are a lane's stroke by status (up, down, paused), for one size of drawing.
type laneStyles [3]string

var (
	diagramLanes = laneStyles{
		statusUp:     `stroke="#b5b5b5" stroke-width="1.2"`,
		statusDown:   `stroke="#e3a0a0" stroke-width="1.5" stroke-dasharray="2,4"`,
		statusPaused: `stroke="#f0a030" stroke-width="2" stroke-dasharray="6,3"`,
	}
	slideLanes = laneStyles{
		statusUp:     `stroke="#b5b5b5" stroke-width="2"`,
		statusDown:   `stroke="#e3a0a0" stroke-width="3" stroke-dasharray="4,6"`,
		statusPaused: `stroke="#f0a030" stroke-width="3" stroke-dasharray="10,5"`,
	}
)

// laneSegment draws a lane from y1 to y2 in the stroke of its status.
func (s *svgWriter) laneSegment(x, y1, y2 int, st status, styles *laneStyles) {
	if y2 <= y1 {
		return
	}
	s.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" %s/>`, x, y1, x, y2, styles[st])
}

// message draws one message: an arrow from its send to each receipt, or to the ✕ where
// it was lost. Ends outside the window are drawn at its top or bottom edge.
func (s *svgWriter) message(m *message) {
	l, r := s.l, s.l.r
	inWindow := func(i int) bool { return i >= l.lo && i < l.hi }
	x1, x2 := s.laneX(m.from), s.laneX(m.to)
	var y1 int
	switch {
	case m.send >= 0 && inWindow(m.send):
		y1 = s.yOf[m.send]
	case m.send >= 0 && m.send < l.lo:
		y1 = svgTop
	default:
		return
	}
	cat := r.messageCategory(m.from, m.to)
	title := fmt.Sprintf("#%d %s → %s: %s", m.id, m.from, m.to, m.desc)
	type end struct {
		i    int
		lost bool
	}
	var ends []end
	for _, i := range m.recvs {
		ends = append(ends, end{i, false})
	}
	if m.drop >= 0 {
		ends = append(ends, end{m.drop, true})
		title += " (lost: " + m.dropWhy + ")"
	}
	s.printf(`<g class="msg" data-msg="%d" data-type="%s"><title>%s</title>`, m.id, esc(m.Type()), esc(title))
	if len(ends) == 0 {
		// Never delivered: in flight when the run ended.
		s.arrow(x1, y1, x2, s.bottomY, "pending", true, &diagramArrows)
	}
	for _, e := range ends {
		if e.i < l.lo {
			continue
		}
		y2 := s.bottomY
		if inWindow(e.i) {
			y2 = s.yOf[e.i]
		}
		if e.lost {
			s.arrow(x1, y1, x2, y2, "lost", true, &diagramArrows)
			if inWindow(e.i) {
				s.printf(`<path d="M%d,%d l8,8 m0,-8 l-8,8" stroke="%s" stroke-width="2"/>`, x2-4, y2-4, colLost)
			}
			continue
		}
		s.arrow(x1, y1, x2, y2, cat, y1 == svgTop || y2 == s.bottomY, &diagramArrows)
	}
	s.printf("</g>\n")
}

// arrowSize is how a drawing of one size strokes its message arrows.
type arrowSize struct {
	width, dash string // stroke-width, and the dash of an arrow cut at the window's edge
	loop        int    // how far a message to itself bows out
}

var (
	diagramArrows = arrowSize{width: "1.3", dash: "4,3", loop: 24}
	slideArrows   = arrowSize{width: "2.5", dash: "8,5", loop: 36}
)

// arrow draws a line (a loop for a message to itself) with an arrowhead, except for a
// lost message, whose end gets a cross instead.
func (s *svgWriter) arrow(x1, y1, x2, y2 int, cat string, dashed bool, size *arrowSize) {
	attrs := fmt.Sprintf(`stroke="%s" stroke-width="%s" fill="none"`, categoryColour[cat], size.width)
	if dashed {
		attrs += fmt.Sprintf(` stroke-dasharray="%s"`, size.dash)
	}
	if cat != "lost" {
		attrs += fmt.Sprintf(` marker-end="url(#ah-%s)"`, cat)
	}
	if x1 == x2 {
		s.printf(`<path d="M%d,%d C%d,%d %d,%d %d,%d" %s/>`, x1, y1, x1+size.loop, y1, x2+size.loop, y2, x2, y2, attrs)
		return
	}
	s.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" %s/>`, x1, y1, x2, y2, attrs)
}

// event draws one row: the symbol on its lane (or the short arrow of a message to or
// from the environment), its kernel step (on the first row of the step), its time, and
// its text.
func (s *svgWriter) event(i int, sameTime, sameStep bool) {
	l, r := s.l, s.l.r
	e := r.Events[i]
	y := s.yOf[i]
	s.printf(`<g class="event" data-index="%d" data-step="%d"><title>%s</title>`, i, e.Step, esc(e.String()))
	var textCls, colour string
	switch {
	case r.isMessageEvent(i) && e.Msg == 0:
		env, node := s.laneX(EnvNode), s.laneX(e.Node)
		if e.Kind == "send" {
			s.arrow(node, y, env, y, "env", false, &diagramArrows)
		} else {
			s.arrow(env, y, node, y, "env", false, &diagramArrows)
		}
		colour = colEnv
	case r.isMessageEvent(i):
		m := r.msgs[e.Msg]
		colour = categoryColour[r.messageCategory(m.from, m.to)]
		switch e.Kind {
		case "recv":
			textCls = "recv"
		case "drop":
			colour = colLost
		}
		if e.Kind == "send" {
			s.printf(`<circle cx="%d" cy="%d" r="2" fill="%s"/>`, s.laneX(e.Node), y, colour)
		}
	default:
		c := classify(e)
		colour = classColour[c]
		if c == classFault || c == classHeal {
			textCls = "fault"
		}
		s.symbol(s.laneX(e.Node), y, e.Kind, c)
	}
	if !sameStep {
		s.printf(`<text class="step" x="34" y="%d">%d</text>`, y+4, e.Step)
	}
	gut := "gut"
	if sameTime {
		gut += " same"
	}
	s.printf(`<text class="%s" x="%d" y="%d">%s</text>`, gut, svgGutterW-8, y+4, esc(e.Time.String()))
	cls := ""
	if textCls != "" {
		cls = fmt.Sprintf(` class="%s"`, textCls)
	}
	fill := ""
	if textCls != "recv" {
		fill = fmt.Sprintf(` style="fill:%s"`, colour)
	}
	s.printf(`<text%s%s x="%d" y="%d">%s</text>`, cls, fill, s.textX, y+4, esc(clip(l.eventText(i), svgTextMax)))
	s.printf("</g>\n")
}

// symbol marks a model event or a fault on its lane.
func (s *svgWriter) symbol(x, y int, kind string, c eventClass) {
	col := classColour[c]
	switch {
	case kind == "crash":
		s.printf(`<path d="M%d,%d l10,10 m0,-10 l-10,10" stroke="%s" stroke-width="2.5"/>`, x-5, y-5, col)
	case kind == "restart":
		s.printf(`<circle cx="%d" cy="%d" r="5" fill="#ffffff" stroke="%s" stroke-width="2"/>`, x, y, col)
	case kind == "pause":
		s.printf(`<rect x="%d" y="%d" width="3" height="10" fill="#f0a030"/><rect x="%d" y="%d" width="3" height="10" fill="#f0a030"/>`, x-4, y-5, x+1, y-5)
	case kind == "resume":
		s.printf(`<polygon points="%d,%d %d,%d %d,%d" fill="%s"/>`, x-4, y-5, x+5, y, x-4, y+5, col)
	case c == classFault || c == classHeal:
		s.printf(`<polygon points="%d,%d %d,%d %d,%d %d,%d" fill="%s"/>`, x, y-6, x+6, y, x, y+6, x-6, y, col)
	case kind == "invariant":
		s.printf(`<rect x="%d" y="%d" width="9" height="9" fill="%s"/>`, x-4, y-4, col)
	default:
		s.printf(`<circle cx="%d" cy="%d" r="3.5" fill="%s"/>`, x, y, col)
	}
}

// violations flags, in the gutter, the first row of the kernel step where each of the
// verdict's violations began, or after it.
func (s *svgWriter) violations() {
	r := s.l.r
	byRow := map[int][]string{}
	var rows []int
	for _, mk := range r.Marks() {
		if mk.Event < s.l.lo || mk.Event >= s.l.hi {
			continue // the violation began outside the window
		}
		// The mark goes on the first drawn row at or after the violation's event.
		for _, i := range s.l.rows {
			if i >= mk.Event {
				if _, ok := byRow[i]; !ok {
					rows = append(rows, i)
				}
				byRow[i] = append(byRow[i], string(mk.V.Anomaly)+": "+mk.V.Text)
				break
			}
		}
	}
	slices.Sort(rows)
	for _, i := range rows {
		y := s.yOf[i]
		s.printf(`<g class="violation"><title>%s</title><polygon points="4,%d 12,%d 4,%d" fill="%s"/></g>`+"\n",
			esc("begins here: "+strings.Join(byRow[i], "\n")), y-5, y, y+5, colLost)
	}
}
