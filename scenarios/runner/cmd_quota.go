package runner

import (
	"fmt"
	"strings"
	"time"

	"mqsim/model/broker"
	"mqsim/model/client"
	"mqsim/model/proto"
	"mqsim/sim"
)

// Back-pressure and quotas: the producer's buffer.memory and max.block.ms settings, the
// quota command and show quotas.

// Producer settings of back-pressure (listed in producerSettings).
var (
	bufferMemorySetting = setting{"buffer-memory", "buffer.memory: bytes the producer's accumulator may hold, e.g. 32MiB (default) or 64KiB", func(a *Args, c *proto.Config) error {
		s, err := a.String("buffer-memory", "")
		if err != nil || s == "" {
			return err
		}
		n, err := sim.ParseSize(s)
		if err != nil {
			return fmt.Errorf("buffer-memory=: %v", err)
		}
		c.Producer.BufferMemory = n
		return nil
	}}
	maxBlockSetting = durSetting("max-block", "max.block.ms: how long a send waits for buffer memory before it fails (60s)", func(c *proto.Config) *time.Duration { return &c.Producer.MaxBlock })
)

func init() {
	register(&Command{
		Name:  "quota",
		Usage: "quota client=NAME|default [produce=RATE] [fetch=RATE]",
		Help: "set a client id's byte-rate quotas on every broker (Kafka's producer_byte_rate and consumer_byte_rate, e.g. 10KB/s; " +
			"0 or absent: none; client=default is the default entity for client ids without their own); the client id is the client's name",
		Keys: []string{"client", "produce", "fetch"},
		Run:  cmdQuota,
	})
	showSubjects["quotas"] = showQuotas
}

func cmdQuota(r *Runner, a *Args) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	name, err := a.Required("client")
	if err != nil {
		return "", err
	}
	if name == "default" {
		name = proto.DefaultClientID
	}
	q := proto.ClientQuota{ClientID: name}
	for _, f := range []struct {
		key string
		p   *int64
	}{{"produce", &q.ProducerByteRate}, {"fetch", &q.ConsumerByteRate}} {
		s, err := a.String(f.key, "")
		if err != nil || s == "" {
			if err != nil {
				return "", err
			}
			continue
		}
		if *f.p, err = sim.ParseRate(s); err != nil {
			return "", fmt.Errorf("%s=: %v", f.key, err)
		}
	}
	var on []string
	for _, id := range c.Brokers {
		if c.W.Status(id) != sim.Up {
			continue
		}
		c.W.Inject(id, proto.AlterClientQuotas{Quota: q}, 0)
		on = append(on, c.W.Name(id))
	}
	c.W.RunFor(0)
	return fmt.Sprintf("quota %s: producer_byte_rate=%s consumer_byte_rate=%s on %s", name,
		sim.FormatRate(q.ProducerByteRate), sim.FormatRate(q.ConsumerByteRate), strings.Join(on, " ")), nil
}

// showQuotas prints the quotas and the brokers that hold them, then what each broker
// measured per client id: the rate over Kafka's sample window now, and the responses it
// throttled.
func showQuotas(r *Runner, a *Args, words []string) (string, error) {
	c, err := r.needCluster()
	if err != nil {
		return "", err
	}
	var quotas, uses []string
	holders := map[string][]string{}
	for i, id := range c.Brokers {
		b := c.Broker(i)
		if b == nil {
			continue
		}
		name := c.W.Name(id)
		for _, q := range b.ClientQuotas() {
			line := fmt.Sprintf("quota %s: producer_byte_rate=%s consumer_byte_rate=%s", q.ClientID,
				sim.FormatRate(q.ProducerByteRate), sim.FormatRate(q.ConsumerByteRate))
			if holders[line] == nil {
				quotas = append(quotas, line)
			}
			holders[line] = append(holders[line], name)
		}
		for _, u := range b.QuotaUses(c.W.Now()) {
			uses = append(uses, quotaUseLine(name, u))
		}
	}
	if len(quotas) == 0 && len(uses) == 0 {
		return "no quotas", nil
	}
	var lines []string
	for _, q := range quotas {
		lines = append(lines, fmt.Sprintf("%s (on %s)", q, strings.Join(holders[q], " ")))
	}
	return strings.Join(append(lines, uses...), "\n"), nil
}

func quotaUseLine(broker string, u broker.QuotaUse) string {
	return fmt.Sprintf("%s: %s %s %d bytes/s over the sample window (quota %d), %d responses throttled, %s in all",
		broker, u.Client, u.Quota, u.Rate, u.Limit, u.Throttles, u.ThrottledFor)
}

// bufferLines describe a producer's buffer.memory in show clients, once a send has had
// to wait for it (before that, nothing: the line would only repeat the default).
func bufferLines(b client.BufferStats) []string {
	if b.Blocks == 0 {
		return nil
	}
	now := "not blocked now"
	if b.Blocked {
		now = fmt.Sprintf("blocked for %s with %d sends behind it", b.BlockedFor, b.Behind)
	}
	return []string{fmt.Sprintf("  buffer.memory %d of %d bytes taken; %d sends waited for memory, %d failed after max.block.ms; %s",
		b.Used, b.Total, b.Blocks, b.Exhausted, now)}
}
