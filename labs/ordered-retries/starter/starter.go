// Package starter is your code for the ordered-retries lab: edit it, then run
//
//	go run ./cmd/mqsim lab ordered-retries
//
// The task, the rules and the property the checker judges are in ../README.md.
package starter

import lab "mqsim/labs/ordered-retries"

// New returns the Sender the producer runs.
func New() lab.Sender { return &sender{} }

// sender sends each record in a request of its own, as soon as a request may leave,
// and sends a request again as soon as it fails.
type sender struct {
	waiting []lab.Record // handed over while MaxInFlight requests were out
}

func (s *sender) Send(t lab.Transport, r lab.Record) {
	s.waiting = append(s.waiting, r)
	s.sendWaiting(t)
}

func (s *sender) Answered(t lab.Transport, res lab.Response) {
	if res.Err == nil {
		for _, r := range res.Records {
			t.Acknowledge(r)
		}
	} else {
		// Try again: the records go to the front of the line.
		s.waiting = append(res.Records, s.waiting...)
	}
	s.sendWaiting(t)
}

// sendWaiting sends waiting records while fewer than MaxInFlight requests are out.
func (s *sender) sendWaiting(t lab.Transport) {
	for len(s.waiting) > 0 && t.InFlight() < lab.MaxInFlight {
		if _, err := t.Produce(s.waiting[0]); err != nil {
			return
		}
		s.waiting = s.waiting[1:]
	}
}
