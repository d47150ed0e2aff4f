package labs

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"mqsim/checker"
	lab "mqsim/labs/ordered-retries"
)

// The starter retries a failed request while later ones are in flight: the swarm
// finds a key's records reordered within 200 seeds (seed 9), and the shrinker makes
// that run small.
func TestRetriesStarterFailsWithin200Seeds(t *testing.T) {
	starterCaught(t, "ordered-retries", 9, "reordered", func(fs []checker.Anomaly) bool {
		return slices.Equal(fs, []checker.Anomaly{lab.Reordered})
	}, lab.Reordered)
}

// The reference solution passes. go test runs 200 seeds; make labs runs 2,000.
func TestRetriesSolutionPasses(t *testing.T) { solutionPasses(t, "ordered-retries") }

// silent never sends: nothing is acknowledged.
type silent struct{}

func (silent) Send(lab.Transport, lab.Record)       {}
func (silent) Answered(lab.Transport, lab.Response) {}

// fireAndForget acknowledges each record as it sends it, and never retries: a request
// that fails loses an acknowledged record, which the final consume never reads
// (unseen; a lost-write when records after it were read).
type fireAndForget struct{}

func (fireAndForget) Send(t lab.Transport, r lab.Record) {
	if _, err := t.Produce(r); err == nil {
		t.Acknowledge(r)
	}
}
func (fireAndForget) Answered(lab.Transport, lab.Response) {}

// panicky panics: the producer puts the panic in the trace and goes on, and the
// records are never acknowledged.
type panicky struct{}

func (panicky) Send(lab.Transport, lab.Record)       { panic("a bug in the Sender") }
func (panicky) Answered(lab.Transport, lab.Response) {}

// goBackN keeps five requests in flight and, after a failure, lets the others finish,
// then sends every record not yet acknowledged again, in order. A request after the
// failed one may have been appended already, so the retry still lands after it.
type goBackN struct {
	unacked  []lab.Record // in order
	next     int          // unacked[next:] are not sent yet
	draining bool         // a request failed: wait for the others, then start over
}

func (s *goBackN) Send(t lab.Transport, r lab.Record) {
	s.unacked = append(s.unacked, r)
	s.pump(t)
}

func (s *goBackN) Answered(t lab.Transport, res lab.Response) {
	if res.Err != nil {
		s.draining = true
	} else {
		t.Acknowledge(res.Records[0])
		if i := slices.Index(s.unacked, res.Records[0]); i >= 0 {
			s.unacked = slices.Delete(s.unacked, i, i+1)
			if i < s.next {
				s.next--
			}
		}
	}
	if s.draining && t.InFlight() == 0 {
		s.draining, s.next = false, 0
	}
	s.pump(t)
}

func (s *goBackN) pump(t lab.Transport) {
	for !s.draining && s.next < len(s.unacked) && t.InFlight() < lab.MaxInFlight {
		if _, err := t.Produce(s.unacked[s.next]); err != nil {
			return
		}
		s.next++
	}
}

// oneAtATime is max.in.flight.requests.per.connection=1 by hand: one request in
// flight in all, retried until it succeeds. It is slower, and it passes.
type oneAtATime struct{ queue []lab.Record }

func (s *oneAtATime) Send(t lab.Transport, r lab.Record) {
	s.queue = append(s.queue, r)
	if t.InFlight() == 0 {
		t.Produce(s.queue[0])
	}
}

func (s *oneAtATime) Answered(t lab.Transport, res lab.Response) {
	if res.Err == nil {
		t.Acknowledge(s.queue[0])
		s.queue = s.queue[1:]
	}
	if len(s.queue) > 0 {
		t.Produce(s.queue[0])
	}
}

// The answers learners try before the textbook one fail within 200 seeds, each in its
// own way (retrying in order, go-back-N, too); so does a Sender that panics.
// max.in.flight=1 passes.
func TestRetriesOtherAnswers(t *testing.T) {
	l, _ := Find("ordered-retries")
	for _, c := range []struct {
		code Code
		s    func() lab.Sender
		seed uint64 // the first failing seed; 0: none fails
		want checker.Anomaly
	}{
		{"silent", func() lab.Sender { return silent{} }, 1, lab.NeverAcknowledged},
		{"fire-and-forget", func() lab.Sender { return fireAndForget{} }, 1, checker.Unseen},
		{"panics", func() lab.Sender { return panicky{} }, 1, lab.NeverAcknowledged},
		{"go-back-n", func() lab.Sender { return &goBackN{} }, 11, lab.Reordered},
		{"one-at-a-time", func() lab.Sender { return &oneAtATime{} }, 0, ""},
	} {
		senders[c.code] = c.s
		var res Result
		for seed := uint64(1); seed <= 200 && !res.Failed(); seed++ {
			res = l.RunSeed(seed, c.code)
		}
		delete(senders, c.code)
		if c.seed == 0 {
			if res.Failed() {
				t.Errorf("%s: seed %d fails with %v (err %v)", c.code, res.Seed, res.Failures, res.Err)
			}
			continue
		}
		if res.Seed != c.seed || res.Err != nil || len(res.Failures) == 0 || res.Failures[0] != c.want {
			t.Errorf("%s: first failing seed %d with %v (err %v), want seed %d with %s", c.code, res.Seed, res.Failures, res.Err, c.seed, c.want)
		}
	}
}

// The determinism check reads a Sender as it reads a Handler: a learner's file that
// reads the clock, ranges over a map of in-flight requests or imports another lab's
// package is refused, each line named.
func TestRetriesDeterminismCheck(t *testing.T) {
	src := `package starter

import (
	"time"

	other "mqsim/labs/idempotent-consumer"
	lab "mqsim/labs/ordered-retries"
)

type sender struct{ flying map[string]lab.RequestID }

func (s *sender) Send(t lab.Transport, r lab.Record) {
	for k := range s.flying {
		_ = k
	}
	_ = time.Since(time.Time{}) > lab.RequestTimeout
	var _ other.Handler
}
`
	ps, err := CheckFS(fstest.MapFS{"sender.go": {Data: []byte(src)}}, "labs/ordered-retries/starter", "mqsim/labs/ordered-retries")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	f := "labs/ordered-retries/starter/sender.go"
	want := []string{
		f + ":6: imports mqsim/labs/idempotent-consumer: a lab's code may import only its lab's package, mqsim/labs/ordered-retries",
		f + ":13: " + whyMapIter,
		f + ":16: time.Since " + whyClock,
		f + ":16: time.Time " + whyClock,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
