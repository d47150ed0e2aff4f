package broker

import (
	"slices"
	"strings"
	"time"

	"mqsim/model/proto"
	"mqsim/sim"
)

// Client quotas (KIP-13, KIP-219), as Kafka's ClientQuotaManager enforces them.
//
// A client id may have a produce and a fetch byte rate (proto.ClientQuota, set by
// AlterClientQuotas; the entity <default> covers client ids without their own). The
// broker measures each client id's rate with Kafka's sampled Rate: quota.window.num (11)
// samples of quota.window.size.seconds (1s); the rate is the samples' sum over the time
// since the oldest sample began, counted as at least 10 full windows (Rate.windowSize).
// A produce request's bytes are recorded when its response is ready
// (KafkaApis.handleProduceRequest records request.sizeInBytes in its response callback);
// a consumer fetch response's bytes when it is ready. If the rate is then over the
// quota, the throttle time is the delay X that brings it back: O*W/(W+X) = T, so
// X = (O-T)/T*W (QuotaUtils.throttleTime). The response carries it, and the broker
// mutes the client's channel for that long: what the client sends meanwhile waits
// (ClientQuotaManager.throttle, ThrottledChannel). A throttled fetch answers empty and
// its bytes are taken back out of the rate (KafkaApis: unrecordQuotaSensor,
// getThrottledResponse). The client also sends that broker nothing until the throttle
// time is over (KIP-219: NetworkClient.maybeThrottle).
//
// Simplifications: the client id is the client's node name; quotas live in each
// broker's memory (Kafka keeps them in the metadata log), so a restarted broker has none;
// an acks=0 produce is not counted; follower fetches are never throttled (Kafka has
// separate replication quotas, not modelled); request-time quotas are not modelled.

const timerQuotaUnmute = 150 // a muted client's throttle time is over; Arg: the client's node id

// quotaKind is the byte rate a quota bounds.
type quotaKind uint8

const (
	quotaProduce quotaKind = iota
	quotaFetch
)

func (k quotaKind) String() string { return [...]string{"produce", "fetch"}[k] }

// rateSample is one of Kafka's SampledStat samples: bytes recorded since start.
type rateSample struct {
	start, lastEvent int64 // ms
	bytes            int64
}

// byteRate is Kafka's Rate over a WindowedSum: up to quota.window.num+1 samples of
// quota.window.size each (the extra one is SampledStat's "overlapping sample").
type byteRate struct {
	samples []rateSample
	current int
	// throttles counts the responses throttled, throttledFor their throttle times.
	throttles    int
	throttledFor time.Duration
}

func windowMs() int64 { return proto.QuotaWindowSize.Milliseconds() }

// record adds bytes at now (SampledStat.record: a complete sample is replaced by a new one).
func (r *byteRate) record(now, bytes int64) {
	if len(r.samples) == 0 {
		r.samples = append(r.samples, rateSample{start: now, lastEvent: now})
	}
	if s := &r.samples[r.current]; now-s.start >= windowMs() {
		r.current = (r.current + 1) % (proto.QuotaWindowNum + 1)
		if r.current >= len(r.samples) {
			r.samples = append(r.samples, rateSample{start: now, lastEvent: now})
		} else {
			r.samples[r.current] = rateSample{start: now, lastEvent: now}
		}
	}
	s := &r.samples[r.current]
	s.bytes += bytes
	s.lastEvent = now
}

// measure purges samples without events in the monitored window and returns the bytes
// they hold and the window they are divided by, in ms (Rate.measure, Rate.windowSize).
func (r *byteRate) measure(now int64) (sum, window int64) {
	expire := proto.QuotaWindowNum * windowMs()
	oldest := now
	for i := range r.samples {
		s := &r.samples[i]
		if now-s.lastEvent >= expire {
			*s = rateSample{start: now, lastEvent: now}
		}
		sum += s.bytes
		oldest = min(oldest, s.start)
	}
	window = now - oldest
	if full, least := window/windowMs(), int64(proto.QuotaWindowNum-1); full < least {
		window += (least - full) * windowMs()
	}
	return sum, max(window, 1)
}

// quotaState is the broker's quotas and what it measured and muted.
type quotaState struct {
	quotas map[string]proto.ClientQuota
	rates  map[quotaKey]*byteRate
	// muted holds, per client node, when its channel is unmuted; held what it sent meanwhile.
	muted map[sim.NodeID]sim.Time
	held  []heldRequest
}

type quotaKey struct {
	client string
	kind   quotaKind
}

type heldRequest struct {
	from sim.NodeID
	msg  sim.Message
}

// onAlterClientQuotas sets a client id's quotas (zero rates remove them).
func (b *Broker) onAlterClientQuotas(env *sim.Env, m proto.AlterClientQuotas) {
	q := &b.quota
	if q.quotas == nil {
		q.quotas, q.rates, q.muted = map[string]proto.ClientQuota{}, map[quotaKey]*byteRate{}, map[sim.NodeID]sim.Time{}
	}
	if m.Quota.ProducerByteRate == 0 && m.Quota.ConsumerByteRate == 0 {
		delete(q.quotas, m.Quota.ClientID)
	} else {
		q.quotas[m.Quota.ClientID] = m.Quota
	}
	sim.Record(env, QuotaSet{Quota: m.Quota})
}

// limit is the quota of kind for a client id: its own, else the default entity's; 0 none.
func (q *quotaState) limit(client string, kind quotaKind) int64 {
	c, ok := q.quotas[client]
	if !ok {
		c = q.quotas[proto.DefaultClientID]
	}
	if kind == quotaProduce {
		return c.ProducerByteRate
	}
	return c.ConsumerByteRate
}

// throttle records bytes against the client's quota of kind and returns the throttle
// time, muting the client's channel for it (0: within quota, or no quota).
func (b *Broker) throttle(env *sim.Env, to sim.NodeID, kind quotaKind, bytes int) time.Duration {
	q := &b.quota
	if len(q.quotas) == 0 {
		return 0
	}
	client := env.NameOf(to)
	limit := q.limit(client, kind)
	if limit <= 0 {
		return 0
	}
	k := quotaKey{client, kind}
	rate := q.rates[k]
	if rate == nil {
		rate = &byteRate{}
		q.rates[k] = rate
	}
	now := time.Duration(env.Now()).Milliseconds()
	rate.record(now, int64(bytes))
	sum, window := rate.measure(now)
	ms := throttleMs(sum, window, limit)
	if ms <= 0 {
		return 0
	}
	if kind == quotaFetch {
		rate.record(now, -int64(bytes)) // the response goes out empty: unrecordQuotaSensor
	}
	d := time.Duration(ms) * time.Millisecond
	rate.throttles++
	rate.throttledFor += d
	until := env.Now().Add(d)
	if until > q.muted[to] {
		q.muted[to] = until
		env.SetTimer(d, sim.TimerTag{Kind: timerQuotaUnmute, Arg: int64(to)})
	}
	sim.Record(env, Throttled{Client: client, Quota: kind.String(), Bytes: bytes, Rate: sum * 1000 / window, Limit: limit, For: d})
	return d
}

// throttleMs is QuotaUtils.throttleTime for sum bytes over window ms against limit
// bytes/s: the rate O = sum*1000/window is over the quota T when sum*1000 > limit*window,
// and X = (O-T)/T*W ms = (sum*1000 - limit*window)/limit, rounded half up as Math.round.
// Integers keep it exact on every platform.
func throttleMs(sum, window, limit int64) int64 {
	over := sum*1000 - limit*window
	if over <= 0 {
		return 0
	}
	return (2*over + limit) / (2 * limit)
}

// holdMuted keeps what a muted client sends on its connection to the broker until it is
// unmuted, and reports whether it did. Only that connection is muted: a Kafka client talks
// to its group or transaction coordinator over a connection of its own (the coordinator's
// node id is Integer.MAX_VALUE - broker id), so coordinator requests pass.
func (b *Broker) holdMuted(env *sim.Env, from sim.NodeID, msg sim.Message) bool {
	q := &b.quota
	if len(q.muted) == 0 {
		return false
	}
	switch msg.(type) {
	case proto.ProduceRequest, proto.FetchRequest, proto.MetadataRequest, proto.ListOffsets:
	default:
		return false
	}
	until, ok := q.muted[from]
	if !ok {
		return false
	}
	q.held = append(q.held, heldRequest{from, msg})
	sim.Record(env, HeldMuted{Client: env.NameOf(from), Until: until})
	return true
}

// unmute ends a client's throttle time, if no later one replaced it, and handles what it
// sent meanwhile, in order.
func (b *Broker) unmute(env *sim.Env, client sim.NodeID) {
	q := &b.quota
	if until, ok := q.muted[client]; !ok || until > env.Now() {
		return
	}
	delete(q.muted, client)
	var mine []heldRequest
	q.held = slices.DeleteFunc(q.held, func(h heldRequest) bool {
		if h.from == client {
			mine = append(mine, h)
			return true
		}
		return false
	})
	for _, h := range mine {
		b.Recv(env, h.from, h.msg)
	}
}

// sendProduceResponse answers a produce, with the throttle time of the client's quota.
func (b *Broker) sendProduceResponse(env *sim.Env, to sim.NodeID, m proto.ProduceRequest, resp proto.ProduceResponse) {
	resp.ThrottleTime = b.throttle(env, to, quotaProduce, m.WireSize())
	env.Send(to, resp)
}

// sendFetchResponse answers a fetch with records; a consumer over its fetch quota gets
// it empty, with the throttle time. Followers are not throttled.
func (b *Broker) sendFetchResponse(env *sim.Env, to sim.NodeID, m proto.FetchRequest, resp proto.FetchResponse) {
	if m.ReplicaID != proto.ConsumerReplica {
		env.Send(to, resp)
		return
	}
	b.capFetch(env, to, &resp)
	if d := b.throttle(env, to, quotaFetch, resp.WireSize()); d > 0 {
		resp.Batches, resp.AbortedTransactions, resp.SkippedTo, resp.SkippedEpoch = nil, nil, 0, 0
		resp.ThrottleTime = d
	}
	env.Send(to, resp)
}

// QuotaUse is one client id's quota of one kind on a broker and what it measured, for views.
type QuotaUse struct {
	Client       string
	Quota        string // "produce" or "fetch"
	Limit        int64  // bytes per second
	Rate         int64  // bytes per second over the sample window now
	Throttles    int
	ThrottledFor time.Duration
}

// ClientQuotas returns the client ids' quotas set on this broker, by client id.
func (b *Broker) ClientQuotas() []proto.ClientQuota {
	var out []proto.ClientQuota
	for _, q := range b.quota.quotas {
		out = append(out, q)
	}
	slices.SortFunc(out, func(x, y proto.ClientQuota) int { return strings.Compare(x.ClientID, y.ClientID) })
	return out
}

// QuotaUses returns what the broker measured for every client id it has counted against
// a quota, by client id then kind. It measures copies: measuring purges old samples, and
// a view must not change the run.
func (b *Broker) QuotaUses(now sim.Time) []QuotaUse {
	var out []QuotaUse
	ms := time.Duration(now).Milliseconds()
	for k, r := range b.quota.rates {
		view := byteRate{samples: slices.Clone(r.samples)}
		sum, window := view.measure(ms)
		out = append(out, QuotaUse{Client: k.client, Quota: k.kind.String(), Limit: b.quota.limit(k.client, k.kind),
			Rate: sum * 1000 / window, Throttles: r.throttles, ThrottledFor: r.throttledFor})
	}
	slices.SortFunc(out, func(x, y QuotaUse) int {
		if c := strings.Compare(x.Client, y.Client); c != 0 {
			return c
		}
		return strings.Compare(x.Quota, y.Quota)
	})
	return out
}

// capFetch bounds a consumer's fetch response by its fetch quota over the sample window,
// keeping at least one batch: a larger response would be throttled even with nothing
// else recorded, answered empty, and asked for again for ever. Kafka caps the fetch's
// max bytes the same way (KafkaApis.handleFetchRequest: maxQuotaWindowBytes,
// ClientQuotaManager.getMaxValueInQuotaWindow: quota x (quota.window.num-1) x window);
// mqsim cuts whole batches off the response, whose wire size is what the quota counts.
func (b *Broker) capFetch(env *sim.Env, to sim.NodeID, resp *proto.FetchResponse) {
	limit := b.quota.limit(env.NameOf(to), quotaFetch)
	if len(b.quota.quotas) == 0 || limit <= 0 {
		return
	}
	most := int(limit * (proto.QuotaWindowNum - 1) * windowMs() / 1000)
	for len(resp.Batches) > 1 && resp.WireSize() > most {
		resp.Batches = resp.Batches[:len(resp.Batches)-1]
		resp.SkippedTo, resp.SkippedEpoch = 0, 0 // what was left out after them is not skipped now
	}
}
