package tui

import (
	"fmt"
	"strings"

	"slices"

	"github.com/charmbracelet/x/ansi"

	"mqsim/model/queue"
	"mqsim/scenarios/runner"
	"mqsim/sim"
)

// queueMode reports whether the run judges a queue broker (and has no log cluster).
func (r *Run) queueMode() bool { return r.Kind == runner.QueueBroker }

// brokerPane is the Cluster pane of a queue-mode run: the nodes (with the quorum queues
// each leads), then each queue: who acts for it, its counts, the head of its ready
// messages, each consumer's prefetch window with the deliveries it holds, SQS messages in
// flight; then the exchanges and their bindings.
func (m Model) brokerPane(w int) pane {
	st := &m.state
	p := pane{id: PaneCluster, title: "Queues · ★ acting node  ● unacked ○ free prefetch  ↻ redelivered"}
	var nodes []string
	for _, n := range st.Nodes {
		if n.Role == RoleProducer || n.Role == RoleConsumer {
			continue
		}
		nodes = append(nodes, m.nodeStatus(n, m.isolated(n.Name)))
	}
	if len(nodes) == 0 {
		p.summary = "no nodes yet"
		p.lines = []string{p.summary}
		return p
	}
	p.lines = append(p.lines, strings.Join(nodes, "  "))
	var sums []string
	for _, q := range st.Queues {
		p.lines = append(p.lines, m.queueHead(q))
		if q.Stale {
			sums = append(sums, fmt.Sprintf("%s no leader (ready %d unacked %d)", q.Name, q.Ready, q.Unacked))
		} else {
			sums = append(sums, fmt.Sprintf("%s %s ready %d %s %d", q.Name, actingShort(q), q.Ready, unackedWord(q), q.Unacked))
		}
		if q.Ready == 0 && q.Unacked == 0 {
			// An idle queue takes one line: its consumers' windows follow its counts.
			var cs []string
			for _, c := range q.Consumers {
				cs = append(cs, fmt.Sprintf("%s ch%d %s", c.Name, c.Channel, idleWindow(c)))
			}
			if len(cs) > 0 {
				p.lines[len(p.lines)-1] += " · " + strings.Join(cs, ", ")
			}
			continue
		}
		if q.Ready > 0 {
			p.lines = append(p.lines, m.readyLine(q, w))
		}
		p.lines = append(p.lines, m.deliveryLines(q, w)...)
	}
	if len(st.Queues) == 0 {
		p.lines = append(p.lines, m.st.dim.Render("no queues declared yet"))
	}
	for _, x := range st.Exchanges {
		line := fmt.Sprintf("exchange %s %s: ", x.Name, x.Kind)
		if len(x.Bindings) == 0 {
			line += "no bindings"
		} else {
			line += strings.Join(x.Bindings, ", ")
		}
		if x.Alternate != "" {
			line += " · alternate " + x.Alternate
		}
		p.lines = append(p.lines, line)
	}
	p.summary = strings.Join(nodes, " ")
	if len(sums) > 0 {
		p.summary = strings.Join(sums, " · ")
	}
	return p
}

// unackedWord is what a queue calls its delivered, unsettled messages.
func unackedWord(q QueueView) string {
	if q.Type == "sqs" || q.Type == "fifo" {
		return "in flight"
	}
	return "unacked"
}

// actingShort is "★q1 t2" for a quorum queue's leader, "on q1" for a classic queue.
func actingShort(q QueueView) string {
	if q.Term > 0 {
		return fmt.Sprintf("★%s t%d", q.Acting, q.Term)
	}
	return "on " + q.Acting
}

// queueHead is a queue's first line: name, type, who acts for it, counts, where dead
// letters go.
func (m Model) queueHead(q QueueView) string {
	var b strings.Builder
	b.WriteString(m.st.committed.Render(q.Name) + " " + q.Type)
	switch {
	case q.Stale && (len(q.Where) > 1 || q.Term > 0):
		b.WriteString(m.st.warn.Render(" · no leader"))
		if q.Acting != "" {
			b.WriteString(fmt.Sprintf(" (last: %s t%d)", q.Acting, q.Term))
		}
	case q.Stale:
		b.WriteString(m.st.warn.Render(fmt.Sprintf(" · %s is down: its last word", strings.Join(q.Where, " "))))
	case len(q.Where) > 1 || q.Term > 0:
		b.WriteString(fmt.Sprintf(" · leader ★%s t%d", q.Acting, q.Term))
		if !slices.Equal(q.Where, m.Run().QueueNodes) {
			b.WriteString(" of " + strings.Join(q.Where, " ")) // members on some nodes only
		}
	default:
		b.WriteString(" · on " + q.Acting)
	}
	fmt.Fprintf(&b, " · ready %d · %s %d", q.Ready, unackedWord(q), q.Unacked)
	s := q.Stats
	if dl := s.DeadLettered + s.Redriven; dl > 0 || q.DeadLetterTo != "" {
		fmt.Fprintf(&b, " · dead-lettered %d", dl)
		if q.DeadLetterTo != "" {
			b.WriteString(" -> " + q.DeadLetterTo)
		}
	}
	if s.Dropped > 0 {
		fmt.Fprintf(&b, " · dropped %d", s.Dropped)
	}
	if s.Expired > 0 {
		fmt.Fprintf(&b, " · expired %d", s.Expired)
	}
	return b.String()
}

// fitList joins items after prefix as far as they fit in w cells, and says how many
// more there are ("… +3"); total counts the items not in the list too.
func fitList(prefix string, items []string, total, w int) string {
	line := prefix
	for i, it := range items {
		more := ""
		if rest := total - i - 1; rest > 0 {
			more = fmt.Sprintf(" … +%d", rest)
		}
		if i > 0 && ansi.StringWidth(line+" "+it+more) > w {
			return line + fmt.Sprintf(" … +%d", total-i)
		}
		line += " " + it
	}
	if total > len(items) {
		line += fmt.Sprintf(" … +%d", total-len(items))
	}
	return line
}

// readyLine shows the head of the queue: the next messages to go, ↻ on those that were
// delivered before.
func (m Model) readyLine(q QueueView, w int) string {
	var items []string
	for _, r := range q.ReadyHead {
		if r.Delivered {
			items = append(items, "↻"+r.Label)
		} else {
			items = append(items, r.Label)
		}
	}
	return fitList("  ready:", items, q.Ready, w)
}

// window draws a consumer's prefetch window: "prefetch 2: ●○", "prefetch 2: ●● full",
// "prefetch 50: 7 unacked", "no prefetch limit: 3 unacked", "auto-ack".
func window(c QConsumerView) string {
	switch {
	case c.AutoAck:
		return "auto-ack: settled on sending"
	case c.Prefetch == 0:
		return fmt.Sprintf("no prefetch limit: %d unacked", c.Unacked)
	case c.Prefetch > 10:
		s := fmt.Sprintf("prefetch %d: %d unacked", c.Prefetch, c.Unacked)
		if c.Unacked >= c.Prefetch {
			s += " full"
		}
		return s
	}
	used := min(c.Unacked, c.Prefetch)
	s := fmt.Sprintf("prefetch %d: %s%s", c.Prefetch, strings.Repeat("●", used), strings.Repeat("○", c.Prefetch-used))
	if c.Unacked >= c.Prefetch {
		s += " full"
	}
	return s
}

// idleWindow is a consumer's window when it holds nothing: "○○", "no limit", "auto-ack".
func idleWindow(c QConsumerView) string {
	switch {
	case c.AutoAck:
		return "auto-ack"
	case c.Prefetch == 0:
		return "no limit"
	case c.Prefetch > 10:
		return fmt.Sprintf("prefetch %d", c.Prefetch)
	}
	return strings.Repeat("○", c.Prefetch)
}

// outLabel is an unsettled delivery: its message, delivery tag, ↻ when redelivered.
func outLabel(o OutView) string {
	s := fmt.Sprintf("%s tag %d", o.Label, o.Tag)
	if o.Redelivered {
		s += " ↻"
	}
	return s
}

// deliveryLines are a queue's consumers, each with its window and the deliveries it
// holds, then the messages in flight without a channel (SQS receives).
func (m Model) deliveryLines(q QueueView, w int) []string {
	var lines []string
	shown := 0
	for _, c := range q.Consumers {
		var items []string
		n := 0
		for _, o := range q.Out {
			if o.Channel == c.Channel && o.Handle == "" {
				items = append(items, outLabel(o)+",")
				n++
			}
		}
		shown += max(n, c.Unacked) // its line counts the deliveries past the row's bound too
		if len(items) > 0 {
			items[len(items)-1] = strings.TrimSuffix(items[len(items)-1], ",")
		}
		head := fmt.Sprintf("  %s ch%d %s", c.Name, c.Channel, window(c))
		total := n
		if len(q.Out) < q.Unacked {
			total = max(n, c.Unacked) // some of its deliveries are past the row's bound
		}
		if len(items) == 0 {
			lines = append(lines, head)
			continue
		}
		// The deliveries it holds follow the window, or go on a line of their own when
		// they do not all fit after it.
		if one := fitList(head+":", items, total, w); !strings.Contains(one, " … +") || n == 0 {
			lines = append(lines, one)
		} else {
			lines = append(lines, head, fitList("   ", items, total, w))
		}
	}
	for _, o := range q.Out {
		switch {
		case o.Handle != "":
			shown++
			lines = append(lines, fmt.Sprintf("  in flight: %s -> %s as %s (receive %d) until %s", o.Label, o.Consumer, o.Handle, o.Receives, o.VisibleUntil))
		case !hasChannel(q, o.Channel):
			shown++
			lines = append(lines, fmt.Sprintf("  unacked: %s -> %s ch%d tag %d", o.Label, o.Consumer, o.Channel, o.Tag))
		}
	}
	if rest := q.Unacked - shown; rest > 0 {
		lines = append(lines, m.st.dim.Render(fmt.Sprintf("  … %d more %s", rest, unackedWord(q))))
	}
	return lines
}

func hasChannel(q QueueView, ch int64) bool {
	for _, c := range q.Consumers {
		if c.Channel == ch {
			return true
		}
	}
	return false
}

// queueClientLines are the queue broker's clients for the Clients pane, with a summary
// of each.
func (m Model) queueClientLines() (lines, sums []string) {
	for _, c := range m.state.QClients {
		status := "●"
		if c.Status != sim.Up {
			status = m.st.down.Render("✖ " + c.Status.String())
			if c.Status == sim.Paused {
				status = m.st.warn.Render("◌ paused")
			}
		}
		switch c.Kind {
		case queue.KindPublisher:
			s := c.Pub
			line := fmt.Sprintf("%s %s published %d · confirmed %d · nacked %d · unknown %d · in flight %d",
				c.Name, status, s.Published, s.Confirmed, s.Nacked, s.Unknown, c.InFlight)
			if s.Returned > 0 {
				line += fmt.Sprintf(" · returned %d", s.Returned)
			}
			lines = append(lines, line)
			sums = append(sums, fmt.Sprintf("%s confirmed %d/%d unknown %d", c.Name, s.Confirmed, s.Published, s.Unknown))
		case queue.KindConsumer:
			ch := "no channel"
			if c.Channel != 0 {
				ch = fmt.Sprintf("ch%d", c.Channel)
			}
			line := fmt.Sprintf("%s %s consumer of %s %s · delivered %d", c.Name, status, c.Queue, ch, c.Delivered)
			if c.Redelivered > 0 {
				line += fmt.Sprintf(" (%d redelivered)", c.Redelivered)
			}
			line += fmt.Sprintf(" · processed %d", c.Processed)
			if c.Failed > 0 {
				line += fmt.Sprintf(" · failed %d", c.Failed)
			}
			if c.AcksLost > 0 {
				line += fmt.Sprintf(" · acks lost %d", c.AcksLost)
			}
			if c.Dropped > 0 {
				line += fmt.Sprintf(" · buffer dropped %d", c.Dropped)
			}
			line += m.working(c)
			lines = append(lines, line)
			sums = append(sums, fmt.Sprintf("%s processed %d", c.Name, c.Processed))
		case queue.KindWorker:
			line := fmt.Sprintf("%s %s worker on %s · received %d (%d calls) · processed %d", c.Name, status, c.Queue, c.Received, c.Receives, c.Processed)
			if c.Failed > 0 {
				line += fmt.Sprintf(" · failed %d", c.Failed)
			}
			line += fmt.Sprintf(" · deleted %d", c.Deleted)
			if c.StaleDeletes > 0 {
				line += fmt.Sprintf(" · stale deletes %d", c.StaleDeletes)
			}
			line += m.working(c)
			lines = append(lines, line)
			sums = append(sums, fmt.Sprintf("%s processed %d", c.Name, c.Processed))
		}
	}
	return lines, sums
}

// working says what a consumer or worker is busy with.
func (m Model) working(c QueueClientView) string {
	s := ""
	if c.Current != "" {
		s += " · processing " + c.Current
	}
	if c.Buffered > 0 {
		s += fmt.Sprintf(" · %d buffered", c.Buffered)
	}
	return s
}
