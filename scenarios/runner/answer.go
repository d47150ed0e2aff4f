package runner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"mqsim/checker"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/scenarios/script"
)

// Answer is a question's answer as the run computed it.
type Answer struct {
	Value string
	// Step is the kernel step that decides it: where the first violation of the anomaly
	// a condition asks about began, else the last step run when the answer was computed.
	Step uint64
	// Among says the value is one of the question's choices (set by Reveal).
	Among bool
}

// Evaluate computes an answer expression (script.Expr) against the run as it stands:
// the cluster's typed state (the controller's view, the replicas), the client history,
// and the run's verdict (Runner.Verdict: the last check's, or a judgement of what ran so
// far). It reads and never changes the run: asking injects nothing, so a scenario's trace
// is the same with or without its questions.
func (r *Runner) Evaluate(e script.Expr) (Answer, error) {
	a := Answer{}
	if r.w != nil {
		a.Step = r.w.Steps()
	}
	v, err := r.eval(e, &a)
	a.Value = v
	return a, err
}

func (r *Runner) eval(e script.Expr, a *Answer) (string, error) {
	if e.Func == "" {
		return e.Word, nil
	}
	arg := func(i int) string { return positional(e)[i].Word }
	switch e.Func {
	case "leader", "epoch", "isr":
		p, err := r.partition(arg(0))
		if err != nil {
			return "", err
		}
		switch e.Func {
		case "leader":
			if p.Leader == proto.NoLeader {
				return "none", nil
			}
			return r.cluster.W.Name(p.Leader), nil
		case "epoch":
			return strconv.Itoa(int(p.LeaderEpoch)), nil
		}
		var names []string
		for _, id := range p.ISR {
			names = append(names, r.cluster.W.Name(id))
		}
		slices.Sort(names)
		return strings.Join(names, " "), nil
	case "hw", "leo":
		return r.replicaOffset(e)
	case "read", "acked":
		n, err := r.count(e.Func, e.Args[0].Word, "")
		return yesNo(n > 0), err
	case "count":
		value, part := "", ""
		for _, x := range e.Args {
			switch x.Key {
			case "value":
				value = x.Word
			case "partition":
				part = x.Word
			}
		}
		n, err := r.count(arg(0), value, part)
		return strconv.Itoa(n), err
	case "anomaly":
		return r.anomaly(checker.Anomaly(arg(0)), a)
	case "violations":
		v, ok := r.Verdict()
		if !ok {
			return "", fmt.Errorf("violations(): nothing to judge yet")
		}
		return strconv.Itoa(len(v.Report.Violations)), nil
	case "dead-lettered":
		return r.deadLettered(arg(0))
	case "generation":
		c, err := r.needCluster()
		if err != nil {
			return "", err
		}
		if !slices.Contains(c.Groups(), arg(0)) {
			return "", fmt.Errorf("generation(%s): no such group; the run's groups: %s", arg(0), strings.Join(c.Groups(), ", "))
		}
		return strconv.Itoa(int(c.Group(arg(0)).Generation)), nil
	case "if":
		cond, err := r.eval(e.Args[0], a)
		if err != nil {
			return "", err
		}
		if cond == "yes" {
			return r.eval(e.Args[1], a)
		}
		return r.eval(e.Args[2], a)
	}
	return "", fmt.Errorf("%s: no such function", e.Func)
}

func positional(e script.Expr) []script.Expr {
	var p []script.Expr
	for _, a := range e.Args {
		if a.Key == "" {
			p = append(p, a)
		}
	}
	return p
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// partition is the controller's state of partition "t/0".
func (r *Runner) partition(s string) (proto.PartitionState, error) {
	c, err := r.needCluster()
	if err != nil {
		return proto.PartitionState{}, err
	}
	topic, n, _ := script.SplitTP(s)
	for _, p := range c.Partitions() {
		if p.TP == (proto.TP{Topic: topic, Partition: n}) {
			return p, nil
		}
	}
	if c.ControllerView() == nil {
		return proto.PartitionState{}, fmt.Errorf("%s: the controller is down", s)
	}
	return proto.PartitionState{}, fmt.Errorf("%s: no such partition", s)
}

// replicaOffset is hw(TP [, BROKER]) or leo(TP [, BROKER]): of the named broker's
// replica, else of the replica that leads in the highest epoch.
func (r *Runner) replicaOffset(e script.Expr) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	pos := positional(e)
	topic, n, _ := script.SplitTP(pos[0].Word)
	tp := proto.TP{Topic: topic, Partition: n}
	i, ok := c.Leader(tp)
	if len(pos) > 1 {
		id, err := r.node(pos[1].Word)
		if err != nil {
			return "", err
		}
		i = slices.Index(c.Brokers, id)
		if i < 0 {
			return "", fmt.Errorf("%s: %s is not a broker", e, pos[1].Word)
		}
		ok = c.Broker(i) != nil
	}
	if !ok {
		return "", fmt.Errorf("%s: no live replica to read", e)
	}
	rep, ok := c.Broker(i).Replica(tp)
	if !ok {
		return "", fmt.Errorf("%s: the broker holds no replica of %s", e, pos[0].Word)
	}
	if e.Func == "hw" {
		return strconv.FormatInt(rep.HighWatermark, 10), nil
	}
	return strconv.FormatInt(rep.LogEndOffset, 10), nil
}

// deadLettered is how many messages the queue broker's queue has dead-lettered so far
// (RabbitMQ: rejected, past its delivery limit, expired or overflowed, to its dead-letter
// exchange; SQS: redriven to its dead-letter queue), as its acting node counts them and
// show queue prints them.
func (r *Runner) deadLettered(name string) (string, error) {
	q, err := r.needQueue()
	if err != nil {
		return "", err
	}
	if _, ok := q.c.Topo.Queue(name); !ok {
		var names []string
		for _, q := range q.c.Topo.Queues {
			names = append(names, q.Name)
		}
		return "", fmt.Errorf("dead-lettered(%s): no such queue; the run's queues: %s", name, strings.Join(names, ", "))
	}
	_, v, ok := q.c.Acting(name)
	if !ok {
		return "", fmt.Errorf("dead-lettered(%s): no node acts for the queue", name)
	}
	st := v.State.Stats()
	return strconv.Itoa(st.DeadLettered + st.Redriven), nil
}

// count counts records returned by ok polls ("read") or sends completed ok ("acked")
// in the client history, of one value and one partition when given.
func (r *Runner) count(what, value, part string) (int, error) {
	sys := r.System()
	if sys == nil {
		return 0, fmt.Errorf("nothing has run yet: start a cluster or a queue broker first")
	}
	if value != "" && !r.sent[value] {
		// A misspelt value would otherwise answer "no" or 0, quietly.
		return 0, fmt.Errorf("no command of the run has sent %q so far", value)
	}
	match := func(tp history.TopicPartition, v string) bool {
		return (value == "" || v == value) && (part == "" || fmt.Sprintf("%s/%d", tp.Topic, tp.Partition) == part)
	}
	n := 0
	for _, op := range sys.History() {
		if op.Type != history.Ok {
			continue
		}
		switch {
		case what == "read" && op.F == history.Poll:
			for _, pr := range op.Poll.Reads {
				for _, rec := range pr.Records {
					if match(pr.TopicPartition, rec.Value) {
						n++
					}
				}
			}
		case what == "acked" && op.F == history.Send:
			if match(op.Send.TopicPartition, op.Send.Value) {
				n++
			}
		}
	}
	return n, nil
}

// anomaly answers whether the run's verdict found anomaly x, failure or allowed, and
// names the step where its first violation began.
func (r *Runner) anomaly(x checker.Anomaly, a *Answer) (string, error) {
	v, ok := r.Verdict()
	if !ok {
		return "", fmt.Errorf("anomaly(%s): nothing to judge yet", x)
	}
	failures, allowed := v.Classify()
	if !slices.Contains(failures, x) && !slices.Contains(allowed, x) {
		return "no", nil
	}
	for _, vi := range slices.Concat(v.Report.Violations, v.Report.Allowed) {
		if vi.Anomaly == x && vi.Step > 0 {
			a.Step = vi.Step
			break
		}
	}
	return "yes", nil
}

// Reveal computes, into answers (one per question of s), the answers of the questions
// revealed before step k runs (k == len(s.Steps): after the last step), and returns their
// indices. An answer may fall outside the question's choices under --set or --fix (the
// choices were written for the scenario as written; a test holds the catalogue's answers
// to them as written): Answer.Among says.
// The quiz and the TUI's recording both call it between steps: one definition of when a
// question is answered.
func (r *Runner) Reveal(s *script.Script, k int, answers []Answer) ([]int, error) {
	var revealed []int
	for i, q := range s.Questions {
		if q.Reveal != k {
			continue
		}
		a, err := r.Evaluate(q.Answer)
		if err != nil {
			return revealed, fmt.Errorf("%s: answer=%s: %v", q.Pos, q.Answer, err)
		}
		a.Among = slices.Contains(q.Choices, a.Value)
		answers[i] = a
		revealed = append(revealed, i)
	}
	return revealed, nil
}
