package queue

// Read-only views for observers (the terminal UI samples them after every kernel step):
// bounded, so that sampling a long queue does not copy all of it, and free of map order.

// ReadyLen is the number of ready messages.
func (s *State) ReadyLen() int { return len(s.ready) }

// ReadyHead lists the first n ready messages in queue order (copies).
func (s *State) ReadyHead(n int) []Message {
	n = max(0, min(n, len(s.ready)))
	out := make([]Message, n)
	for i, m := range s.ready[:n] {
		out[i] = *m
	}
	return out
}

// UnsettledLen is the number of delivered messages not settled yet.
func (s *State) UnsettledLen() int { return len(s.out) }

// UnsettledHead lists the first n unsettled messages in delivery order (copies).
func (s *State) UnsettledHead(n int) []Unsettled {
	n = max(0, min(n, len(s.out)))
	out := make([]Unsettled, n)
	for i, o := range s.out[:n] {
		out[i] = Unsettled{Msg: *o.msg, Consumer: o.consumer, Channel: o.channel, Tag: o.tag, Handle: o.handle, At: o.at}
	}
	return out
}

// Queue is the queue the consumer consumes.
func (c *Consumer) Queue() string { return c.cfg.Queue }

// Buffered is the number of deliveries the consumer holds and has not started on.
func (c *Consumer) Buffered() int { return len(c.buf) }

// Current is the message the consumer is processing, if any.
func (c *Consumer) Current() (Message, bool) {
	if c.cur == nil {
		return Message{}, false
	}
	return c.cur.d.Msg, true
}

// Queue is the queue the worker receives from.
func (w *Worker) Queue() string { return w.cfg.Queue }

// Current is the message the worker is processing, if any.
func (w *Worker) Current() (Message, bool) {
	if w.cur == nil {
		return Message{}, false
	}
	return w.cur.r.msg, true
}
