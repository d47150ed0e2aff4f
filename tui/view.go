package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"mqsim/model/client"
	"mqsim/model/proto"
	"mqsim/scenarios/script"
	"mqsim/sim"
)

// View renders the screen.
func (m Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "mqsim tui: " + m.Run().Script.Name
	return v
}

// Render is the screen as text: exactly height lines of at most width cells. It is a
// pure function of the model.
func (m Model) Render() (out string) {
	w, h := m.width, m.height
	defer func() {
		if p := recover(); p != nil {
			out = fit(fmt.Sprintf("render error (please report): %v", p), w)
		}
	}()
	if w < 24 || h < 6 {
		lines := []string{"mqsim: the terminal is too small", fmt.Sprintf("%dx%d; need 24x6, 80x24 is best", w, h)}
		return strings.Join(frame(lines, w, h), "\n")
	}
	var lines []string
	lines = append(lines, m.headerLine(w))
	footer := []string{m.statusLine(w)}
	hv := m.help
	hv.SetWidth(w)
	helpText := hv.View(m.keys)
	if hv.ShowAll {
		helpText = hv.FullHelpView(helpColumns(m.keys.FullHelp(), w))
	}
	helpLines := strings.Split(helpText, "\n")
	if len(helpLines) > h-4 {
		helpLines = helpLines[:max(h-4, 1)]
	}
	footer = append(footer, helpLines...)
	quiz := m.quizLines(w)
	if len(quiz) > h/2 {
		quiz = quiz[:h/2]
	}
	lines = append(lines, quiz...)
	bodyH := h - 1 - len(quiz) - len(footer)
	lines = append(lines, m.body(w, bodyH)...)
	lines = append(lines, footer...)
	return strings.Join(frame(lines, w, h), "\n")
}

// frame makes exactly h lines, each cut to w cells.
func frame(lines []string, w, h int) []string {
	out := make([]string, 0, h)
	for _, l := range lines {
		if len(out) == h {
			break
		}
		out = append(out, fit(l, w))
	}
	for len(out) < h {
		out = append(out, "")
	}
	return out
}

// fit cuts s to w cells (ANSI-aware).
func fit(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// pad cuts or pads s to exactly w cells.
func pad(s string, w int) string {
	s = fit(s, w)
	if n := ansi.StringWidth(s); n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

func (m Model) headerLine(w int) string {
	r := m.Run()
	pos := m.Pos()
	var t sim.Time
	if r.Len() > 0 {
		t = r.Events[pos].Time
	}
	play := "❚❚ paused"
	if m.playing {
		play = fmt.Sprintf("▶ %d/s", speeds[m.speed])
	}
	play = m.classroomBadge(play)
	branch := r.Name
	if r.Fork != nil {
		branch = fmt.Sprintf("%s: %s at %s", r.Name, r.Fork.Action.Command(), r.Fork.Action.At)
	}
	left := fmt.Sprintf(" mqsim · %s · %s · step %s / %s, t=%s", scriptTitle(r), branch, r.stepName(pos), r.stepName(r.Len()-1), t)
	right := play + " "
	if m.present {
		right = "PRESENTER · " + right
	}
	if seed := m.seed(); seed != "" {
		right = seed + " · " + right
	}
	gap := w - ansi.StringWidth(left) - ansi.StringWidth(right)
	if gap < 1 {
		right = play + " "
		gap = w - ansi.StringWidth(left) - ansi.StringWidth(right)
	}
	line := left
	if gap >= 1 {
		line += strings.Repeat(" ", gap) + right
	}
	return m.st.header.Render(pad(line, w))
}

func (m Model) seed() string {
	r := m.Run()
	if r.Opts.SeedSet {
		return fmt.Sprintf("seed %d", r.Opts.Seed)
	}
	for _, sp := range r.Steps {
		if sp.Step.Cmd == "world" {
			for _, a := range sp.Step.Args {
				if a.Key == "seed" && len(a.Vals) == 1 {
					return "seed " + a.Vals[0]
				}
			}
		}
	}
	return "seed 1"
}

func scriptTitle(r *Run) string {
	name := r.Script.Name
	if i := strings.LastIndexAny(name, "/\\"); i >= 0 {
		name = name[i+1:]
	}
	return strings.TrimSuffix(name, ".txt")
}

var promptLabels = map[promptKind]string{
	promptGoto:   "go to step (412) or time (t=1.5s)",
	promptSearch: "search",
	promptFilter: "filter: kinds, groups (fault, hw, isr, ...) and nodes; empty clears",
	promptFault:  "fault",
	promptSave:   "save as",
}

func (m Model) statusLine(w int) string {
	if m.prompt != promptNone {
		// Labels from the most helpful to the shortest: the first that leaves room for
		// what is typed is shown.
		labels := []string{promptLabels[m.prompt]}
		examples := "crash b1, restart b1, cut b1 <-> b2, heal, pause c1, drop-next b1 -> b2"
		if m.Run().queueMode() {
			examples = "crash q2, restart q2, cut q1 <-> q2, heal, pause c1, crash c1"
			if m.prompt == promptFilter {
				labels[0] = "filter: kinds, groups (fault, deliver, ack, dead-letter, ...) and nodes; empty clears"
			}
		}
		if m.prompt == promptFilter {
			labels = append(labels, "filter (kinds, groups, nodes)", "filter")
		}
		if m.prompt == promptFault && m.Run().Len() > 0 {
			at := m.Run().Events[m.Pos()].Time + 1
			labels = []string{fmt.Sprintf("fault at t=%s (%s; tab completes)", at, examples), fmt.Sprintf("fault at t=%s (tab completes)", at), fmt.Sprintf("fault at t=%s", at), "fault"}
		}
		return m.promptLine(labels, w)
	}
	if m.job != nil {
		return m.st.warn.Render(m.job.progressLine())
	}
	if m.status != "" {
		return m.st.warn.Render(m.status)
	}
	r := m.Run()
	if r.Len() == 0 {
		return "the run emitted no events"
	}
	k := r.StepOf(m.Pos())
	parts := []string{fmt.Sprintf("command %d/%d: %s", k+1, len(r.Steps), r.Steps[k].Step.Text)}
	if len(m.filterKinds)+len(m.filterNodes) > 0 {
		parts = append(parts, "filter "+strings.Join(append(slices.Clone(m.filterKinds), m.filterNodes...), ","))
	}
	parts = append(parts, "jump: "+m.jumpGroup().Name)
	if r.Err != nil {
		parts = append(parts, "stopped: "+r.Err.Error())
	}
	return m.st.dim.Render(strings.Join(parts, " · "))
}

// promptLine is the prompt's line within w columns: the first (most helpful) label,
// cut if need be, while it leaves room for what is typed; else the first shorter one
// that does, else the last, and the end of the text (where the cursor is) when even
// that does not fit.
func (m Model) promptLine(labels []string, w int) string {
	text := m.promptText + "█"
	label := labels[len(labels)-1]
	if room := w - ansi.StringWidth(": "+text); ansi.StringWidth(labels[0]) <= room {
		label = labels[0]
	} else if room >= 40 {
		label = ansi.Truncate(labels[0], room, "…") // its examples, as many as fit
	} else {
		for _, l := range labels[1:] {
			if ansi.StringWidth(l) <= room {
				label = l
				break
			}
		}
	}
	if room := w - ansi.StringWidth(label+": "); ansi.StringWidth(text) > room {
		text = "…" + ansi.TruncateLeft(text, ansi.StringWidth(text)-room+1, "")
	}
	return m.st.prompt.Render(label+": ") + text
}

// pane is one section of the body: a title, its content lines, and a one-line summary
// for when there is room for nothing more.
type pane struct {
	id      int
	title   string
	summary string
	lines   []string
	fill    func(w, h int) []string // panes that render for their height (the timeline)
}

// growth says, in order, how panes get lines beyond their one-line minimum: up to a cap
// of content lines (-1: all of it).
type growth struct {
	pane, lines int
}

const paneNarration = numPanes // the presenter's narration, not toggled by 1-7

func (m Model) body(w, h int) []string {
	if h <= 0 {
		return nil
	}
	if w >= 120 && h >= 16 && !m.hidden[PaneTimeline] {
		lw := w - 1 - m.rightWidth(w)
		left := m.column(lw, h, []int{PaneTimeline})
		right := m.column(w-lw-1, h, []int{paneNarration, PaneCluster, PaneClients, PaneNetwork, PaneExplain, PaneChecks, PaneMetrics})
		out := make([]string, h)
		for i := range out {
			out[i] = pad(left[i], lw) + m.st.dim.Render("│") + right[i]
		}
		return out
	}
	return m.column(w, h, []int{paneNarration, PaneTimeline, PaneCluster, PaneClients, PaneNetwork, PaneExplain, PaneChecks, PaneMetrics})
}

// rightWidth is the width of the right column in the two-column layout of a w-wide
// screen. In a log cluster's run, half of it (at least 60 columns, at most 72, which the
// state panes' lines rarely pass): the timeline gets the rest, so that its rows are read
// whole at 120 columns and the extra columns of a wider screen go to it. A queue broker's
// timeline rows are short and its delivery lines long: there the right column keeps 7/12.
// The width does not depend on the step, so nothing shifts as the run is stepped.
func (m Model) rightWidth(w int) int {
	if m.Run().queueMode() {
		return w - 1 - w*5/12
	}
	return min(max((w-1)/2, 60), 72)
}

// column stacks panes in a column of w x h.
func (m Model) column(w, h int, order []int) []string {
	var panes []pane
	for _, id := range order {
		if id == paneNarration {
			if !m.present {
				continue
			}
		} else if m.hidden[id] {
			continue
		}
		panes = append(panes, m.pane(id, w))
	}
	if len(panes) == 0 {
		return frame([]string{m.st.dim.Render("every pane is hidden: 1-7 shows them")}, w, h)
	}
	// Every pane gets its summary line, as far as there is room, in order of importance.
	alloc := map[int]int{}
	left := h
	for _, id := range []int{paneNarration, PaneCluster, PaneTimeline, PaneExplain, PaneMetrics, PaneClients, PaneChecks, PaneNetwork} {
		if i := slices.IndexFunc(panes, func(p pane) bool { return p.id == id }); i >= 0 && left > 0 {
			alloc[id] = 1
			left--
		}
	}
	want := func(p pane, cap int) int {
		n := len(p.lines)
		if p.fill != nil {
			n = 1 << 20
		}
		if cap >= 0 {
			n = min(n, cap)
		}
		if n <= 1 && p.fill == nil {
			return 1 // the summary line says it all
		}
		return 1 + n
	}
	// A cluster with many partitions (consumer groups add __consumer_offsets) or a broker
	// with many queues must leave room for the event and its explanation: the Cluster
	// pane first gets what a small screen can spare, a third of it, and the rest only
	// once the timeline and the explanation have some lines.
	grow := []growth{
		{paneNarration, 8}, {PaneCluster, min(10, h/3)}, {PaneExplain, 3}, {PaneTimeline, 3},
		{PaneCluster, -1}, {PaneExplain, 3}, {PaneClients, -1}, {PaneNetwork, -1},
		{PaneTimeline, 5}, {PaneMetrics, 8}, {PaneExplain, -1}, {PaneChecks, 3}, {PaneTimeline, -1}, {PaneChecks, -1}, {PaneMetrics, -1},
	}
	for _, g := range grow {
		i := slices.IndexFunc(panes, func(p pane) bool { return p.id == g.pane })
		if i < 0 || alloc[g.pane] == 0 {
			continue
		}
		if more := want(panes[i], g.lines) - alloc[g.pane]; more > 0 {
			more = min(more, left)
			alloc[g.pane] += more
			left -= more
		}
	}
	// Room left over goes to the last pane, so the screen is filled.
	var out []string
	for _, p := range panes {
		n := alloc[p.id]
		if n == 0 {
			continue
		}
		out = append(out, m.renderPane(p, w, n)...)
	}
	return frame(out, w, h)
}

// renderPane renders a pane in n lines: a summary line when n is 1, else a title and
// n-1 content lines.
func (m Model) renderPane(p pane, w, n int) []string {
	if n == 1 {
		name := p.title
		if p.id < numPanes {
			name = paneNames[p.id]
			if p.id == PaneCluster && m.Run().queueMode() {
				name = "Queues"
			}
		} else if i := strings.Index(name, " ·"); i > 0 {
			name = name[:i]
		}
		return []string{m.st.title.Render(name+":") + " " + p.summary}
	}
	rule := "── " + p.title + " "
	title := m.st.title.Render(fit(rule+strings.Repeat("─", max(w-ansi.StringWidth(rule), 0)), w))
	lines := p.lines
	if p.fill != nil {
		lines = p.fill(w, n-1)
	}
	if len(lines) > n-1 {
		// Cut, and say so at the end of the last line shown.
		lines = slices.Clone(lines[:n-1])
		lines[n-2] = ansi.Truncate(lines[n-2], w-2, "") + m.st.dim.Render(" …")
	}
	return append([]string{title}, lines...)
}

func (m Model) pane(id, w int) pane {
	switch id {
	case paneNarration:
		return m.narrationPane(w)
	case PaneTimeline:
		return m.timelinePane()
	case PaneCluster:
		return m.clusterPane(w)
	case PaneClients:
		return m.clientsPane()
	case PaneNetwork:
		return m.networkPane()
	case PaneExplain:
		return m.explainPane(w)
	case PaneChecks:
		return m.checksPane()
	case PaneMetrics:
		return m.metricsPane()
	}
	return pane{id: id}
}

func (m Model) narrationPane(w int) pane {
	r := m.Run()
	p := pane{id: paneNarration, title: "Narration"}
	ns := r.narrated()
	k := m.currentPoint()
	if k < 0 {
		p.summary = "no narration here yet: pgdn or . goes to the first narrated point"
		if len(ns) == 0 {
			p.summary = "this scenario has no narration"
		}
		p.lines = []string{p.summary}
		return p
	}
	idx := slices.Index(ns, k) + 1
	st := r.Steps[k].Step
	p.title = fmt.Sprintf("Narration · step %d of %d", idx, len(ns))
	prose := script.Prose(st.Narration) // the questions are mqsim quiz's, not the tour's
	p.summary = fmt.Sprintf("step %d of %d: %s", idx, len(ns), strings.Join(prose, " "))
	if len(r.Opts.Set) > 0 {
		// The narration was written for the scenario as it stands: under --set or --fix
		// what it says may not happen.
		for _, l := range strings.Split(ansi.Wordwrap("written for the run without --set "+strings.Join(r.Opts.Set, " ")+": this run may differ", max(w-2, 10), ""), "\n") {
			p.lines = append(p.lines, m.st.warn.Render(" "+l))
		}
		p.title += " · as written, without --set"
	}
	for _, para := range paragraphs(prose) {
		for _, l := range strings.Split(ansi.Wordwrap(para, max(w-2, 10), ""), "\n") {
			p.lines = append(p.lines, " "+l)
		}
	}
	p.lines = append(p.lines, m.st.dim.Render(fmt.Sprintf(" ▸ %s   (pgdn/. next point)", st.Text)))
	return p
}

// paragraphs joins a narration's lines into paragraphs (a blank line ends one, and a
// setting line such as "tags: ..." is one of its own), so that the pane breaks them at
// words for its own width, not where the file's lines end.
func paragraphs(lines []string) []string {
	var ps []string
	cur := ""
	for _, l := range lines {
		switch {
		case script.IsSetting(l):
			if cur != "" {
				ps = append(ps, cur)
			}
			ps = append(ps, l)
			cur = ""
		case l == "":
			ps = append(ps, cur)
			cur = ""
		case cur == "":
			cur = l
		default:
			cur += " " + l
		}
	}
	return append(ps, cur)
}

func (m Model) timelinePane() pane {
	r := m.Run()
	title := "Timeline"
	if len(m.filterKinds)+len(m.filterNodes) > 0 {
		title += " · filter " + strings.Join(append(slices.Clone(m.filterKinds), m.filterNodes...), ",")
	}
	if m.search != "" {
		title += " · /" + m.search
	}
	p := pane{id: PaneTimeline, title: title}
	if r.Len() == 0 {
		p.summary = "no events"
		p.lines = []string{"no events"}
		return p
	}
	nodeW, timeW, numW := 2, len(r.Events[m.Pos()].Time.String()), len(strconv.FormatUint(r.Events[r.Len()-1].Step, 10))
	for _, n := range r.NodeNames() {
		nodeW = max(nodeW, len(n))
	}
	cur := m.Pos()
	row := func(i int) string {
		e := r.Events[i]
		mark := "  "
		if i == cur {
			mark = "▶ "
		}
		kind, detail := rowWords(e)
		text := fmt.Sprintf("%s%*d %*s %-*s ", mark, numW, e.Step, timeW, e.Time, nodeW, e.Node)
		if i == cur {
			return m.st.current.Render(text + kind + " " + detail)
		}
		return text + m.st.kind(e.Kind).Render(kind) + " " + detail
	}
	p.summary = ansi.Strip(row(cur))
	p.fill = func(w, h int) []string {
		// The current event sits a third of the way down; the rest are the visible
		// events around it.
		above := h / 3
		var before, after []int
		for i := cur - 1; i >= 0 && len(before) < above; i-- {
			if m.visible(r.Events[i]) {
				before = append(before, i)
			}
		}
		for i := cur + 1; i < r.Len() && len(after) < h-1-len(before); i++ {
			if m.visible(r.Events[i]) {
				after = append(after, i)
			}
		}
		// Near the end, the room left below goes to events above.
		next := cur - 1
		if len(before) > 0 {
			next = before[len(before)-1] - 1
		}
		for i := next; len(before)+len(after)+1 < h && i >= 0; i-- {
			if m.visible(r.Events[i]) {
				before = append(before, i)
			}
		}
		slices.Reverse(before)
		for _, i := range slices.Concat(before, after) {
			timeW = max(timeW, len(r.Events[i].Time.String()))
		}
		var lines []string
		for _, i := range before {
			lines = append(lines, row(i))
		}
		lines = append(lines, row(cur))
		for _, i := range after {
			lines = append(lines, row(i))
		}
		return lines
	}
	return p
}

// clusterPane shows the nodes, and per partition the controller's word and a strip per
// replica: records by offset, ┃ at the high watermark, * on records not yet on disk.
func (m Model) clusterPane(w int) pane {
	if m.Run().queueMode() {
		return m.brokerPane(w)
	}
	st := &m.state
	p := pane{id: PaneCluster, title: "Cluster · ★ leader  ┃ high watermark  * not on disk"}
	var nodes []string
	cutOff := map[string]bool{}
	for _, n := range st.Nodes {
		if n.Role == RoleProducer || n.Role == RoleConsumer {
			continue
		}
		cutOff[n.Name] = m.isolated(n.Name)
	}
	for _, n := range st.Nodes {
		if n.Role == RoleProducer || n.Role == RoleConsumer {
			continue
		}
		nodes = append(nodes, m.nodeStatus(n, cutOff[n.Name]))
	}
	if len(nodes) == 0 {
		p.summary = "no nodes yet"
		p.lines = []string{p.summary}
		return p
	}
	p.lines = append(p.lines, strings.Join(nodes, "  "))
	var summaries []string
	nb := len(m.Run().Brokers)
	for pi, part := range st.Parts {
		leader := part.Leader
		if leader == "" {
			leader = m.st.warn.Render("none (offline)")
		}
		line := fmt.Sprintf("%s leader %s · epoch %d · ISR [%s]", part.Name(), leader, part.Epoch, strings.Join(part.ISR, " "))
		if part.Stale {
			line += m.st.warn.Render(" (controller down: its last word)")
		}
		p.lines = append(p.lines, m.st.committed.Render(part.Name())+strings.TrimPrefix(line, part.Name()))
		var rows []ReplicaView
		var names []string
		for _, name := range part.Replicas {
			bi := slices.Index(m.Run().Brokers, name)
			if bi < 0 || pi*nb+bi >= len(st.Replicas) {
				continue
			}
			rows = append(rows, st.Replicas[pi*nb+bi])
			names = append(names, name)
		}
		p.lines = append(p.lines, m.strips(w, part, names, rows)...)
		hw := int64(-1)
		for k, rv := range rows {
			if names[k] == part.Leader && rv.Hosted && !rv.Down {
				hw = rv.HW
			}
		}
		s := fmt.Sprintf("%s leader %s e%d ISR [%s]", part.Name(), part.Leader, part.Epoch, strings.Join(part.ISR, " "))
		if hw >= 0 {
			s += fmt.Sprintf(" HW %d", hw)
		}
		summaries = append(summaries, s)
	}
	coordLines, coordSums := m.txnCoordLines()
	p.lines = append(p.lines, coordLines...)
	summaries = append(summaries, coordSums...)
	p.summary = strings.Join(nodes, " ")
	if len(summaries) > 0 {
		p.summary = strings.Join(summaries, " · ")
	}
	return p
}

// txnCoordLines are the transaction coordinators' view: per broker, each transactional
// id it coordinates with its state, producer id and epoch, the partitions of its
// transaction, and the markers still unanswered.
func (m Model) txnCoordLines() (lines, sums []string) {
	for _, tc := range m.state.TxnCoords {
		if len(tc.Txns) == 0 {
			continue
		}
		lines = append(lines, m.st.committed.Render("transaction coordinator "+tc.Broker))
		for _, t := range tc.Txns {
			line := fmt.Sprintf("  %s %s · pid %d epoch %d", t.ID, t.State, t.ProducerID, t.Epoch)
			if t.Pending {
				line += fmt.Sprintf(" → %s (being replicated)", t.Next)
			}
			if len(t.Partitions) > 0 {
				line += " · " + proto.TPList(t.Partitions)
			}
			if len(t.Unacked) > 0 {
				line += " · markers pending " + proto.TPList(t.Unacked)
			}
			lines = append(lines, line)
			sums = append(sums, fmt.Sprintf("%s %s@%s", t.ID, t.State, tc.Broker))
		}
	}
	return lines, sums
}

// isolated reports whether every link between the node and the other servers
// (controller, brokers, kernel nodes) is cut in both directions.
func (m Model) isolated(name string) bool {
	cuts := m.state.Net.Cuts
	others := 0
	for _, n := range m.state.Nodes {
		if n.Name == name || n.Role == RoleProducer || n.Role == RoleConsumer {
			continue
		}
		others++
		if !slices.Contains(cuts, Link{name, n.Name}) || !slices.Contains(cuts, Link{n.Name, name}) {
			return false
		}
	}
	return others > 0
}

func (m Model) nodeStatus(n NodeView, isolated bool) string {
	var s string
	switch n.Status {
	case sim.Up:
		s = n.Name + " ● up"
	case sim.Down:
		return m.st.down.Render(n.Name + " ✖ down")
	case sim.Paused:
		s = m.st.warn.Render(n.Name + " ◌ paused")
	default:
		s = n.Name + " " + n.Status.String()
	}
	if n.Quorum != "" {
		s += " " + n.Quorum
	}
	if isolated {
		s += m.st.warn.Render(" (partitioned away)")
	}
	return s
}

// strips renders one partition's replicas as aligned rows of records: one column per
// offset, the same columns in every row (see stripColumns), each row a replica.
func (m Model) strips(w int, part PartView, names []string, rows []ReplicaView) []string {
	if len(rows) == 0 {
		return nil
	}
	cols := stripColumns(w, names, rows)
	var out []string
	for k, rv := range rows {
		out = append(out, m.strip(cols, part, names[k], rv))
	}
	return out
}

// shownEnd is the end of the records a replica shows: its log end, or for a replica that
// is down, what its disk keeps.
func (rv ReplicaView) shownEnd() int64 {
	if rv.Down {
		return min(rv.LEO, rv.Synced)
	}
	return rv.LEO
}

// recAt is the replica's record at offset o, if it shows one there.
func (rv ReplicaView) recAt(o int64) (Rec, bool) {
	if !rv.Hosted || o < rv.LogStart || o >= rv.shownEnd() || int(o-rv.LogStart) >= len(rv.Recs) {
		return Rec{}, false
	}
	return rv.Recs[o-rv.LogStart], true
}

// stripCols are the columns the rows of one partition share: offsets from..hi-1 (from > lo
// when the oldest do not fit, shown as …), each of its width, with the records' values
// when they all fit.
type stripCols struct {
	nameW  int
	lo, hi int64 // the offsets any row may show
	from   int64 // the first offset drawn
	values bool
	widths map[int64]int
}

// stripValueW is how much of a record's value a strip shows.
const stripValueW = 12

// stripColumns fits the partition's offsets into width w: the window ends at the highest
// offset and goes back as far as the room allows, with values if they all fit, else
// offsets only.
func stripColumns(w int, names []string, rows []ReplicaView) stripCols {
	c := stripCols{nameW: 2, values: true, widths: map[int64]int{}}
	for _, n := range names {
		c.nameW = max(c.nameW, len(n))
	}
	c.lo, c.hi = offsetRange(rows)
	const prefixW = 10 // "  b1 ★ e0 "
	tailW := len(fmt.Sprintf(" HW %d LEO %d disk %d out of ISR", c.hi, c.hi, c.hi))
	if slices.ContainsFunc(rows, func(rv ReplicaView) bool { return rv.LSO < rv.HW }) {
		tailW += len(fmt.Sprintf(" LSO %d", c.hi)) // see stripTail
	}
	room := w - (c.nameW + prefixW - 2) - tailW
	// A column's width: the offset, with its value if values, and room for the * of a
	// record not on disk; plus the separator before it.
	colW := func(o int64, values bool) int {
		width := len(strconv.FormatInt(o, 10))
		star := false
		for _, rv := range rows {
			if r, ok := rv.recAt(o); ok {
				width = max(width, len([]rune(r.label(o, values))))
				if o >= rv.Synced {
					star = true
				}
			}
		}
		if star {
			width++
		}
		return width + 1
	}
	window := func(values bool, room int) (int64, bool) {
		n := 1
		for o := c.hi - 1; o >= c.lo; o-- {
			if n += colW(o, values); n > room {
				return o + 1, false
			}
		}
		return c.lo, true
	}
	c.from = c.lo
	if _, all := window(true, room); !all {
		c.values = false
		if _, all = window(false, room); !all {
			c.from, _ = window(false, room-1) // room for the … before it
		}
	}
	for o := c.from; o < c.hi; o++ {
		c.widths[o] = colW(o, c.values) - 1
	}
	return c
}

// offsetRange is the offsets the rows may show: from the lowest log start to the highest
// log end or high watermark.
func offsetRange(rows []ReplicaView) (lo, hi int64) {
	lo = -1
	for _, rv := range rows {
		if !rv.Hosted {
			continue
		}
		if lo < 0 || rv.LogStart < lo {
			lo = rv.LogStart
		}
		hi = max(hi, rv.shownEnd(), rv.HW)
	}
	return max(lo, 0), hi
}

// strip renders one replica's row: its name and role, its epoch, its records in the
// shared columns with the high watermark ┃ among them, and what it says of itself.
func (m Model) strip(c stripCols, part PartView, name string, rv ReplicaView) string {
	var b strings.Builder
	role := "·"
	switch {
	case rv.Down:
		role = "✖"
	case rv.Leader && name == part.Leader:
		role = "★"
	case rv.Leader:
		role = "☆" // believes it leads, but the controller says otherwise
	}
	fmt.Fprintf(&b, "  %-*s %s ", c.nameW, name, role)
	if rv.Hosted {
		fmt.Fprintf(&b, "e%-2d", rv.Epoch)
	} else {
		b.WriteString("   ")
	}
	if c.from > c.lo {
		b.WriteString("…")
	}
	m.stripRecords(&b, c, rv)
	if rv.Hosted && !rv.Down && rv.HW >= c.hi {
		b.WriteString("┃")
	} else {
		b.WriteString(" ")
	}
	b.WriteString(m.stripTail(part, name, rv))
	line := b.String()
	if rv.Down {
		line = m.st.dim.Render(ansi.Strip(line))
	}
	return line
}

// stripRecords writes a replica's records, one per column: committed ones (below the
// high watermark) styled so, those not yet on disk marked *.
func (m Model) stripRecords(b *strings.Builder, c stripCols, rv ReplicaView) {
	for o := c.from; o < c.hi; o++ {
		sep := " "
		if rv.Hosted && !rv.Down && o == rv.HW {
			sep = "┃"
		}
		b.WriteString(sep)
		r, ok := rv.recAt(o)
		if !ok {
			b.WriteString(strings.Repeat(" ", c.widths[o]))
			continue
		}
		text := r.label(o, c.values)
		style := m.st.committed
		if o >= rv.HW || rv.Down {
			style = lipgloss.NewStyle()
		}
		if r.Control {
			style = m.st.marker
		}
		if o >= rv.Synced {
			text += "*"
			style = m.st.unsynced
		}
		b.WriteString(style.Render(text) + strings.Repeat(" ", max(c.widths[o]-len([]rune(text)), 0)))
	}
}

// label is how a strip shows the record at offset o: "5:v5" with values, "5" without; a
// transaction marker "6:COMMIT" or "6:ABORT", "6C" or "6A" without values, so that
// markers never read as records.
func (r Rec) label(o int64, values bool) string {
	text := strconv.FormatInt(o, 10)
	switch {
	case r.Control && values:
		return text + ":" + r.Marker.String()
	case r.Control:
		return text + r.Marker.String()[:1]
	case values:
		v := r.Value
		if len([]rune(v)) > stripValueW {
			v = string([]rune(v)[:stripValueW-1]) + "…"
		}
		return text + ":" + v
	}
	return text
}

// stripTail is what a replica's row ends with: down (and what its disk keeps), not open
// yet, or its high watermark, log end, disk and ISR membership.
func (m Model) stripTail(part PartView, name string, rv ReplicaView) string {
	switch {
	case rv.Down && rv.Hosted:
		return m.st.down.Render(fmt.Sprintf(" down: disk keeps offsets below %d", rv.Synced))
	case rv.Down:
		return m.st.down.Render(" down")
	case !rv.Hosted:
		return m.st.dim.Render(" not open yet (recovering or waiting for the controller)")
	}
	tail := fmt.Sprintf(" HW %d LEO %d", rv.HW, rv.LEO)
	if rv.LSO < rv.HW {
		tail = fmt.Sprintf(" LSO %d HW %d LEO %d", rv.LSO, rv.HW, rv.LEO) // an open transaction holds read_committed back
	}
	if rv.Synced < rv.LEO {
		tail += fmt.Sprintf(" disk %d", rv.Synced)
	}
	if !slices.Contains(part.ISR, name) {
		tail += m.st.warn.Render(" out of ISR")
	}
	return tail
}

func (m Model) clientsPane() pane {
	st := &m.state
	p := pane{id: PaneClients, title: "Clients"}
	var sums []string
	for _, pr := range st.Producers {
		s := pr.Stats
		status := "●"
		if pr.Status != sim.Up {
			status = "✖ " + pr.Status.String()
		}
		p.lines = append(p.lines, fmt.Sprintf("%s %s producer  in flight %d · queued %d · acked %d · failed %d · unknown %d · retries %d",
			pr.Name, status, s.InFlight, s.Queued, s.Acked, s.Failed, s.Unknown, s.Retries))
		sums = append(sums, fmt.Sprintf("%s acked %d in flight %d failed %d unknown %d", pr.Name, s.Acked, s.InFlight, s.Failed, s.Unknown))
		if pr.Transactional {
			p.lines = append(p.lines, "  "+txnLine(pr.Txn))
			sums = append(sums, fmt.Sprintf("%s %s", pr.Name, pr.Txn.State))
		}
	}
	for _, a := range st.Pipelines {
		status := "●"
		if a.Status != sim.Up {
			status = "✖ " + a.Status.String()
		}
		s := a.Stats
		p.lines = append(p.lines, fmt.Sprintf("%s %s pipeline  group %s: %s → %s · at %s · %s · %d polls · %d processed · %d committed · %d aborted",
			a.Name, status, a.Config.Group, a.Config.From, a.Config.To, positionsText(a.Positions), s.State, s.Polls, s.Processed, s.Committed, s.Aborted))
		sums = append(sums, fmt.Sprintf("%s %s", a.Name, s.State))
		if a.Transactional {
			p.lines = append(p.lines, "  "+txnLine(a.Txn))
		}
	}
	for _, c := range st.Consumers {
		status := "●"
		if c.Status != sim.Up {
			status = "✖ " + c.Status.String()
		}
		pos := positionsText(c.Positions)
		polling := ""
		if c.Polling {
			polling = " · polling"
		}
		p.lines = append(p.lines, fmt.Sprintf("%s %s consumer  at %s · consumed %d in %d polls%s", c.Name, status, pos, c.Consumed, c.Polls, polling))
		sums = append(sums, fmt.Sprintf("%s at %s", c.Name, pos))
	}
	for _, g := range st.Groups {
		p.lines = append(p.lines, fmt.Sprintf("group %s: %s", g.Name, g.Head))
		for _, m := range g.Members {
			p.lines = append(p.lines, "  "+m)
		}
		p.lines = append(p.lines, "  "+g.Lag)
		sums = append(sums, fmt.Sprintf("group %s %s", g.Name, g.Head))
	}
	ql, qs := m.queueClientLines()
	p.lines, sums = append(p.lines, ql...), append(sums, qs...)
	if len(p.lines) == 0 {
		p.summary = "no clients yet"
		p.lines = []string{p.summary}
		return p
	}
	p.summary = strings.Join(sums, " · ")
	return p
}

// positionsText is where a consumer reads: "t/0@5 t/1@?" (? before its position is
// known), or "nothing assigned".
func positionsText(ps []client.PartitionPosition) string {
	var pos []string
	for _, pp := range ps {
		if pp.Offset < 0 {
			pos = append(pos, pp.TP.String()+"@?")
		} else {
			pos = append(pos, fmt.Sprintf("%s@%d", pp.TP, pp.Offset))
		}
	}
	if len(pos) == 0 {
		return "nothing assigned"
	}
	return strings.Join(pos, " ")
}

// txnLine is a transactional producer's transaction: its state (ready, in transaction,
// committing, aborting, fenced, ...), producer id and epoch, the partitions of the open
// transaction, and its counts.
func txnLine(t client.TxnStatus) string {
	line := fmt.Sprintf("transactional.id %s: %s · pid %d epoch %d", t.ID, t.State, t.PID, t.Epoch)
	if len(t.Partitions) > 0 {
		line += " · " + proto.TPList(t.Partitions)
	}
	line += fmt.Sprintf(" · %d committed · %d aborted", t.Committed, t.Aborted)
	if stopped := t.State == client.TxnAbortable || t.State == client.TxnFenced || t.State == client.TxnFatal; stopped && t.Why != "" {
		line += " (" + t.Why + ")"
	}
	return line
}

func (m Model) networkPane() pane {
	net := m.state.Net
	p := pane{id: PaneNetwork, title: "Network"}
	links := func(ls []Link) string {
		var out []string
		for _, l := range ls {
			if slices.Contains(ls, Link{l.To, l.From}) {
				if l.From < l.To {
					out = append(out, l.From+" <-> "+l.To)
				}
				continue
			}
			out = append(out, l.From+" -> "+l.To)
		}
		return strings.Join(out, ", ")
	}
	if len(net.Cuts) > 0 {
		p.lines = append(p.lines, m.st.fault.Render("cut: ")+links(net.Cuts))
	}
	if len(net.Clogs) > 0 {
		p.lines = append(p.lines, m.st.fault.Render("clogged: ")+links(net.Clogs))
	}
	if len(p.lines) == 0 {
		p.lines = []string{"all links up"}
	}
	p.summary = strings.Join(p.lines, " · ")
	return p
}

func (m Model) explainPane(w int) pane {
	title := "Explain"
	if m.expl.Note != "" {
		title += " · notes/" + m.expl.Note
	}
	p := pane{id: PaneExplain, title: title, summary: m.expl.Text}
	for _, l := range strings.Split(ansi.Wrap(m.expl.Text, max(w-1, 10), ""), "\n") {
		p.lines = append(p.lines, " "+l)
	}
	return p
}

func (m Model) checksPane() pane {
	r := m.Run()
	p := pane{id: PaneChecks, title: "Checks"}
	switch {
	case r.Report == nil:
		p.summary = "no client history to check"
		p.lines = []string{p.summary}
		return p
	case len(r.Checks) == 0:
		p.summary = m.st.ok.Render("✓ the checkers find nothing wrong in the whole history")
		p.lines = []string{p.summary}
		return p
	}
	begun := 0
	for _, c := range r.Checks {
		mark := "○"
		if c.Event >= 0 && c.Event <= m.Pos() {
			mark = "●"
			begun++
		}
		where := "after the trace"
		if c.V.Step > 0 {
			where = "step " + thousands(int(c.V.Step))
		}
		subject := tpName(c.V.Topic, c.V.Partition)
		if r.queueMode() {
			subject = c.V.Topic // queues have no partitions
		}
		p.lines = append(p.lines, fmt.Sprintf("%s %s %s from %s: %s", mark, m.st.warn.Render(string(c.V.Anomaly)), subject, where, c.V.Text))
	}
	p.title = fmt.Sprintf("Checks · %s in the whole run, %d begun by now · c jumps", count(len(r.Checks), "violation"), begun)
	var names []string
	for _, c := range r.Checks {
		if !slices.Contains(names, string(c.V.Anomaly)) {
			names = append(names, string(c.V.Anomaly))
		}
	}
	p.summary = fmt.Sprintf("%s (%s), %d begun by now · c jumps", count(len(r.Checks), "violation"), strings.Join(names, ", "), begun)
	return p
}

// helpColumns regroups the full help's bindings into as many columns as fit in w.
func helpColumns(groups [][]key.Binding, w int) [][]key.Binding {
	var all []key.Binding
	colW := 0
	for _, g := range groups {
		for _, b := range g {
			all = append(all, b)
			colW = max(colW, ansi.StringWidth(b.Help().Key)+1+ansi.StringWidth(b.Help().Desc)+4)
		}
	}
	ncol := max(1, min(len(all), w/max(colW, 1)))
	rows := (len(all) + ncol - 1) / ncol
	var out [][]key.Binding
	for i := 0; i < len(all); i += rows {
		out = append(out, all[i:min(i+rows, len(all))])
	}
	return out
}

// count says n things, in the singular when n is 1: "1 violation", "3 violations".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
