// Package solution is the reference solution of the ordered-retries lab. Try the lab
// before you read it: the lesson is in finding why the starter fails.
package solution

import lab "mqsim/labs/ordered-retries"

// New returns the ordered Sender.
func New() lab.Sender { return &sender{} }

// sender keeps at most one request in flight per key, and several across keys. A
// key's next record leaves only once the previous one is acknowledged, so a retry can
// never be overtaken by a later record of its key: whatever copies of a record reach
// the log (a timed-out request may have been appended), the first lands before the
// next record of its key is even sent. Duplicates remain possible, and allowed.
//
// Kafka's classic answer without idempotence, max.in.flight.requests.per.connection=1,
// is stricter (one request per connection, every key waits); the broker's idempotence
// (KIP-98) keeps five in flight and makes the leader refuse a batch whose sequence
// number does not follow the last one appended, so the retries land in order and once.
type sender struct {
	queue  []lab.Record // handed over, not yet acknowledged, in order
	flying []string     // keys with a request in flight
}

func (s *sender) Send(t lab.Transport, r lab.Record) {
	s.queue = append(s.queue, r)
	s.sendReady(t)
}

func (s *sender) Answered(t lab.Transport, res lab.Response) {
	r := res.Records[0]
	s.flying = remove(s.flying, r.Key)
	if res.Err == nil {
		t.Acknowledge(r)
		for i, q := range s.queue {
			if q.Value == r.Value {
				s.queue = append(s.queue[:i:i], s.queue[i+1:]...)
				break
			}
		}
	}
	// On an error the record stays first of its key in the queue: it is sent again.
	s.sendReady(t)
}

// sendReady sends the first waiting record of each key that has nothing in flight,
// oldest first, while fewer than MaxInFlight requests are out.
func (s *sender) sendReady(t lab.Transport) {
	var seen []string // keys whose first record is behind us in the queue
	for _, r := range s.queue {
		if t.InFlight() >= lab.MaxInFlight {
			return
		}
		first := !contains(seen, r.Key)
		seen = append(seen, r.Key)
		if !first || contains(s.flying, r.Key) {
			continue
		}
		if _, err := t.Produce(r); err == nil {
			s.flying = append(s.flying, r.Key)
		}
	}
}

func contains(keys []string, k string) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

func remove(keys []string, k string) []string {
	for i, x := range keys {
		if x == k {
			return append(keys[:i:i], keys[i+1:]...)
		}
	}
	return keys
}
