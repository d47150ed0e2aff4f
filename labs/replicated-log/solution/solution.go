// Package solution is the reference solution of the replicated-log lab. Try the lab
// before you read it: the lesson is in finding why the starter fails.
package solution

import lab "mqsim/labs/replicated-log"

// New returns a replica that knows nothing yet: its log is on the disk, and the
// controller tells it the epoch.
func New() lab.Replica { return &replica{} }

// maxBatch bounds the entries of one Replicate.
const maxBatch = 64

type replica struct {
	epoch  int64
	leader string
	// hw is the high watermark: every offset below it is on every replica. Only the
	// leader raises it by counting; a follower learns it from the leader. It is kept in
	// memory: after a restart it starts at 0, and below the truth is always safe.
	hw int64

	// The leader's view of each follower, in this epoch only: match is how far the
	// follower's log is known to equal the leader's, next where the next Replicate
	// starts.
	match, next map[string]int64
	// waiting are the appends not acknowledged yet, in offset order.
	waiting []pending
}

type pending struct {
	req    lab.Request
	offset int64
}

func (r *replica) leading(env lab.Env) bool { return r.leader == env.Self() }

// Role follows the controller. A new leader starts with nothing known of its followers
// (match 0): it counts only what they confirm in its own epoch, so it acknowledges
// nothing that is not on every replica. Its own log wins: the followers truncate to it.
func (r *replica) Role(env lab.Env, epoch int64, leader string) {
	if epoch < r.epoch || epoch == r.epoch && leader == r.leader {
		return
	}
	r.follow(epoch, leader)
	if r.leading(env) {
		r.match, r.next = map[string]int64{}, map[string]int64{}
		for _, p := range env.Peers() {
			r.next[p] = env.Log().Len()
		}
		r.replicate(env)
	}
}

// follow takes epoch and its leader. The appends waiting for a former epoch's HW are not
// answered: whether they survive is the new leader's to say, and the client's timeout
// reports them unknown.
func (r *replica) follow(epoch int64, leader string) {
	r.epoch, r.leader = epoch, leader
	r.waiting, r.match, r.next = nil, nil, nil
}

// Append appends at the leader and acknowledges once the HW passed the entry: when every
// follower has it, so that whichever replica the controller names next has it too.
func (r *replica) Append(env lab.Env, req lab.Request, value string) {
	if !r.leading(env) {
		env.Refuse(req, r.leader)
		return
	}
	log := env.Log()
	log.Append(lab.Entry{Epoch: r.epoch, Value: value})
	r.waiting = append(r.waiting, pending{req: req, offset: log.Len() - 1})
	r.replicate(env)
	r.advance(env)
}

// Read gives only what is below the HW: an entry above it may be lost in a failover, and
// a reader must never see what a later reader cannot.
func (r *replica) Read(env lab.Env, req lab.Request, offset int64) {
	switch {
	case !r.leading(env):
		env.Refuse(req, r.leader)
	case offset < 0 || offset >= r.hw:
		env.Refuse(req, r.leader)
	default:
		env.Give(req, env.Log().At(offset).Value)
	}
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
// make the log equal to the leader's from From on, truncating only where an entry
// differs (a late, shorter Replicate must not cut what a later one brought).
func (r *replica) replicated(env lab.Env, from string, m lab.Replicate) {
	log := env.Log()
	if m.Epoch < r.epoch {
		env.Send(from, lab.Replicated{Epoch: r.epoch, LEO: log.Len()})
		return
	}
	if m.Epoch > r.epoch || r.leader != from {
		r.follow(m.Epoch, from)
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
	end := m.From + int64(len(m.Entries))
	r.hw = max(r.hw, min(m.HW, end))
	env.Send(from, lab.Replicated{Epoch: r.epoch, OK: true, LEO: end})
}

// answered is the leader's side: a later epoch means another leader, so step down;
// otherwise count what the follower has, raise the HW and send it the rest.
func (r *replica) answered(env lab.Env, from string, m lab.Replicated) {
	if m.Epoch > r.epoch {
		r.follow(m.Epoch, "")
		return
	}
	if !r.leading(env) || m.Epoch != r.epoch {
		return
	}
	if m.OK {
		r.match[from] = max(r.match[from], m.LEO)
		r.next[from] = max(r.next[from], r.match[from])
		r.advance(env)
	} else {
		r.next[from] = max(r.match[from], min(m.LEO, env.Log().Len()))
	}
	if r.next[from] < env.Log().Len() || !m.OK {
		r.send(env, from)
	}
}

// advance raises the HW to what every replica has, and acknowledges the appends below it.
func (r *replica) advance(env lab.Env) {
	hw := env.Log().Len()
	for _, p := range env.Peers() {
		hw = min(hw, r.match[p])
	}
	if hw <= r.hw {
		return
	}
	r.hw = hw
	n := 0
	for n < len(r.waiting) && r.waiting[n].offset < r.hw {
		env.Acknowledge(r.waiting[n].req, r.waiting[n].offset)
		n++
	}
	r.waiting = r.waiting[n:]
}

func (r *replica) Tick(env lab.Env) {
	if r.leading(env) {
		r.replicate(env)
	}
}

// replicate sends every follower what it lacks (or, when nothing, the HW).
func (r *replica) replicate(env lab.Env) {
	for _, p := range env.Peers() {
		r.send(env, p)
	}
}

func (r *replica) send(env lab.Env, p string) {
	log := env.Log()
	from := r.next[p]
	m := lab.Replicate{Epoch: r.epoch, From: from, HW: r.hw}
	if from > 0 {
		m.PrevEpoch = log.At(from - 1).Epoch
	}
	for o := from; o < log.Len() && o < from+maxBatch; o++ {
		m.Entries = append(m.Entries, log.At(o))
	}
	env.Send(p, m)
}
