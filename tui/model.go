package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"mqsim/scenarios/script"
	"mqsim/sim"
)

// Options shape the UI.
type Options struct {
	NoColor   bool // no colours (NO_COLOR, --no-color); markers carry the meaning
	Presenter bool // start in presenter mode
	// Classroom makes the model a student's session of mqsim classroom: it follows the
	// lecturer's step (LecturerMsg) until e, and r rejoins; no forks or saves (follow.go).
	Classroom bool
	// Quiz plays the run as a quiz of its script's questions (quiz.go).
	Quiz bool
	// Live follows a session while real clients use it (mqsim serve --tui, live.go):
	// the run grows, and x gives its fault to the served world instead of forking.
	Live *Live
}

// Pane indexes, in the order of the 1-7 keys.
const (
	PaneTimeline = iota
	PaneCluster
	PaneClients
	PaneNetwork
	PaneExplain
	PaneChecks
	PaneMetrics
	numPanes
)

var paneNames = [numPanes]string{"Timeline", "Cluster", "Clients", "Network", "Explain", "Checks", "Metrics"}

// speeds are the play speeds, in trace events per second.
var speeds = []int{1, 2, 5, 10, 25, 50, 100, 250}

// jumpGroup is a set of events ] and [ jump between: those of its kinds, or, when Match
// is set, those it matches (by type and fields).
type jumpGroup struct {
	Name  string
	Kinds []string
	Match func(e sim.Event) bool
}

// has reports whether event e belongs to the group.
func (g jumpGroup) has(e sim.Event) bool {
	if g.Match != nil {
		return g.Match(e)
	}
	return slices.Contains(g.Kinds, e.Kind)
}

// jumpGroups are the events ] and [ jump between in a log cluster's run; the
// consumer-group groups (jump_group.go) and the transaction groups (jump_txn.go) come last.
var jumpGroups = append([]jumpGroup{
	{Name: "fault", Kinds: faultKinds},
	{Name: "append", Kinds: []string{"append", "replicate"}},
	{Name: "fsync", Kinds: []string{"fsync"}},
	{Name: "ack", Kinds: []string{"ack", "produce-error", "reject"}},
	{Name: "hw", Kinds: []string{"hw"}},
	{Name: "isr", Kinds: []string{"isr", "isr-propose", "isr-rejected"}},
	{Name: "election", Kinds: []string{"election", "offline", "fence", "leader"}},
	{Name: "truncate", Kinds: []string{"truncate", "truncation", "recover"}},
	{Name: "client", Kinds: []string{"send", "batch", "retry", "timeout", "disconnect", "late", "fail", "poll", "position", "assign", "reset", "dedup", "pid"}},
}, slices.Concat(groupJumpGroups, txnJumpGroups)...)

// queueJumpGroups are the kinds ] and [ jump between in a queue broker's run.
var queueJumpGroups = []jumpGroup{
	{Name: "fault", Kinds: faultKinds},
	{Name: "deliver", Kinds: []string{"deliver", "receive"}},
	{Name: "ack", Kinds: []string{"ack", "reject", "nack", "delete"}},
	{Name: "requeue", Kinds: []string{"requeue", "channel-closed", "visibility", "ack-lost"}},
	{Name: "dead-letter", Kinds: []string{"dead-letter", "delivery-limit", "redrive", "expire", "drop"}},
	{Name: "leader", Kinds: []string{"election", "leader", "epoch"}},
	{Name: "confirm", Kinds: []string{"confirm", "nack", "return", "timeout", "reject-publish"}},
	{Name: "client", Kinds: []string{"publish", "process", "ack-lost", "timeout", "channel-closed"}},
}

// groups are the jump groups of the run on screen.
func (m *Model) groups() []jumpGroup {
	if m.Run().queueMode() {
		return queueJumpGroups
	}
	return jumpGroups
}

// jumpGroup is the group ] and [ jump to now.
func (m *Model) jumpGroup() jumpGroup {
	gs := m.groups()
	return gs[m.jump%len(gs)]
}

// faultKinds are the trace kinds of faults.
var faultKinds = []string{"crash", "restart", "pause", "resume", "partition", "heal", "cut", "clog", "unclog", "drop-next", "delay-next", "dup-next", "release", "torn-armed", "corrupt"}

func isFault(kind string) bool { return slices.Contains(faultKinds, kind) }

// promptKind is what the prompt line is asking for.
type promptKind uint8

const (
	promptNone promptKind = iota
	promptGoto
	promptSearch
	promptFilter
	promptFault
	promptSave
)

// Model is the Bubble Tea model of the TUI: runs (the original and its forks), where the
// user is in each, and what the screen shows. Update never runs the simulation except to
// record a fork, which it does in the background (forkJob); View is a pure function of the
// model.
type Model struct {
	runs []*Run
	pos  []int // per run: the current event
	cur  int   // the run shown

	state State // the view model at runs[cur], pos[cur]
	expl  Explanation

	width, height int
	keys          keyMap
	help          help.Model
	st            styles
	opts          Options

	playing   bool
	playUntil int // -1, or the event at which play stops (presenter)
	speed     int // index into speeds
	tickID    int

	jump                     int // index into groups()
	filterKinds, filterNodes []string
	search                   string

	hidden    [numPanes]bool
	present   bool
	pointStep int // the narrated script step the presenter moved to, or -1: follow the position
	checkIdx  int

	prompt      promptKind
	promptText  string
	status      string
	forks       int
	lastSaveDir string
	job         *forkJob // the fork being recorded, or nil

	following bool        // a classroom session that steps with the lecturer
	lecturer  LecturerMsg // the lecturer's last position; Event -1 before the first

	quiz quizState // the quiz under way (Options.Quiz)
}

// New makes the model over a recorded run.
func New(run *Run, opts Options) Model {
	m := Model{
		runs: []*Run{run}, pos: []int{0},
		width: 80, height: 24,
		keys: newKeyMap(), help: help.New(), st: newStyles(opts.NoColor), opts: opts,
		speed: 2, playUntil: -1, pointStep: -1, checkIdx: -1,
		present:   opts.Presenter,
		following: opts.Classroom, lecturer: LecturerMsg{Event: -1},
	}
	m.keys.classroom(opts.Classroom)
	// The Metrics pane waits for its key (7), so that the cluster keeps the room it had.
	m.hidden[PaneMetrics] = true
	m.help.Styles = m.st.help
	if m.present && len(run.narrated()) > 0 {
		m.pointStep = run.narrated()[0]
	}
	m.refresh()
	if opts.Quiz {
		// The Checks pane would tell the verdict before the questions about it.
		m.hidden[PaneChecks] = true
		m.quiz = newQuiz(run)
		if len(m.quiz.stops) > 0 {
			m.moveTo(m.quiz.stops[0].event)
		}
	}
	return m
}

// Run is the run on screen.
func (m Model) Run() *Run { return m.runs[m.cur] }

// Pos is the current event of the run on screen.
func (m Model) Pos() int { return m.pos[m.cur] }

// Runs are the original run and its forks.
func (m Model) Runs() []*Run { return m.runs }

// State is the view model at the current event.
func (m Model) State() State { return m.state }

// refresh rebuilds the view model at the current position (from a checkpoint).
func (m *Model) refresh() {
	r := m.Run()
	m.pos = slices.Clone(m.pos) // copies of the model keep their own positions
	m.pos[m.cur] = clamp(m.pos[m.cur], 0, r.Len()-1)
	m.state = r.StateAt(m.pos[m.cur])
	m.expl = Explain(r, m.pos[m.cur], &m.state)
}

// moveTo goes to event i (clamped) and rebuilds the state.
func (m *Model) moveTo(i int) {
	m.pos = slices.Clone(m.pos)
	m.pos[m.cur] = i
	m.refresh()
}

// Init starts nothing but, live, the wait for the run's next snapshot: the model waits
// for keys.
func (m Model) Init() tea.Cmd {
	if m.opts.Live != nil {
		return m.opts.Live.wait()
	}
	return nil
}

type tickMsg struct{ id int }

func (m *Model) tick() tea.Cmd {
	id := m.tickID
	return tea.Tick(time.Second/time.Duration(speeds[m.speed]), func(time.Time) tea.Msg { return tickMsg{id} })
}

// Update handles keys, window sizes and play ticks. A panic in it (a bug) is turned into
// a status message rather than taking the terminal down.
func (m Model) Update(msg tea.Msg) (res tea.Model, cmd tea.Cmd) {
	saved := m
	defer func() {
		if p := recover(); p != nil {
			saved.status = fmt.Sprintf("internal error (please report): %v", p)
			saved.playing = false
			res, cmd = saved, nil
		}
	}()
	return m.update(msg)
}

func (m Model) update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 1), max(msg.Height, 1)
		return m, nil
	case tickMsg:
		if !m.playing || msg.id != m.tickID {
			return m, nil
		}
		next := m.step(+1)
		if next == m.Pos() || (m.playUntil >= 0 && m.Pos() >= m.playUntil) {
			m.playing, m.playUntil = false, -1
			return m, nil
		}
		m.moveTo(next)
		m.followPoint()
		if m.playUntil >= 0 && next >= m.playUntil {
			m.playing, m.playUntil = false, -1
			return m, nil
		}
		return m, m.tick()
	case forkTickMsg:
		if m.job == nil || msg.id != m.job.id {
			return m, nil
		}
		return m, m.job.tick()
	case forkDoneMsg:
		return m.forkDone(msg), nil
	case LecturerMsg:
		return m.lecturerAt(msg), nil
	case liveMsg:
		m = m.liveRun(msg)
		if msg.final {
			return m, nil
		}
		return m, m.opts.Live.wait()
	case liveFaultMsg:
		if msg.err != nil {
			m.status = fmt.Sprintf("%s: %v", msg.command, msg.err)
		} else {
			m.status = msg.out
		}
		return m, nil
	case tea.KeyPressMsg:
		if m.job != nil {
			return m.keyWhileForking(msg)
		}
		if m.prompt != promptNone {
			return m.promptKey(msg)
		}
		return m.key(msg)
	case tea.PasteMsg:
		if m.prompt != promptNone {
			m.promptText += strings.ReplaceAll(msg.Content, "\n", " ")
		}
		return m, nil
	}
	return m, nil
}

// keyWhileForking: while a fork records, q and ctrl+c quit (cancelling it), esc cancels
// it, and other keys wait.
func (m Model) keyWhileForking(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	switch {
	case key.Matches(msg, m.keys.Quit):
		m.job.cancel()
		return m, tea.Quit
	case key.Matches(msg, m.keys.Esc):
		m.job.cancel()
		m.job.cancelled = true
	}
	return m, nil
}

func (m Model) key(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	k := m.keys
	m.status = ""
	if m.quizOn() && m.cur == 0 {
		if next, cmd, handled := m.quizKey(msg); handled {
			return next, cmd
		}
	}
	if m.opts.Classroom {
		if handled, next := m.classroomKey(msg); handled {
			return next, nil
		}
	}
	manual := func(i int) {
		m.moveTo(i)
		m.pointStep = -1
		m.playUntil = -1
	}
	switch {
	case key.Matches(msg, k.Quit):
		return m, tea.Quit
	case key.Matches(msg, k.Next):
		manual(m.step(+1))
	case key.Matches(msg, k.Prev):
		manual(m.step(-1))
	case key.Matches(msg, k.Next10):
		manual(m.Pos() + 10)
	case key.Matches(msg, k.Prev10):
		manual(m.Pos() - 10)
	case key.Matches(msg, k.First):
		manual(0)
	case key.Matches(msg, k.Last):
		manual(m.Run().Len() - 1)
	case key.Matches(msg, k.Play):
		m.playing = !m.playing
		m.playUntil = -1
		if m.playing {
			if m.Pos() >= m.Run().Len()-1 {
				m.moveTo(0)
			}
			m.tickID++
			return m, m.tick()
		}
	case key.Matches(msg, k.Faster):
		m.speed = min(m.speed+1, len(speeds)-1)
		m.status = fmt.Sprintf("speed %d events/s", speeds[m.speed])
	case key.Matches(msg, k.Slower):
		m.speed = max(m.speed-1, 0)
		m.status = fmt.Sprintf("speed %d events/s", speeds[m.speed])
	case key.Matches(msg, k.JumpKind):
		m.jump = (m.jump + 1) % len(m.groups())
		m.status = "] and [ jump to: " + m.jumpGroup().Name
	case key.Matches(msg, k.JumpNext), key.Matches(msg, k.JumpPrev):
		dir := 1
		if key.Matches(msg, k.JumpPrev) {
			dir = -1
		}
		g := m.jumpGroup()
		if i := m.find(dir, g.has); i >= 0 {
			manual(i)
		} else {
			m.status = fmt.Sprintf("no %s event %s", m.jumpGroup().Name, map[int]string{1: "after this one", -1: "before this one"}[dir])
		}
	case key.Matches(msg, k.SearchNext), key.Matches(msg, k.SearchPrev):
		if m.search == "" {
			m.status = "no search yet: / to search"
			break
		}
		dir := 1
		if key.Matches(msg, k.SearchPrev) {
			dir = -1
		}
		m.searchFrom(dir, &manual)
	case key.Matches(msg, k.CheckNext), key.Matches(msg, k.CheckPrev):
		checks := m.Run().Checks
		if len(checks) == 0 {
			m.status = "the checkers found nothing to jump to"
			break
		}
		if key.Matches(msg, k.CheckPrev) {
			m.checkIdx = (m.checkIdx - 1 + len(checks)) % len(checks)
		} else {
			m.checkIdx = (m.checkIdx + 1) % len(checks)
		}
		c := checks[m.checkIdx]
		if c.Event >= 0 {
			manual(c.Event)
		}
		m.status = fmt.Sprintf("check %d/%d: %s began here", m.checkIdx+1, len(checks), c.V.Anomaly)
	case key.Matches(msg, k.Panes):
		if n, err := strconv.Atoi(msg.String()); err == nil && n >= 1 && n <= numPanes {
			m.hidden[n-1] = !m.hidden[n-1]
			state := "shown"
			if m.hidden[n-1] {
				state = "hidden"
			}
			m.status = paneNames[n-1] + " " + state
		}
	case key.Matches(msg, k.Goto):
		m.openPrompt(promptGoto, "")
	case key.Matches(msg, k.Search):
		m.openPrompt(promptSearch, "")
	case key.Matches(msg, k.Filter):
		m.openPrompt(promptFilter, strings.Join(append(slices.Clone(m.filterKinds), m.filterNodes...), " "))
	case key.Matches(msg, k.Fault):
		if m.Run().Len() == 0 {
			m.status = "no events to fork at"
			break
		}
		m.playing = false
		m.openPrompt(promptFault, "")
	case key.Matches(msg, k.Save):
		if m.Run().Session != nil || m.opts.Live != nil {
			// Its transcript would be the scenario without the clients' requests.
			m.status = "a served session is kept in its session file (mqsim serve --session); mqsim tui SESSION opens it"
			break
		}
		m.openPrompt(promptSave, m.defaultSavePath())
	case key.Matches(msg, k.Branch):
		if len(m.runs) == 1 {
			m.status = "only one branch: x makes a fork"
			break
		}
		m.cur = (m.cur + 1) % len(m.runs)
		m.pointStep = -1
		m.refresh()
		m.status = "branch " + m.Run().Name
	case key.Matches(msg, k.Present):
		m.present = !m.present
		m.pointStep = -1
		if m.present {
			m.status = "presenter mode: pgdn or . for the next narrated point"
		}
	case key.Matches(msg, k.PointNext), key.Matches(msg, k.PointPrev):
		return m.point(key.Matches(msg, k.PointNext))
	case key.Matches(msg, k.Help):
		m.help.ShowAll = !m.help.ShowAll
	case key.Matches(msg, k.Esc):
		switch {
		case m.help.ShowAll:
			m.help.ShowAll = false
		case m.playing:
			m.playing = false
		case len(m.filterKinds)+len(m.filterNodes) > 0 || m.search != "":
			m.filterKinds, m.filterNodes, m.search = nil, nil, ""
			m.status = "filter and search cleared"
		}
	}
	return m, nil
}

// visible reports whether event e passes the timeline filters.
func (m *Model) visible(e sim.Event) bool {
	if len(m.filterKinds) > 0 && !slices.ContainsFunc(m.filterKinds, func(k string) bool { return kindMatches(m.groups(), k, e) }) {
		return false
	}
	if len(m.filterNodes) > 0 && !slices.Contains(m.filterNodes, e.Node) && !slices.Contains(m.filterNodes, e.Peer) {
		return false
	}
	return true
}

// kindMatches reports whether a filter word selects event e: its kind itself, or the
// name of a jump group e belongs to.
func kindMatches(groups []jumpGroup, word string, e sim.Event) bool {
	if word == e.Kind {
		return true
	}
	for _, g := range groups {
		if g.Name == word && g.has(e) {
			return true
		}
	}
	return false
}

// step is the next (dir=+1) or previous visible event, or the current one at an end.
func (m *Model) step(dir int) int {
	if i := m.find(dir, func(sim.Event) bool { return true }); i >= 0 {
		return i
	}
	return m.Pos()
}

// find is the nearest visible event in direction dir that satisfies ok, or -1.
func (m *Model) find(dir int, ok func(sim.Event) bool) int {
	ev := m.Run().Events
	for i := m.Pos() + dir; i >= 0 && i < len(ev); i += dir {
		if m.visible(ev[i]) && ok(ev[i]) {
			return i
		}
	}
	return -1
}

// narrated lists the script steps that have narration (its prose: a step that only asks
// a question or reveals answers is not a point of its own; mqsim quiz asks them).
func (r *Run) narrated() []int {
	var ks []int
	for k, sp := range r.Steps {
		if len(script.Prose(sp.Step.Narration)) > 0 {
			ks = append(ks, k)
		}
	}
	return ks
}

// currentPoint is the narrated script step for the current position: the one the
// presenter moved to, else the last narrated step at or before the step that emitted
// the current event.
func (m *Model) currentPoint() int {
	if m.pointStep >= 0 {
		return m.pointStep
	}
	r := m.Run()
	if r.Len() == 0 {
		return -1
	}
	k := r.StepOf(m.Pos())
	best := -1
	for _, n := range r.narrated() {
		if n <= k {
			best = n
		}
	}
	return best
}

// followPoint keeps the presenter's narrated step in line with play.
func (m *Model) followPoint() {
	if m.pointStep >= 0 && m.Run().StepOf(m.Pos()) > m.pointStep {
		m.pointStep = -1
	}
}

// point moves to the next or previous narrated point: the presenter's clicker. Moving
// forward plays the step's events up to its end.
func (m Model) point(forward bool) (Model, tea.Cmd) {
	r := m.Run()
	ns := r.narrated()
	if len(ns) == 0 {
		m.status = "this scenario has no narration"
		return m, nil
	}
	cur := m.currentPoint()
	target := -1
	if forward {
		for _, n := range ns {
			if n > cur {
				target = n
				break
			}
		}
	} else {
		for _, n := range ns {
			if n < cur {
				target = n
			}
		}
	}
	if target < 0 {
		m.status = "no more narrated points"
		if !forward {
			m.status = "at the first narrated point"
		}
		return m, nil
	}
	m.present = true
	m.pointStep = target
	sp := r.Steps[target]
	if sp.End > sp.First {
		m.moveTo(sp.First)
		if forward && sp.End-1 > sp.First {
			m.playing, m.playUntil = true, sp.End-1
			m.tickID++
			return m, m.tick()
		}
	} else if sp.End > 0 {
		m.moveTo(sp.End - 1)
	}
	m.playing, m.playUntil = false, -1
	return m, nil
}

func (m *Model) openPrompt(kind promptKind, text string) {
	m.prompt, m.promptText = kind, text
}

func (m Model) promptKey(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	switch msg.String() {
	case "esc":
		m.prompt, m.promptText = promptNone, ""
		return m, nil
	case "ctrl+c":
		return m, tea.Quit
	case "enter":
		kind, text := m.prompt, strings.TrimSpace(m.promptText)
		m.prompt, m.promptText = promptNone, ""
		return m.submit(kind, text)
	case "backspace":
		if r := []rune(m.promptText); len(r) > 0 {
			m.promptText = string(r[:len(r)-1])
		}
		return m, nil
	case "ctrl+u":
		m.promptText = ""
		return m, nil
	case "tab":
		if m.prompt == promptFault {
			m.promptText = completeFault(m.promptText)
		}
		return m, nil
	}
	if t := msg.Key().Text; t != "" && msg.Mod&^tea.ModShift == 0 {
		if len(m.promptText) < 200 {
			m.promptText += t
		}
	}
	return m, nil
}

// completeFault completes a fault verb from its first letters.
func completeFault(text string) string {
	if strings.Contains(text, " ") {
		return text
	}
	for _, v := range sim.Verbs {
		if text != "" && strings.HasPrefix(string(v.Verb), text) {
			return string(v.Verb) + " "
		}
	}
	return text
}

func (m Model) submit(kind promptKind, text string) (Model, tea.Cmd) {
	manual := func(i int) {
		m.moveTo(i)
		m.pointStep = -1
	}
	switch kind {
	case promptGoto:
		i, err := m.parseGoto(text)
		if err != nil {
			m.status = err.Error()
			break
		}
		manual(i)
	case promptSearch:
		m.search = text
		if text != "" {
			m.searchFrom(1, &manual)
		}
	case promptFilter:
		m.filterKinds, m.filterNodes = nil, nil
		names := m.Run().NodeNames()
		for _, w := range strings.Fields(strings.ReplaceAll(text, ",", " ")) {
			if slices.Contains(names, w) {
				m.filterNodes = append(m.filterNodes, w)
			} else {
				m.filterKinds = append(m.filterKinds, w)
			}
		}
		if text == "" {
			m.status = "filter cleared"
		} else if m.Run().Len() > 0 && !m.visible(m.Run().Events[m.Pos()]) {
			if i := m.find(1, func(sim.Event) bool { return true }); i >= 0 {
				manual(i)
			}
		}
	case promptFault:
		return m.fork(text)
	case promptSave:
		m = m.save(text)
	}
	return m, nil
}

func (m *Model) parseGoto(text string) (int, error) {
	r := m.Run()
	switch {
	case text == "":
		return m.Pos(), nil
	case text == "end" || text == "$":
		return r.Len() - 1, nil
	}
	if n, err := strconv.Atoi(strings.ReplaceAll(text, ",", "")); err == nil {
		i := r.EventAtStep(uint64(max(n, 0)))
		if n < 1 || i < 0 {
			return 0, fmt.Errorf("no step %d: the trace runs from step %s to %s", n, r.stepName(0), r.stepName(r.Len()-1))
		}
		return i, nil
	}
	d, err := sim.ParseDuration(strings.TrimPrefix(text, "t="))
	if err != nil {
		return 0, fmt.Errorf("go to what? a step number (412) or a time (t=1.5s)")
	}
	i := r.eventAtTime(sim.Time(d))
	if i < 0 && r.Len() == 0 {
		return 0, fmt.Errorf("the run has no events")
	}
	if i < 0 {
		return 0, fmt.Errorf("the run ends at %s, before %s", r.Events[r.Len()-1].Time, sim.Time(d))
	}
	return i, nil
}

// fork breaks the run at the current event with a fault: it works the fork out at once
// and records it in the background (forkJob), so that the UI keeps answering keys while
// the script replays; forkDone switches to the new branch when the recording comes back.
func (m Model) fork(text string) (Model, tea.Cmd) {
	if text == "" {
		return m, nil
	}
	if m.opts.Live != nil {
		return m.liveFault(text)
	}
	if m.job != nil {
		m.status = fmt.Sprintf("%s is still being recorded: esc cancels it", m.job.name)
		return m, nil
	}
	act, err := sim.ParseAction(strings.Fields(text))
	if err != nil {
		m.status = err.Error()
		return m, nil
	}
	plan, err := PlanFork(m.Run(), m.Pos(), act)
	if err != nil {
		m.status = err.Error()
		return m, nil
	}
	m.forks++
	ctx, cancel := context.WithCancel(context.Background())
	job := &forkJob{id: m.forks, name: fmt.Sprintf("fork-%d", m.forks), cancel: cancel}
	job.record = func() tea.Msg {
		run, err := plan.Record(ctx, job.name, func(p Progress) { job.progress.Store(&p) })
		return forkDoneMsg{id: job.id, run: run, err: err}
	}
	m.job = job
	m.status = ""
	return m, tea.Batch(job.record, job.tick())
}

// forkJob is a fork being recorded off the UI loop. The recording runs in one goroutine
// of its own, single-threaded and deterministic as any run; the UI reads its progress.
type forkJob struct {
	id        int
	name      string
	record    func() tea.Msg // the recording, as a tea.Cmd: run once, off the UI loop
	cancel    context.CancelFunc
	cancelled bool
	progress  atomic.Pointer[Progress]
}

// forkDoneMsg brings a fork's recording back to the UI loop.
type forkDoneMsg struct {
	id  int
	run *Run
	err error
}

// forkTickMsg redraws a fork's progress line.
type forkTickMsg struct{ id int }

func (j *forkJob) tick() tea.Cmd {
	id := j.id
	return tea.Tick(100*time.Millisecond, func(time.Time) tea.Msg { return forkTickMsg{id} })
}

// progressLine is the status line while the fork records.
func (j *forkJob) progressLine() string {
	if j.cancelled {
		return fmt.Sprintf("cancelling %s...", j.name)
	}
	p := j.progress.Load()
	if p == nil {
		return fmt.Sprintf("recording %s: starting (esc cancels)", j.name)
	}
	return fmt.Sprintf("recording %s: command %d/%d, %s events, t=%s (esc cancels)", j.name, p.Command, p.Commands, thousands(int(p.Steps)), p.Now)
}

// forkDone switches to a fork whose recording came back (or says why it did not).
func (m Model) forkDone(msg forkDoneMsg) Model {
	job := m.job
	if job == nil || job.id != msg.id {
		return m
	}
	m.job = nil
	switch {
	case job.cancelled:
		m.status = fmt.Sprintf("%s cancelled", job.name)
		return m
	case msg.err != nil:
		m.status = msg.err.Error()
		return m
	}
	run := msg.run
	at := run.Fork.At
	m.runs = append(slices.Clip(m.runs), run)
	t := run.Fork.Action.At
	next := at
	for i := at + 1; i < run.Len(); i++ {
		if run.Events[i].Time >= t {
			next = i
			break
		}
	}
	m.pos = append(slices.Clip(m.pos), next)
	m.cur = len(m.runs) - 1
	m.pointStep = -1
	m.refresh()
	m.status = fmt.Sprintf("%s: %s at %s; b switches branch, w saves it", job.name, run.Fork.Action.Command(), t)
	if run.Err != nil {
		m.status = fmt.Sprintf("%s: the script stopped: %v", job.name, run.Err)
	} else if len(run.Events) > 0 && run.Events[run.Len()-1].Time < t {
		m.status = fmt.Sprintf("%s: the script never runs the world to %s: the fault does not happen", job.name, t)
	}
	return m
}

func (m *Model) defaultSavePath() string {
	r := m.Run()
	base := strings.TrimSuffix(filepath.Base(r.Script.Name), ".txt")
	name := base + ".txt"
	if r.Fork != nil {
		name = fmt.Sprintf("%s-%s.txt", base, r.Name)
	}
	if m.lastSaveDir != "" {
		return filepath.Join(m.lastSaveDir, name)
	}
	return name
}

func (m Model) save(path string) Model {
	if path == "" {
		return m
	}
	if err := os.WriteFile(path, []byte(m.Run().Transcript()), 0o644); err != nil {
		m.status = "save: " + err.Error()
		return m
	}
	m.lastSaveDir = filepath.Dir(path)
	m.status = fmt.Sprintf("saved %s to %s: mqsim run %s replays it", m.Run().Name, path, path)
	return m
}

// thousands renders n with commas: 2,905.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// WithSize is the model laid out for a w x h terminal.
func (m Model) WithSize(w, h int) Model {
	m.width, m.height = max(w, 1), max(h, 1)
	return m
}

// At is the model at event i (0-based, clamped).
func (m Model) At(i int) Model {
	m.moveTo(i)
	return m
}
