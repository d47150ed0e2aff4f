package tui

import (
	"fmt"
	"slices"
	"strings"

	"mqsim/checker"
	"mqsim/model/queue"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
	"mqsim/sim"
)

// Queue mode: the recorder samples the queue broker's read-only views (model/queue) into
// the same view model, as it does the log cluster's.

// queueFlavour is the flavour the script's queue-broker command asks for ("rabbit" by
// default), as --set may override it; "" without a queue-broker command.
func queueFlavour(s *script.Script, opts runner.Options) string {
	flavour := ""
	for _, st := range s.Steps {
		if st.Cmd != "queue-broker" {
			continue
		}
		flavour = "rabbit"
		for _, a := range st.Args {
			if a.Key == "flavour" && len(a.Vals) == 1 {
				flavour = a.Vals[0]
			}
		}
		break
	}
	if flavour == "" {
		return ""
	}
	for _, kv := range opts.Set {
		if v, ok := strings.CutPrefix(kv, "flavour="); ok {
			flavour = v
		}
	}
	return flavour
}

// queueChecks places the checkers' findings on a queue-mode run: the verdict of the
// script's last check command (with the options it gave), or, when the script has none,
// the queue-mode checker's with its defaults (at-least-once, no order promised).
func (r *Run) queueChecks(rn *runner.Runner) {
	var rep checker.Report
	if reps := rn.Reports(); len(reps) > 0 {
		rep = reps[len(reps)-1]
	} else {
		var err error
		if rep, err = checker.CheckQueue(rn.QueueBroker().History.History(), checker.QueueOptions{}); err != nil {
			return
		}
	}
	r.Report = &rep
	for _, v := range rep.Violations {
		r.Checks = append(r.Checks, Check{V: v, Event: r.eventAtTime(sim.Time(v.Time))})
	}
	slices.SortStableFunc(r.Checks, func(a, b Check) int { return checkRank(a.V.Anomaly) - checkRank(b.V.Anomaly) })
}

// queueRole is what a node of a queue-mode run is.
func queueRole(q *queue.Cluster, id sim.NodeID) Role {
	if slices.Contains(q.IDs, id) {
		return RoleQueueNode
	}
	for _, cl := range q.Clients {
		if cl.ID != id {
			continue
		}
		if cl.Kind == queue.KindPublisher {
			return RoleProducer
		}
		return RoleConsumer
	}
	return RoleNode
}

// queueLeads lists the quorum queues a queue node acts for, with their Raft terms:
// "★orders t2 ★jobs t1"; "" when it leads none (or is down).
func queueLeads(q *queue.Cluster, name string) string {
	n := q.Node(name)
	if n == nil {
		return ""
	}
	var out []string
	for _, qc := range q.Topo.Queues {
		if qc.Type != queue.Quorum {
			continue
		}
		if v, ok := n.Queue(qc.Name); ok && v.Active {
			out = append(out, fmt.Sprintf("★%s t%d", qc.Name, v.Term))
		}
	}
	return strings.Join(out, " ")
}

// queueType names a queue's kind as a student knows it: classic, quorum, sqs, fifo.
func queueType(qc queue.QueueConfig, flavour string) string {
	switch {
	case qc.FIFO:
		return "fifo"
	case flavour == "sqs":
		return "sqs"
	}
	return string(qc.Type)
}

// deadLetterTo says where a queue's dead letters go: its dead-letter exchange, or the
// queue its redrive policy (or a dead-letter key on the default exchange) names.
func deadLetterTo(qc queue.QueueConfig) string {
	switch {
	case qc.DLQ != "" && qc.MaxReceive > 0:
		return qc.DLQ
	case qc.DLX != "":
		return qc.DLX
	case qc.DLXKey != "":
		return qc.DLXKey // the default exchange routes by queue name
	}
	return ""
}

// bindingText renders a binding as its exchange's kind reads it: "eu -> eu-orders",
// "-> audit" (fanout), "all(format=pdf type=report) -> pdf-reports" (headers).
func bindingText(b queue.Binding) string {
	switch {
	case len(b.Headers) > 0:
		var hs []string
		for _, h := range b.Headers {
			hs = append(hs, h.Key+"="+h.Value)
		}
		return fmt.Sprintf("%s(%s) -> %s", b.Match, strings.Join(hs, " "), b.Queue)
	case b.Key == "":
		return "-> " + b.Queue
	}
	return b.Key + " -> " + b.Queue
}

// sampleQueues records what changed in the queue broker: its topology's exchanges, each
// queue as the node acting for it has it, and its clients.
func (rc *recorder) sampleQueues(q *queue.Cluster) {
	// Exchanges change only when the topology does (Declare makes a new one).
	if q.Topo != rc.topo {
		rc.topo = q.Topo
		for i, x := range q.Topo.Exchanges {
			xv := ExchangeView{Name: x.Name, Kind: string(x.Kind), Alternate: x.Alternate}
			for _, b := range q.Topo.Bindings {
				if b.Exchange == x.Name {
					xv.Bindings = append(xv.Bindings, bindingText(b))
				}
			}
			if i >= len(rc.cur.Exchanges) || !xv.equal(rc.cur.Exchanges[i]) {
				rc.emit(chExchange, i, xv, "")
			}
		}
	}
	for i, qc := range q.Topo.Queues {
		var prev QueueView
		has := i < len(rc.cur.Queues)
		if has {
			prev = rc.cur.Queues[i]
		}
		qv := rc.queueView(q, qc, prev, has)
		if !has || !qv.equal(prev) {
			node := qv.Acting
			if node == "" {
				node = prev.Acting
			}
			rc.emit(chQueue, i, qv, node)
			rc.pending[len(rc.pending)-1].tp = qv.Name
		}
	}
	for i, cl := range q.Clients {
		var prev QueueClientView
		if i < len(rc.cur.QClients) {
			prev = rc.cur.QClients[i]
		}
		cv := queueClientView(q, cl, prev)
		if i >= len(rc.cur.QClients) || cv != prev {
			rc.emit(chQClient, i, cv, cl.Name)
		}
	}
}

// queueView reads one queue from the node acting for it. Slices equal to the previous
// row's are shared with it.
func (rc *recorder) queueView(q *queue.Cluster, qc queue.QueueConfig, prev QueueView, has bool) QueueView {
	node, v, ok := q.Acting(qc.Name)
	if !ok {
		if has {
			prev.Stale = true
			return prev
		}
		node = ""
	}
	qv := QueueView{Name: qc.Name, Type: queueType(qc, rc.run.Flavour), Where: []string{qc.Home}, Acting: node,
		DeadLetterTo: deadLetterTo(qc), Stale: !ok}
	if qc.Type == queue.Quorum {
		qv.Where = qc.Members
	}
	if !ok {
		return qv
	}
	if qc.Type == queue.Quorum {
		qv.Term = v.Term
	}
	st := v.State
	qv.Ready, qv.Unacked, qv.Stats = st.ReadyLen(), st.UnsettledLen(), st.Stats()
	for _, m := range st.ReadyHead(ReadyMax) {
		qv.ReadyHead = append(qv.ReadyHead, MsgView{Label: m.Label(), Delivered: m.AcquiredCount > 0})
	}
	for _, u := range st.UnsettledHead(UnackedMax) {
		ov := OutView{Label: u.Msg.Label(), Consumer: u.Consumer, Channel: u.Channel, Tag: u.Tag, Redelivered: u.Msg.AcquiredCount > 1,
			Handle: u.Handle, Receives: u.Msg.AcquiredCount}
		if u.Handle != "" {
			ov.VisibleUntil = u.Msg.VisibleAt
		}
		qv.Out = append(qv.Out, ov)
	}
	for _, c := range st.Consumers() {
		qv.Consumers = append(qv.Consumers, QConsumerView{Name: c.Name, Channel: c.Channel, Prefetch: c.Prefetch, AutoAck: c.AutoAck, Unacked: c.Unacked})
	}
	// Share what did not change: rows stay small in memory.
	if slices.Equal(qv.Where, prev.Where) {
		qv.Where = prev.Where
	}
	if slices.Equal(qv.ReadyHead, prev.ReadyHead) {
		qv.ReadyHead = prev.ReadyHead
	}
	if slices.Equal(qv.Out, prev.Out) {
		qv.Out = prev.Out
	}
	if slices.Equal(qv.Consumers, prev.Consumers) {
		qv.Consumers = prev.Consumers
	}
	return qv
}

// queueClientView reads one client's counters; a client that is down keeps its last.
func queueClientView(q *queue.Cluster, cl queue.Client, prev QueueClientView) QueueClientView {
	cv := QueueClientView{Name: cl.Name, Kind: cl.Kind, Status: q.W.Status(cl.ID)}
	switch n := q.W.Node(cl.ID).(type) {
	case *queue.Publisher:
		cv.Live, cv.Pub, cv.InFlight = true, n.Stats(), n.InFlight()
	case *queue.Consumer:
		s := n.Stats()
		cv.Live, cv.Queue, cv.Channel, cv.Buffered = true, n.Queue(), n.Channel(), n.Buffered()
		cv.Delivered, cv.Redelivered, cv.Processed, cv.Failed, cv.AcksLost, cv.Dropped = s.Delivered, s.Redelivered, s.Processed, s.Failed, s.AcksLost, s.Dropped
		if m, ok := n.Current(); ok {
			cv.Current = m.Label()
		}
	case *queue.Worker:
		s := n.Stats()
		cv.Live, cv.Queue = true, n.Queue()
		cv.Receives, cv.Received, cv.Processed, cv.Failed, cv.Deleted, cv.StaleDeletes = s.Receives, s.Received, s.Processed, s.Failed, s.Deleted, s.StaleDeletes
		if m, ok := n.Current(); ok {
			cv.Current = m.Label()
		}
	default:
		// Down: the last word, without what it was doing.
		last := prev
		last.Status, last.Live, last.Channel, last.Current, last.Buffered, last.InFlight = cv.Status, false, 0, "", 0, 0
		last.Name, last.Kind = cl.Name, cl.Kind
		return last
	}
	return cv
}

// queueSteps splits a queue row's change within one batch (one kernel step) event by
// event, where the trace says exactly what changed: from the row before the batch, each
// enqueue, deliver and ack of the queue by the node acting for it is applied in turn;
// at the first event of another kind (or the last one) the sampled row takes over. evs
// are the indexes in the batch of the queue's events by that node. It returns the rows
// and the number of events they cover (0: no split).
func queueSteps(prev, final QueueView, batch []sim.Event, evs []int) []QueueView {
	if len(evs) < 2 || prev.Stale || final.Stale || prev.Acting != final.Acting || prev.Term != final.Term {
		return nil
	}
	var rows []QueueView
	row := prev
	for _, i := range evs[:len(evs)-1] {
		next, ok := stepRow(row, batch[i])
		if !ok {
			break
		}
		rows = append(rows, next)
		row = next
	}
	return rows
}

// stepRow applies one enqueue, deliver or ack event to a queue row; ok is false for any
// other event, or when the row cannot say (a message beyond its bounds).
func stepRow(q QueueView, e sim.Event) (QueueView, bool) {
	switch e.Kind {
	case "enqueue":
		m := reQEnqueue.FindStringSubmatch(e.Detail)
		if m == nil {
			return q, false
		}
		if len(q.ReadyHead) == q.Ready && len(q.ReadyHead) < ReadyMax {
			q.ReadyHead = append(slices.Clip(q.ReadyHead), MsgView{Label: m[2]})
		}
		q.Ready++
		q.Stats.Enqueued++
		return q, true
	case "deliver":
		m := reQDeliver.FindStringSubmatch(e.Detail)
		if m == nil {
			return q, false
		}
		i := slices.IndexFunc(q.ReadyHead, func(r MsgView) bool { return r.Label == m[2] })
		if i < 0 || q.Ready == 0 {
			return q, false
		}
		q.ReadyHead = slices.Delete(slices.Clone(q.ReadyHead), i, i+1)
		q.Ready--
		q.Stats.Delivered++
		redelivered := m[6] != ""
		if redelivered {
			q.Stats.Redelivered++
		}
		if m[9] == ", auto-ack" {
			return q, true
		}
		ch, tag := atoi(m[4]), atoi(m[5])
		c := slices.IndexFunc(q.Consumers, func(c QConsumerView) bool { return c.Channel == ch })
		if c < 0 {
			return q, false
		}
		q.Consumers = slices.Clone(q.Consumers)
		q.Consumers[c].Unacked++
		receives := 1
		if redelivered {
			receives = int(atoi(m[7]))
		}
		if len(q.Out) == q.Unacked && len(q.Out) < UnackedMax {
			q.Out = append(slices.Clip(q.Out), OutView{Label: m[2], Consumer: m[3], Channel: ch, Tag: uint64(tag), Redelivered: redelivered, Receives: receives})
		}
		q.Unacked++
		return q, true
	case "ack":
		m := reQAck.FindStringSubmatch(e.Detail)
		if m == nil {
			return q, false
		}
		ch, tag := atoi(m[4]), uint64(atoi(m[5]))
		i := slices.IndexFunc(q.Out, func(o OutView) bool { return o.Channel == ch && o.Tag == tag && o.Handle == "" })
		c := slices.IndexFunc(q.Consumers, func(c QConsumerView) bool { return c.Channel == ch })
		if i < 0 || c < 0 {
			return q, false
		}
		q.Out = slices.Delete(slices.Clone(q.Out), i, i+1)
		q.Consumers = slices.Clone(q.Consumers)
		q.Consumers[c].Unacked--
		q.Unacked--
		q.Stats.Acked++
		return q, true
	}
	return q, false
}
