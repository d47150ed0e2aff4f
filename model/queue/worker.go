package queue

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"mqsim/model/history"
	"mqsim/sim"
)

// WorkerConfig shapes an SQS worker: a loop of ReceiveMessage, process, DeleteMessage.
type WorkerConfig struct {
	Queue string
	Nodes []string
	// Batch is MaxNumberOfMessages (1..10); Visibility overrides the queue's visibility
	// timeout per receive (0: the queue's).
	Batch      int
	Visibility time.Duration
	// Processing is the time per message; PollEvery the wait after an empty receive.
	Processing time.Duration
	PollEvery  time.Duration
	// Fail lists values whose processing fails: the worker does not delete them, so they
	// come back when their visibility timeout runs out.
	Fail []string
	// Extend makes the worker call ChangeMessageVisibility every half timeout while it
	// processes a message (the heartbeat AWS recommends for long jobs).
	Extend         bool
	RequestTimeout time.Duration
}

// DefaultWorkerConfig receives one message at a time, 10ms per message, polling every
// 100ms when the queue is empty.
func DefaultWorkerConfig(queue string) WorkerConfig {
	return WorkerConfig{Queue: queue, Batch: 1, Processing: 10 * time.Millisecond,
		PollEvery: 100 * time.Millisecond, RequestTimeout: time.Second}
}

// Validate checks the worker's self-re-arming periods: the wait after an empty
// receive, the request timeout (a receive that times out is sent again) and, with
// Extend, half the visibility timeout (the heartbeat that extends it).
func (c WorkerConfig) Validate() error {
	var errs []error
	errs = append(errs, sim.CheckTimerPeriod("poll-every", c.PollEvery), sim.CheckTimerPeriod("request-timeout", c.RequestTimeout))
	if c.Extend && c.Visibility/2 < sim.MinTimerPeriod {
		errs = append(errs, fmt.Errorf("visibility=%s with extend=true: want at least %s (the worker extends it every half; a shorter period would spend the run's steps on the extension)",
			c.Visibility, 2*sim.MinTimerPeriod))
	}
	return errors.Join(errs...)
}

// WorkerStats counts what a worker did.
type WorkerStats struct {
	Receives, Received, Processed, Failed, Deleted, StaleDeletes int
	Values                                                       []string
}

// Worker is an SQS consumer. Each message it processes is a poll in the history, as
// for Consumer.
type Worker struct {
	cfg     WorkerConfig
	process int
	rec     *history.Recorder
	node    int
	req     int64
	waiting int64 // the receive in flight, 0 if none
	batch   []received
	cur     *workItem
	seq     int64
	stats   WorkerStats
}

type received struct {
	msg    Message
	handle string
}

type workItem struct {
	r   received
	h   history.Handle
	seq int64
}

const (
	timerWorkerPoll = 1 + iota
	timerWorkerProcessed
	timerWorkerRequest
	timerWorkerExtend
)

// NewWorker makes a worker recording under process.
func NewWorker(cfg WorkerConfig, process int, rec *history.Recorder) *Worker {
	return &Worker{cfg: cfg, process: process, rec: rec}
}

// Stats returns the worker's counters.
func (w *Worker) Stats() WorkerStats { return w.stats }

// Start begins the receive loop.
func (w *Worker) Start(env *sim.Env) { w.receive(env) }

func (w *Worker) nodeID(env *sim.Env) sim.NodeID {
	name := w.cfg.Nodes[w.node%len(w.cfg.Nodes)]
	id, ok := env.Lookup(name)
	if !ok {
		panic("queue: worker " + env.Name() + ": no node " + name)
	}
	return id
}

func (w *Worker) receive(env *sim.Env) {
	w.req++
	w.waiting = w.req
	w.stats.Receives++
	env.Send(w.nodeID(env), ReceiveReq{Queue: w.cfg.Queue, Req: w.req, Max: w.cfg.Batch, Visibility: w.cfg.Visibility})
	env.SetTimer(w.cfg.RequestTimeout, sim.TimerTag{Kind: timerWorkerRequest, Arg: w.req})
}

// Recv handles the broker's answers.
func (w *Worker) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case ReceiveResp:
		if m.Req != w.waiting {
			return
		}
		w.waiting = 0
		if len(m.Msgs) == 0 {
			env.SetTimer(w.cfg.PollEvery, sim.TimerTag{Kind: timerWorkerPoll})
			return
		}
		for i, msg := range m.Msgs {
			w.batch = append(w.batch, received{msg: msg, handle: m.Handles[i]})
		}
		w.stats.Received += len(m.Msgs)
		w.next(env)
	case NotLeader:
		if m.Req == w.waiting {
			w.waiting = 0
			w.node = pointAt(&w.cfg.Nodes, w.node, m.Leader)
			env.SetTimer(50*time.Millisecond, sim.TimerTag{Kind: timerWorkerPoll})
		}
	case DeleteResp:
		if m.Deleted {
			w.stats.Deleted++
		} else if m.Reason != "" {
			w.stats.StaleDeletes++
		}
	}
}

func (w *Worker) next(env *sim.Env) {
	if w.cur != nil {
		return
	}
	if len(w.batch) == 0 {
		w.receive(env)
		return
	}
	r := w.batch[0]
	w.batch = w.batch[1:]
	w.seq++
	w.cur = &workItem{r: r, h: w.rec.InvokePoll(int64(env.Now()), w.process, w.cfg.Queue), seq: w.seq}
	env.SetTimer(w.cfg.Processing, sim.TimerTag{Kind: timerWorkerProcessed, Arg: w.seq})
	if w.cfg.Extend && w.cfg.Visibility > 0 {
		env.SetTimer(w.cfg.Visibility/2, sim.TimerTag{Kind: timerWorkerExtend, Arg: w.seq})
	}
}

func (w *Worker) finish(env *sim.Env) {
	p := w.cur
	w.cur = nil
	reads := []history.PartitionRecords{{TopicPartition: history.TopicPartition{Topic: w.cfg.Queue},
		Records: []history.Record{{Offset: p.r.msg.ID, Value: p.r.msg.Value}}}}
	now := int64(env.Now())
	if slices.Contains(w.cfg.Fail, p.r.msg.Value) {
		w.stats.Failed++
		w.rec.Fail(now, p.h, history.Result{Reads: reads, Error: "processing failed"})
		sim.Record(env, WorkerProcessed{Queue: w.cfg.Queue, Msg: p.r.msg, Failed: true})
	} else {
		w.stats.Processed++
		w.stats.Values = append(w.stats.Values, p.r.msg.Value)
		w.rec.Ok(now, p.h, history.Result{Reads: reads})
		sim.Record(env, WorkerProcessed{Queue: w.cfg.Queue, Msg: p.r.msg, Handle: p.r.handle})
		w.req++
		env.Send(w.nodeID(env), DeleteReq{Queue: w.cfg.Queue, Req: w.req, Handle: p.r.handle})
	}
	w.next(env)
}

// Timer runs the loop.
func (w *Worker) Timer(env *sim.Env, tag sim.TimerTag) {
	switch tag.Kind {
	case timerWorkerPoll:
		if w.waiting == 0 && w.cur == nil {
			w.receive(env)
		}
	case timerWorkerProcessed:
		if w.cur != nil && w.cur.seq == tag.Arg {
			w.finish(env)
		}
	case timerWorkerRequest:
		if w.waiting == tag.Arg {
			w.waiting = 0
			w.node++
			w.receive(env)
		}
	case timerWorkerExtend:
		if w.cur != nil && w.cur.seq == tag.Arg {
			w.req++
			env.Send(w.nodeID(env), VisibilityReq{Queue: w.cfg.Queue, Req: w.req, Handle: w.cur.r.handle, Timeout: w.cfg.Visibility})
			env.SetTimer(w.cfg.Visibility/2, sim.TimerTag{Kind: timerWorkerExtend, Arg: w.seq})
		}
	}
}
