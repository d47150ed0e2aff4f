// Package starter is your code for the replicated-log lab: edit it, then run
//
//	go run ./cmd/mqsim lab replicated-log
//
// The task, the rules and the property the checker judges are in ../README.md.
package starter

import lab "mqsim/labs/replicated-log"

// New returns a replica that knows nothing yet: its log is on the disk, and the
// controller tells it the epoch.
func New() lab.Replica { return &replica{} }

// maxBatch bounds the entries of one Replicate.
const maxBatch = 64

type replica struct {
	epoch  int64
	leader string
	// next is, at the leader, where the next Replicate to each follower starts.
	next map[string]int64
}

func (r *replica) leading(env lab.Env) bool { return r.leader == env.Self() }

// Role follows the controller; a new leader sends its followers its log.
func (r *replica) Role(env lab.Env, epoch int64, leader string) {
	if epoch < r.epoch || epoch == r.epoch && leader == r.leader {
		return
	}
	r.epoch, r.leader, r.next = epoch, leader, nil
	if r.leading(env) {
		r.next = map[string]int64{}
		for _, p := range env.Peers() {
			r.next[p] = env.Log().Len()
		}
		r.replicate(env)
	}
}

// Append appends at the leader, acknowledges, and replicates to the followers.
func (r *replica) Append(env lab.Env, req lab.Request, value string) {
	if !r.leading(env) {
		env.Refuse(req, r.leader)
		return
	}
	log := env.Log()
	log.Append(lab.Entry{Epoch: r.epoch, Value: value})
	env.Acknowledge(req, log.Len()-1) // the log is on disk: safe
	r.replicate(env)
}

// Read gives the value at offset, if the leader has it.
func (r *replica) Read(env lab.Env, req lab.Request, offset int64) {
	if !r.leading(env) || offset < 0 || offset >= env.Log().Len() {
		env.Refuse(req, r.leader)
		return
	}
	env.Give(req, env.Log().At(offset).Value)
}

func (r *replica) Receive(env lab.Env, from string, m lab.Message) {
	switch m := m.(type) {
	case lab.Replicate:
		r.replicated(env, from, m)
	case lab.Replicated:
		r.answered(env, from, m)
	}
}

// replicated is the follower's side: refuse an older epoch; check that the log holds the
// entry before From in the leader's epoch for it (else ask for an earlier start); then
// make the log equal to the leader's from From on, truncating where an entry differs.
func (r *replica) replicated(env lab.Env, from string, m lab.Replicate) {
	log := env.Log()
	if m.Epoch < r.epoch {
		env.Send(from, lab.Replicated{Epoch: r.epoch, LEO: log.Len()})
		return
	}
	if m.Epoch > r.epoch || r.leader != from {
		r.epoch, r.leader, r.next = m.Epoch, from, nil
	}
	if m.From > log.Len() {
		env.Send(from, lab.Replicated{Epoch: r.epoch, LEO: log.Len()})
		return
	}
	if m.From > 0 && log.At(m.From-1).Epoch != m.PrevEpoch {
		env.Send(from, lab.Replicated{Epoch: r.epoch, LEO: m.From - 1})
		return
	}
	for i, e := range m.Entries {
		off := m.From + int64(i)
		if off < log.Len() && log.At(off).Epoch == e.Epoch {
			continue
		}
		if off < log.Len() {
			log.Truncate(off)
		}
		log.Append(m.Entries[i:]...)
		break
	}
	env.Send(from, lab.Replicated{Epoch: r.epoch, OK: true, LEO: m.From + int64(len(m.Entries))})
}

// answered is the leader's side: move the follower's start and send it the rest.
func (r *replica) answered(env lab.Env, from string, m lab.Replicated) {
	if m.Epoch > r.epoch {
		r.epoch, r.leader, r.next = m.Epoch, "", nil
		return
	}
	if !r.leading(env) || m.Epoch != r.epoch {
		return
	}
	r.next[from] = min(m.LEO, env.Log().Len())
	if r.next[from] < env.Log().Len() {
		r.send(env, from)
	}
}

func (r *replica) Tick(env lab.Env) {
	if r.leading(env) {
		r.replicate(env)
	}
}

// replicate sends every follower what it lacks.
func (r *replica) replicate(env lab.Env) {
	for _, p := range env.Peers() {
		r.send(env, p)
	}
}

func (r *replica) send(env lab.Env, p string) {
	log := env.Log()
	from := r.next[p]
	m := lab.Replicate{Epoch: r.epoch, From: from}
	if from > 0 {
		m.PrevEpoch = log.At(from - 1).Epoch
	}
	for o := from; o < log.Len() && o < from+maxBatch; o++ {
		m.Entries = append(m.Entries, log.At(o))
	}
	env.Send(p, m)
}
