package lab

import (
	"time"

	"mqsim/model/client"
	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/sim"
)

// The application: a consumer group member that polls the payments topic and sends each
// payment of a poll to the database (Exec), then, once the database answered every one
// of them, commits the poll's offsets. Its delivery is at least once: a payment whose
// answer was lost is sent again after RetryAfter, and one processed by a member that
// crashed, or lost its partition, before its commit is delivered again to whoever reads
// the partition next. Applying each payment once is the Handler's job.

// App timers: kinds from appTimers, the consumer's below.
const (
	appTimers = 5000 + iota // the next poll is due
	appRetry                // the database's answers are late: send the rest again; Arg = poll number
)

// RetryAfter is how long the application waits for the database's answers before it
// sends the unanswered payments again.
const RetryAfter = time.Second

// AppConfig is what an application reads and where it writes.
type AppConfig struct {
	Group, Topic string
	DB           string // the database node's name
	PollEvery    time.Duration
}

// App is the application node.
type App struct {
	cfg      AppConfig
	cons     *client.Consumer
	polls    int  // the consumer's poll count when the current poll began
	polling  bool // a poll is in progress
	tick     bool // the next poll is due
	batch    []pending
	batchNum int64 // numbers the polls whose payments went to the database
	sent     int64 // payments sent by this incarnation
}

// pending is one payment sent to the database, not yet answered.
type pending struct {
	req     int64
	payment Payment
}

// NewApp builds an application whose consumer has settings cc (its commits are the
// application's own), records as process in rec, and bootstraps from brokers.
func NewApp(cfg AppConfig, cc proto.ConsumerConfig, process int, brokers []string, rec *history.Recorder) *App {
	cc.Commit = proto.CommitManual
	c := client.NewConsumer(cc, process, brokers, rec)
	c.KeepReads()
	c.Resubscribe(client.Subscribe{Group: cfg.Group, Topics: []string{cfg.Topic}})
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = 100 * time.Millisecond
	}
	return &App{cfg: cfg, cons: c}
}

// Consumer is the application's consumer, for views.
func (a *App) Consumer() *client.Consumer { return a.cons }

// Unanswered is how many payments of the current poll wait for the database.
func (a *App) Unanswered() int { return len(a.batch) }

func (a *App) Start(env *sim.Env) {
	a.cons.Start(env)
	a.schedule(env)
}

func (a *App) schedule(env *sim.Env) { env.SetTimer(a.cfg.PollEvery, sim.TimerTag{Kind: appTimers}) }

func (a *App) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	if m, ok := msg.(ExecResult); ok {
		a.answered(env, m)
		return
	}
	a.cons.Recv(env, from, msg)
	a.step(env)
}

func (a *App) Timer(env *sim.Env, tag sim.TimerTag) {
	switch tag.Kind {
	case appTimers:
		a.tick = true
	case appRetry:
		if tag.Arg == a.batchNum && len(a.batch) > 0 {
			a.send(env, true)
		}
		return
	default:
		a.cons.Timer(env, tag)
	}
	a.step(env)
}

// step starts the next poll when one is due and none runs, and takes a poll's records
// when it ends.
func (a *App) step(env *sim.Env) {
	switch {
	case len(a.batch) > 0:
		// Waiting for the database.
	case a.polling && a.cons.Polls() > a.polls:
		a.polling = false
		a.polled(env)
	case !a.polling && a.tick && !a.cons.Polling():
		a.tick = false
		a.polling, a.polls = true, a.cons.Polls()
		a.cons.Recv(env, env.Self(), client.Poll{})
	}
}

// polled sends the poll's payments to the database.
func (a *App) polled(env *sim.Env) {
	for _, pr := range a.cons.OwnedReads() {
		for _, r := range pr.Records {
			// Requests are numbered by the node's start and a counter, so that an
			// answer to an earlier incarnation is never taken for one of this one's.
			a.sent++
			a.batch = append(a.batch, pending{req: env.Starts()<<32 | a.sent, payment: PaymentOf(pr.TopicPartition, r)})
		}
	}
	if len(a.batch) == 0 {
		a.schedule(env)
		return
	}
	a.batchNum++
	a.send(env, false)
}

// send sends the unanswered payments to the database, and arms the retry.
func (a *App) send(env *sim.Env, retry bool) {
	db, ok := env.Lookup(a.cfg.DB)
	if !ok {
		return
	}
	sim.Record(env, Sending{Payments: len(a.batch), Retry: retry})
	for _, p := range a.batch {
		env.Send(db, Exec{Req: p.req, Payment: p.payment})
	}
	env.SetTimer(RetryAfter, sim.TimerTag{Kind: appRetry, Arg: a.batchNum})
}

// answered takes an answer of the database; once every payment of the poll is
// committed, the application commits the poll's offsets and polls again.
func (a *App) answered(env *sim.Env, m ExecResult) {
	if m.Err != "" {
		return // the retry sends it again
	}
	for i, p := range a.batch {
		if p.req == m.Req {
			a.batch = append(a.batch[:i:i], a.batch[i+1:]...)
			break
		}
	}
	if len(a.batch) > 0 {
		return
	}
	sim.Record(env, Applied{})
	a.cons.Recv(env, env.Self(), client.Commit{})
	a.schedule(env)
	a.step(env)
}
