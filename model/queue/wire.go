package queue

import "mqsim/sim"

// Sizes on the wire, for the kernel's bandwidth and CPU costs (sim.Costs): the messages
// that carry queue messages say how many bytes and messages they carry. A queue message
// is its routing key, value and headers plus RecordOverhead; the frame around it is
// sim.HeaderSize (an AMQP basic.deliver or basic.publish is a method frame, a content
// header frame and a body frame, 8 bytes of framing each plus their fields: about that).
const RecordOverhead = 8

func messageWireSize(key, value string, headers []Header) int {
	n := RecordOverhead + len(key) + len(value)
	for _, h := range headers {
		n += len(h.Key) + len(h.Value)
	}
	return n
}

// WireSize is the frame and the message.
func (p Publish) WireSize() int { return sim.HeaderSize + messageWireSize(p.Key, p.Value, p.Headers) }

// RecordCount is one message.
func (p Publish) RecordCount() int { return 1 }

// WireSize is the frame and the message.
func (e EnqueueReq) WireSize() int {
	return sim.HeaderSize + messageWireSize(e.Msg.Key, e.Msg.Value, e.Msg.Headers)
}

// RecordCount is one message.
func (e EnqueueReq) RecordCount() int { return 1 }

// WireSize is the frame and the message.
func (d Delivery) WireSize() int {
	return sim.HeaderSize + messageWireSize(d.Msg.Key, d.Msg.Value, d.Msg.Headers)
}

// RecordCount is one message.
func (d Delivery) RecordCount() int { return 1 }

// WireSize is the frame and the messages.
func (r ReceiveResp) WireSize() int {
	n := sim.HeaderSize
	for i := range r.Msgs {
		m := &r.Msgs[i]
		n += messageWireSize(m.Key, m.Value, m.Headers)
	}
	return n
}

// RecordCount is the messages received.
func (r ReceiveResp) RecordCount() int { return len(r.Msgs) }
