package export

import (
	"fmt"
	"io"
	"strings"

	"mqsim/sim"
)

// A slide is the SVG diagram made to be projected: a 16:9 picture of the few kernel steps
// around the run's key moment (KeyMoment), at font sizes a room can read, with each
// replica's log beside the lanes. Its geometry is fixed, in the viewBox's units; a
// projector scales the whole picture, so what matters is the ratio of a font to the
// height: SlideMinFont/SlideHeight is 1/45, 24 pixels on a 1080-line projector.
const (
	SlideWidth   = 1600
	SlideHeight  = 900
	SlideMinFont = 20 // no text on a slide is smaller

	slideRowH    = 34
	slideTop     = 150 // where the first row starts
	slideMaxRows = (SlideHeight - slideTop - 60) / slideRowH
	slideGutterW = 76   // the step column
	slideLaneW   = 96   // between two lanes
	slidePanelX  = 1236 // the replica logs and the violation
	slideCharW   = 12   // width of a character of the 20px monospace font, rounded up
	slideFont    = `font-family="DejaVu Sans Mono, Menlo, Consolas, monospace"`
)

// slideRow is one row of a slide: an event, or a message's send with its receipt (or
// drop) when the two would be adjacent rows.
type slideRow struct {
	ev   int // the event (the send of a merged pair)
	pair int // the receipt or drop drawn on the same row, or -1
}

// slideRows pairs each message send with its receipt or drop when that is the next row.
func slideRows(l *layout) []slideRow {
	var out []slideRow
	for k := 0; k < len(l.rows); k++ {
		i := l.rows[k]
		row := slideRow{ev: i, pair: -1}
		if k+1 < len(l.rows) && l.r.isMessageEvent(i) {
			j := l.rows[k+1]
			e, f := l.r.Events[i], l.r.Events[j]
			if e.Msg != 0 && f.Msg == e.Msg && e.Kind == "send" && l.r.isMessageEvent(j) {
				if _, sent := f.Data.(sim.Sent); !sent {
					row.pair = j
					k++
				}
			}
		}
		out = append(out, row)
	}
	return out
}

// slideLayout chooses what a slide draws: the given window, or, without one, the widest
// run of kernel steps around the focus whose rows fit the slide (twice as many steps
// grown before the focus as after it, for what led to it). A window with more rows than
// fit keeps those around the focus.
func (r *Run) slideLayout(o Options, focus int) (*layout, []slideRow, error) {
	fits := func(w Window) (*layout, []slideRow, bool, error) {
		o.Window = w
		l, err := r.layout(o)
		if err != nil {
			return nil, nil, false, err
		}
		rows := slideRows(l)
		return l, rows, len(rows) <= slideMaxRows, nil
	}
	w := o.Window
	if w == (Window{}) && r.Steps > 0 {
		k := 1
		if focus >= 0 {
			k = max(int(r.Events[focus].Step), 1)
		}
		w = Window{k, k}
		// Grow a step before, another before, one after, and again, while the rows fit.
		for grown := true; grown; {
			grown = false
			for _, before := range []bool{true, true, false} {
				next := Window{w.From, w.To + 1}
				if before {
					next = Window{w.From - 1, w.To}
				}
				if next.From < 1 || next.To > r.Steps {
					continue
				}
				_, _, ok, err := fits(next)
				if err != nil {
					return nil, nil, err
				}
				if ok {
					w, grown = next, true
				}
			}
		}
	}
	l, rows, _, err := fits(w)
	if err != nil {
		return nil, nil, err
	}
	if len(rows) > slideMaxRows {
		at := 0
		for k, row := range rows {
			if row.ev <= focus {
				at = k
			}
		}
		start := min(max(at-2*slideMaxRows/3, 0), len(rows)-slideMaxRows)
		rows = rows[start : start+slideMaxRows]
	}
	return l, rows, nil
}

// WriteSlide draws a slide (see SlideWidth): the window o.Window, or, when it is zero, the
// steps around the run's key moment; the key moment's row carries its callout and the
// mark of the violations that happen there, and the panel on the right shows every
// replica of its partition as it is right after that step. A run without a violation is
// drawn around its first fault, called out without a mark; a run without either from its
// start (or o.Window's), with no callout.
func (r *Run) WriteSlide(w io.Writer, o Options) error {
	s, err := r.planSlide(o)
	if err != nil {
		return err
	}
	if s.moment != nil && s.moment.HasTP {
		if s.logs, err = r.ReplicaLogsAt(s.moment.TP, s.moment.Step); err != nil {
			return fmt.Errorf("reading the replicas at step %d: %w", s.moment.Step, err)
		}
	}
	s.place()
	s.draw()
	_, err = w.Write(s.b.Bytes())
	return err
}

// SlideWindow is the kernel steps WriteSlide draws with these options.
func (r *Run) SlideWindow(o Options) (Window, error) {
	s, err := r.planSlide(o)
	if err != nil || len(s.rows) == 0 {
		return o.Window, err
	}
	s.place()
	return Window{max(int(r.Events[s.first].Step), 1), int(r.Events[s.last].Step)}, nil
}

// planSlide chooses the slide's key moment and rows.
func (r *Run) planSlide(o Options) (*slideWriter, error) {
	m, ok := r.KeyMoment()
	focus := -1
	if ok {
		focus = m.Event
	}
	if o.Window != (Window{}) && ok {
		if lo, hi := r.span(o.Window); focus < lo || focus >= hi {
			ok, focus = false, -1 // the key moment is outside the window asked for
		}
	}
	l, rows, err := r.slideLayout(o, focus)
	if err != nil {
		return nil, err
	}
	s := &slideWriter{svgWriter: svgWriter{l: l, yOf: map[int]int{}}, rows: rows}
	if ok {
		s.moment = &m
	}
	return s, nil
}

type slideWriter struct {
	svgWriter
	rows   []slideRow
	moment *Moment
	logs   []ReplicaLog
	first  int // the first and last event drawn
	last   int
}

func (s *slideWriter) place() {
	s.first, s.last = len(s.l.r.Events), -1
	for k, row := range s.rows {
		y := slideTop + k*slideRowH + slideRowH/2
		s.yOf[row.ev] = y
		s.first, s.last = min(s.first, row.ev), max(s.last, row.ev)
		if row.pair >= 0 {
			s.yOf[row.pair] = y
			s.last = max(s.last, row.pair)
		}
	}
	s.bottomY = slideTop + len(s.rows)*slideRowH
	s.textX = slideGutterW + len(s.l.lanes)*slideLaneW + 16
	s.width, s.height = SlideWidth, SlideHeight
}

func (s *slideWriter) laneX(n string) int {
	return slideGutterW + slideLaneW/2 + s.l.laneAt[n]*slideLaneW
}

// hasPanel says the slide draws the panel on the right (replica logs, violations).
func (s *slideWriter) hasPanel() bool {
	return s.moment != nil && (len(s.logs) > 0 || len(s.moment.Violations) > 0)
}

// rightX is where the rows end: at the panel, or at the slide's edge without one.
func (s *slideWriter) rightX() int {
	if s.hasPanel() {
		return slidePanelX - 8
	}
	return SlideWidth
}

// textChars is how many characters of event text fit between the lanes and the panel.
func (s *slideWriter) textChars() int { return (s.rightX() - 8 - s.textX) / slideCharW }

func (s *slideWriter) draw() {
	s.printf(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	s.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" %s font-size="%d">`+"\n",
		SlideWidth, SlideHeight, SlideWidth, SlideHeight, slideFont, SlideMinFont)
	if s.l.o.Command != "" {
		s.printf("<desc>%s</desc>\n", esc(s.l.o.Command)) // how to make it again
	}
	s.printf("<style>\n" +
		"text{fill:#222}\n.title{font:bold 30px sans-serif}\n.sub{font:20px sans-serif;fill:#444}\n" +
		".lane-name{font:bold 24px sans-serif;text-anchor:middle}\n.step{fill:#666;text-anchor:end}\n" +
		".recv{fill:#888}\n.callout{font-weight:bold;fill:#ffffff}\n.panel{font-size:20px}\n" +
		".violation-text{fill:#b71c1c;font-weight:bold}\n.key{fill:#b71c1c;font-weight:bold}\n" +
		"</style>\n")
	s.defs()
	s.printf(`<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", SlideWidth, SlideHeight)
	s.heading()
	s.highlight()
	s.slideLanes()
	s.printf("<g class=\"messages\">\n")
	for _, m := range s.l.messages() {
		s.slideMessage(m)
	}
	s.printf("</g>\n<g class=\"events\">\n")
	prevStep := uint64(1 << 63)
	for _, row := range s.rows {
		s.slideEvent(row, s.l.r.Events[row.ev].Step != prevStep)
		prevStep = s.l.r.Events[row.ev].Step
	}
	s.printf("</g>\n")
	s.panel()
	if len(s.rows) == 0 {
		s.printf(`<text class="sub" x="%d" y="%d">no event in this window</text>`+"\n", slideGutterW, slideTop+24)
	}
	s.printf("</svg>\n")
}

// heading is the title, what the slide shows, the lane names and, at the foot, how to get
// the whole run.
func (s *slideWriter) heading() {
	r := s.l.r
	title := r.Name
	if s.moment != nil {
		title += " · " + s.moment.Callout
	}
	s.printf(`<text class="title" x="16" y="44">%s</text>`+"\n", esc(title))
	steps := "no steps"
	if len(s.rows) > 0 {
		steps = fmt.Sprintf("steps %d..%d of %d", r.Events[s.first].Step, r.Events[s.last].Step, r.Steps)
	}
	s.printf(`<text class="sub" x="16" y="80">%s</text>`+"\n", esc(fmt.Sprintf("%s · seed %d · %s", steps, r.Seed, r.summary())))
	s.printf(`<text class="step" x="%d" y="%d">step</text>`, slideGutterW-10, slideTop-14)
	for _, n := range s.l.lanes {
		s.printf(`<text class="lane-name" x="%d" y="%d">%s</text>`, s.laneX(n), slideTop-14, esc(n))
	}
	s.printf("\n")
	foot := "the whole run: add --full"
	if s.l.o.Command != "" {
		foot = s.l.o.Command + " · the whole run: add --full"
	}
	s.printf(`<text class="sub" x="16" y="%d" style="fill:#888">%s</text>`+"\n", SlideHeight-18, esc(clip(foot, (SlideWidth-32)/11)))
}

// highlight shades fault rows and the key moment's row across the lanes and the text.
func (s *slideWriter) highlight() {
	r := s.l.r
	s.printf("<g class=\"bands\">\n")
	for _, row := range s.rows {
		fill := ""
		switch {
		case s.moment != nil && (row.ev == s.moment.Event || row.pair == s.moment.Event):
			fill = "#fff1c2"
		case r.isMessageEvent(row.ev):
		case classify(r.Events[row.ev]) == classFault:
			fill = "#fdecea"
		case classify(r.Events[row.ev]) == classHeal:
			fill = "#eaf6ea"
		}
		if fill != "" {
			s.printf(`<rect x="0" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", s.yOf[row.ev]-slideRowH/2, s.rightX(), slideRowH, fill)
		}
	}
	s.printf("</g>\n")
}

// slideLanes draws each node's vertical line, dashed while it is down.
func (s *slideWriter) slideLanes() {
	r := s.l.r
	before := r.statusBefore(max(s.first, 0))
	s.printf("<g class=\"lanes\">\n")
	for _, n := range s.l.lanes {
		x := s.laneX(n)
		s.printf(`<g class="lane" data-node="%s">`, esc(n))
		y, st := slideTop, before[n]
		for _, row := range s.rows {
			if e := r.Events[row.ev]; e.Node == n && !r.isMessageEvent(row.ev) {
				if next, ok := statusChange(e); ok {
					s.laneSegment(x, y, s.yOf[row.ev], st, &slideLanes)
					y, st = s.yOf[row.ev], next
				}
			}
		}
		s.laneSegment(x, y, s.bottomY, st, &slideLanes)
		s.printf("</g>\n")
	}
	s.printf("</g>\n")
}

// slideMessage draws a message's arrow from its send to its receipt (or to the ✕ where it
// was lost); an end outside the slide's rows is drawn at its top or bottom edge.
func (s *slideWriter) slideMessage(m *message) {
	r := s.l.r
	if m.from == "" || m.to == "" {
		return
	}
	yAt := func(i int) (int, bool) {
		if y, ok := s.yOf[i]; ok {
			return y, true
		}
		if i < s.first {
			return slideTop, false
		}
		return s.bottomY, false
	}
	if m.send < 0 {
		return
	}
	y1, in1 := yAt(m.send)
	if !in1 && m.send > s.last {
		return
	}
	x1, x2 := s.laneX(m.from), s.laneX(m.to)
	cat := r.messageCategory(m.from, m.to)
	s.printf(`<g class="msg" data-msg="%d" data-type="%s"><title>%s</title>`, m.id, esc(m.Type()), esc(m.from+" → "+m.to+": "+s.label(m)))
	for _, i := range m.recvs {
		if y2, in2 := yAt(i); in1 || in2 {
			s.arrow(x1, y1, x2, y2, cat, !in1 || !in2, &slideArrows)
		}
	}
	if m.drop >= 0 {
		y2, in2 := yAt(m.drop)
		if in1 || in2 {
			s.arrow(x1, y1, x2, y2, "lost", true, &slideArrows)
		}
		if in2 {
			s.printf(`<path d="M%d,%d l12,12 m0,-12 l-12,12" stroke="%s" stroke-width="3"/>`, x2-6, y2-6, colLost)
		}
	}
	if len(m.recvs) == 0 && m.drop < 0 && in1 {
		s.arrow(x1, y1, x2, s.bottomY, "pending", true, &slideArrows)
	}
	s.printf("</g>\n")
}

// label is a message in words for a slide, nodes named as the run names them.
func (s *slideWriter) label(m *message) string {
	return describeNamed(m.msg, s.l.r.Nodes)
}

// slideEvent draws one row: its symbol, its step (on a step's first row) and its text; the
// key moment's row gets the callout and the violation's mark.
func (s *slideWriter) slideEvent(row slideRow, newStep bool) {
	r := s.l.r
	e := r.Events[row.ev]
	y := s.yOf[row.ev]
	key := s.moment != nil && (row.ev == s.moment.Event || row.pair == s.moment.Event)
	text, colour, cls := s.rowText(row)
	s.printf(`<g class="event" data-index="%d" data-step="%d"><title>%s</title>`, row.ev, e.Step, esc(e.Time.String()+" "+text))
	if !r.isMessageEvent(row.ev) {
		c := classify(e)
		s.printf(`<g transform="translate(%d,%d) scale(1.7)">`, s.laneX(e.Node), y)
		s.symbol(0, 0, e.Kind, c)
		s.printf(`</g>`)
	} else if e.Kind == "send" && e.Msg != 0 {
		s.printf(`<circle cx="%d" cy="%d" r="4" fill="%s"/>`, s.laneX(e.Node), y, colour)
	}
	if newStep || key {
		stepCls := "step"
		if key {
			stepCls = "step key"
		}
		s.printf(`<text class="%s" x="%d" y="%d">%d</text>`, stepCls, slideGutterW-10, y+7, e.Step)
	}
	if key {
		s.callout(row, y)
	} else {
		if cls != "" {
			cls = fmt.Sprintf(` class="%s"`, cls)
		}
		s.printf(`<text%s style="fill:%s" x="%d" y="%d">%s</text>`, cls, colour, s.textX, y+7, esc(clip(text, s.textChars())))
	}
	s.printf("</g>\n")
}

// rowText is a row's text, its colour and its class.
func (s *slideWriter) rowText(row slideRow) (string, string, string) {
	r := s.l.r
	e := r.Events[row.ev]
	if !r.isMessageEvent(row.ev) {
		t := e.Node + " " + e.Kind
		if e.Detail != "" {
			t += ": " + e.Detail
		}
		return t, classColour[classify(e)], ""
	}
	if e.Msg == 0 {
		return s.l.eventText(row.ev), colEnv, ""
	}
	m := r.msgs[e.Msg]
	colour := categoryColour[r.messageCategory(m.from, m.to)]
	label := s.label(m)
	switch {
	case row.pair >= 0 && r.Events[row.pair].Kind == "drop":
		return fmt.Sprintf("%s ✕ %s %s (lost)", m.from, m.to, label), colLost, ""
	case e.Kind == "send":
		return fmt.Sprintf("%s → %s %s", m.from, m.to, label), colour, ""
	case e.Kind == "drop":
		return fmt.Sprintf("%s ✕ %s %s (lost)", m.from, m.to, label), colLost, ""
	}
	return fmt.Sprintf("%s ← %s %s", m.to, m.from, label), colour, "recv"
}

// callout draws the key moment's row: a ring on its lane, a flag in the step column, and
// the callout in a box where the event's text would be.
func (s *slideWriter) callout(row slideRow, y int) {
	e := s.l.r.Events[s.moment.Event]
	x := s.laneX(e.Node)
	colour := colLost
	if len(s.moment.Violations) > 0 {
		s.printf(`<g class="violation" data-step="%d"><circle cx="%d" cy="%d" r="13" fill="none" stroke="%s" stroke-width="3"/>`, e.Step, x, y, colLost)
		s.printf(`<polygon points="4,%d 18,%d 4,%d" fill="%s"/></g>`, y-9, y, y+9, colLost)
	} else {
		colour = colOther // a fault, the moment of a run the checks find nothing wrong with
	}
	text := "◀ " + s.moment.Callout
	w := len([]rune(text))*slideCharW + 20
	s.printf(`<g class="callout-box"><rect x="%d" y="%d" width="%d" height="%d" rx="6" fill="%s"/>`, s.textX-6, y-slideRowH/2+2, w, slideRowH-4, colour)
	s.printf(`<text class="callout" x="%d" y="%d">%s</text></g>`, s.textX+4, y+7, esc(text))
}

// panel draws, on the right, every replica of the key moment's partition right after its
// step (leader, epoch, HW, LEO, the records with the HW line among them), then the
// violations that happen at the key moment.
func (s *slideWriter) panel() {
	if !s.hasPanel() {
		return
	}
	x, y := slidePanelX, slideTop-14
	s.printf("<g class=\"panel\">\n")
	if len(s.logs) > 0 {
		s.printf(`<text class="lane-name" style="text-anchor:start" x="%d" y="%d">%s after step %d</text>`+"\n", x, y, esc(s.moment.TP.String()), s.moment.Step)
		y += 20
		for _, rl := range s.logs {
			y = s.replicaLog(x, y, rl)
		}
		y += 30
		s.hwLine(x+4, y-22, 26)
		s.printf(`<text x="%d" y="%d">HW · <tspan style="fill:#e65100">orange: above HW</tspan></text>`+"\n", x+16, y)
	}
	if len(s.moment.Violations) == 0 {
		s.printf("</g>\n")
		return
	}
	y += 40
	s.printf(`<text class="violation-text" x="%d" y="%d">✕ here, step %d:</text>`+"\n", x, y, s.moment.Step)
	for _, v := range s.moment.Violations {
		y += 28
		s.printf(`<text class="violation-text" x="%d" y="%d"><title>%s</title>%s</text>`+"\n", x, y, esc(v.Text), esc(string(v.Anomaly)))
	}
	s.printf("</g>\n")
}

// slideBoxes is how many records a replica's strip shows (the last ones).
const slideBoxes = 3

// replicaLog draws one replica and returns the y below it.
func (s *slideWriter) replicaLog(x, y int, rl ReplicaLog) int {
	y += 30
	s.printf(`<g class="replica" data-broker="%s" data-hw="%d" data-leo="%d">`, esc(rl.Broker), rl.HW, rl.LEO)
	if rl.Down {
		s.printf(`<text x="%d" y="%d" style="fill:#d62728">%s down</text></g>`+"\n", x, y, esc(rl.Broker))
		return y + 12
	}
	role := "follower"
	if rl.Leader {
		role = "leader"
	}
	s.printf(`<text x="%d" y="%d"><tspan font-weight="bold">%s</tspan> %s e%d HW %d LEO %d</text>`, x, y, esc(rl.Broker), role, rl.Epoch, rl.HW, rl.LEO)
	y += 10
	first := max(rl.Start, rl.LEO-slideBoxes)
	const boxW, boxH = 108, 30
	bx := x
	if first > rl.Start {
		s.printf(`<text x="%d" y="%d" style="fill:#888">…</text>`, bx, y+22)
		bx += 16
	}
	for off := first; off < rl.LEO; off++ {
		v := rl.Values[off-rl.Start]
		fill := "#e8f0fe"
		if off >= rl.HW {
			fill = "#fff3e0" // above the HW: not yet committed
		}
		s.printf(`<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#888"/>`, bx, y, boxW, boxH, fill)
		s.printf(`<text x="%d" y="%d"><title>offset %d epoch %d: %s</title>%s</text>`, bx+4, y+22, off, rl.Epochs[off-rl.Start], esc(v), esc(clip(fmt.Sprintf("%d:%s", off, v), 8)))
		if off == rl.HW {
			s.hwLine(bx, y, boxH)
		}
		bx += boxW
	}
	if rl.HW >= rl.LEO {
		s.hwLine(bx, y, boxH)
	}
	s.printf("</g>\n")
	return y + boxH + 6
}

// hwLine marks the high watermark between two records.
func (s *slideWriter) hwLine(x, y, h int) {
	s.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#2e7d32" stroke-width="4"/>`, x, y-4, x, y+h+4)
}

// describeNamed is sim.Describe for a message, except that a message naming nodes by
// their ids names them as the run does.
func describeNamed(msg sim.Message, nodes []string) string {
	name := func(id sim.NodeID) string {
		if int(id) >= 0 && int(id) < len(nodes) {
			return nodes[id]
		}
		return fmt.Sprintf("#%d", id)
	}
	list := func(ids []sim.NodeID) string {
		names := make([]string, len(ids))
		for k, id := range ids {
			names[k] = name(id)
		}
		return "[" + strings.Join(names, ",") + "]"
	}
	return describeWithNames(msg, name, list)
}
