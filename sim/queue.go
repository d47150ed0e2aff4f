package sim

// eventKind says what an event does when the world executes it.
type eventKind uint8

const (
	evStart   eventKind = iota + 1 // call the node's Start
	evDeliver                      // deliver a message to a node
	evTimer                        // fire a node's timer
	evFsync                        // an fsync completes
	evAction                       // execute a fault-plan action
)

// event is one pending thing. Events live by value in the queue so that scheduling one
// allocates nothing in steady state.
type event struct {
	at   Time
	seq  uint64 // insertion order: breaks ties between events at the same time
	kind eventKind
	node NodeID // the node the event happens at
	from NodeID // evDeliver: the sender
	inc  uint32 // the node's incarnation when scheduled; stale after a crash
	// arrived marks a delivery that already left the network (it was held by a clog or a
	// pause and is now re-scheduled), so the link's in-flight count is not lowered twice.
	arrived bool
	// released marks a held message that a release let through: the clog that held it
	// holds it no more (a cut link still loses it).
	released bool
	// waited marks a delivery that reached its node while the node was busy and was
	// put back until it is free: the network is behind it.
	waited bool
	id     uint64 // evDeliver: message id; evTimer: timer id; evAction: action index
	tag    TimerTag
	file   string  // evFsync: the file
	size   int64   // evFsync: the length made durable
	wseq   uint64  // evFsync: writes up to this sequence are covered
	msg    Message // evDeliver
}

// eventQueue is a binary min-heap ordered by (at, seq). The heap holds small keys without
// pointers and the events themselves stay put in a slab: sifting moves 24-byte keys that
// need no write barriers instead of whole events holding strings and messages. It is
// written out rather than built on container/heap, whose interface boxing would allocate
// on every push.
type eventQueue struct {
	keys []eventKey
	slab []event
	free []int32 // slab slots to reuse
}

// eventKey orders one event of the slab.
type eventKey struct {
	at   Time
	seq  uint64
	slot int32
}

func (a *eventKey) before(b *eventKey) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (q *eventQueue) Len() int { return len(q.keys) }

func (q *eventQueue) peek() *event { return &q.slab[q.keys[0].slot] }

func (q *eventQueue) push(e event) {
	var slot int32
	if n := len(q.free); n > 0 {
		slot = q.free[n-1]
		q.free = q.free[:n-1]
		q.slab[slot] = e
	} else {
		slot = int32(len(q.slab))
		q.slab = append(q.slab, e)
	}
	k := eventKey{at: e.at, seq: e.seq, slot: slot}
	q.keys = append(q.keys, k)
	i := len(q.keys) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !k.before(&q.keys[parent]) {
			break
		}
		q.keys[i] = q.keys[parent]
		i = parent
	}
	q.keys[i] = k
}

func (q *eventQueue) pop() event {
	slot := q.keys[0].slot
	top := q.slab[slot]
	q.slab[slot] = event{} // drop references held by the vacated slot
	q.free = append(q.free, slot)
	last := len(q.keys) - 1
	k := q.keys[last]
	q.keys = q.keys[:last]
	n := last
	if n == 0 {
		return top
	}
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.keys[r].before(&q.keys[l]) {
			m = r
		}
		if !q.keys[m].before(&k) {
			break
		}
		q.keys[i] = q.keys[m]
		i = m
	}
	q.keys[i] = k
	return top
}
