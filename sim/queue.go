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
	id       uint64 // evDeliver: message id; evTimer: timer id; evAction: action index
	tag      TimerTag
	file     string  // evFsync: the file
	size     int64   // evFsync: the length made durable
	wseq     uint64  // evFsync: writes up to this sequence are covered
	msg      Message // evDeliver
}

func (a *event) before(b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// eventQueue is a binary min-heap ordered by (at, seq). It is written out rather than
// built on container/heap, whose interface boxing would allocate on every push.
type eventQueue struct {
	items []event
}

func (q *eventQueue) Len() int { return len(q.items) }

func (q *eventQueue) peek() *event { return &q.items[0] }

func (q *eventQueue) push(e event) {
	q.items = append(q.items, e)
	i := len(q.items) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !q.items[i].before(&q.items[parent]) {
			break
		}
		q.items[i], q.items[parent] = q.items[parent], q.items[i]
		i = parent
	}
}

func (q *eventQueue) pop() event {
	top := q.items[0]
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	q.items[last] = event{} // drop references held by the vacated slot
	q.items = q.items[:last]
	i, n := 0, last
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.items[r].before(&q.items[l]) {
			m = r
		}
		if !q.items[m].before(&q.items[i]) {
			break
		}
		q.items[i], q.items[m] = q.items[m], q.items[i]
		i = m
	}
	return top
}
