package queue_test

import (
	"strings"
	"testing"
	"time"

	"mqsim/model/queue"
	"mqsim/sim"
)

// Every period the broker and its clients re-arm on their own is refused below
// sim.MinTimerPeriod, with the setting, the bound and the reason in the message
// (as the log cluster's are); exactly the bound is accepted.
func TestTimerPeriodsHaveAFloor(t *testing.T) {
	const why = "want at least 1ms (a shorter period fires many times before any message crosses a link"
	short := sim.MinTimerPeriod - 1
	cfg := func(f func(*queue.Config)) queue.Config { c := queue.DefaultConfig(); f(&c); return c }
	for _, tc := range []struct {
		cfg  queue.Config
		want string
	}{
		{cfg(func(c *queue.Config) { c.Heartbeat = short }), "heartbeat=999.999µs: " + why},
		{cfg(func(c *queue.Config) { c.ForwardRetry = time.Nanosecond }), "forward-retry=1ns: " + why},
		{cfg(func(c *queue.Config) { c.Heartbeat, c.ForwardRetry = sim.MinTimerPeriod, sim.MinTimerPeriod }), ""},
	} {
		err := tc.cfg.Validate()
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}

	c := broker(t, 1, func(c *queue.Cluster, top *queue.Topology) error {
		return top.AddQueue(queue.DefaultQueueConfig("jobs"), c.Names)
	})
	consumer := queue.DefaultConsumerConfig("jobs")
	worker := queue.DefaultWorkerConfig("jobs")
	publisher := queue.DefaultPublisherConfig()
	for _, tc := range []struct {
		name string
		add  func() error
		want string
	}{
		{"consumer heartbeat", func() error {
			cc := consumer
			cc.Heartbeat = time.Nanosecond
			_, err := c.AddConsumer("c1", cc)
			return err
		}, "heartbeat=1ns: " + why},
		{"worker poll-every", func() error {
			wc := worker
			wc.PollEvery = time.Nanosecond
			_, err := c.AddWorker("w1", wc)
			return err
		}, "poll-every=1ns: " + why},
		{"worker request timeout", func() error {
			wc := worker
			wc.RequestTimeout = 0
			_, err := c.AddWorker("w2", wc)
			return err
		}, "request-timeout=0s: " + why},
		{"worker extends every half visibility", func() error {
			wc := worker
			wc.Extend, wc.Visibility = true, sim.MinTimerPeriod
			_, err := c.AddWorker("w3", wc)
			return err
		}, "visibility=1ms with extend=true: want at least 2ms"},
		{"publisher confirm timeout", func() error {
			pc := publisher
			pc.ConfirmTimeout = time.Microsecond
			_, err := c.AddPublisher("p1", pc)
			return err
		}, "confirm-timeout=1µs: " + why},
		{"queue consumer-timeout", func() error {
			q := queue.DefaultQueueConfig("q2")
			q.ConsumerTimeout = time.Nanosecond
			return c.Declare(func(top *queue.Topology) error { return top.AddQueue(q, c.Names) }, time.Second)
		}, "consumer-timeout=1ns: want 0 or at least 1ms (the deadline re-arms with every redelivery"},
		{"queue visibility", func() error {
			q := queue.DefaultQueueConfig("q3")
			q.Visibility = time.Nanosecond
			return c.Declare(func(top *queue.Topology) error { return top.AddQueue(q, c.Names) }, time.Second)
		}, "visibility=1ns: want 0 or at least 1ms"},
		{"the bounds themselves", func() error {
			q := queue.DefaultQueueConfig("q4")
			q.ConsumerTimeout, q.Visibility = sim.MinTimerPeriod, 0
			if err := c.Declare(func(top *queue.Topology) error { return top.AddQueue(q, c.Names) }, time.Second); err != nil {
				return err
			}
			cc, wc, pc := consumer, worker, publisher
			cc.Heartbeat, wc.PollEvery, wc.RequestTimeout, pc.ConfirmTimeout = sim.MinTimerPeriod, sim.MinTimerPeriod, sim.MinTimerPeriod, sim.MinTimerPeriod
			wc.Extend, wc.Visibility = true, 2*sim.MinTimerPeriod
			if _, err := c.AddConsumer("c9", cc); err != nil {
				return err
			}
			if _, err := c.AddWorker("w9", wc); err != nil {
				return err
			}
			_, err := c.AddPublisher("p9", pc)
			return err
		}, ""},
	} {
		err := tc.add()
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
