package client

import (
	"fmt"
	"time"

	"mqsim/model/history"
	"mqsim/sim"
)

// Back-pressure on the application: buffer.memory and max.block.ms.
//
// Kafka's RecordAccumulator takes the memory of a new batch, max(batch.size, the record's
// size), from its BufferPool (buffer.memory, 32 MiB) and gives it back when the batch
// completes (RecordAccumulator.append and deallocate). A record that fits in a partition's
// open batch needs no memory; one that needs a new batch when the pool has too little
// waits in send() for up to max.block.ms (60s) for completed batches to give memory back,
// then send() returns a failed future: BufferExhaustedException, a TimeoutException,
// "Failed to allocate N bytes within the configured max blocking time M ms"
// (BufferPool.allocate; KafkaProducer.doSend hands an ApiException to the callback and
// the future instead of throwing it).
//
// The application calls send() from one thread: while one send is blocked, its later
// sends have not been made yet. mqsim's producer receives a scenario's sends as
// messages, so it keeps the ones that arrive while a send is blocked in arrival order
// (appQueue) and makes each only when the one before it returned. A send enters the
// history when the application makes it: a blocked send is invoked when it starts to
// wait, and fails when max.block.ms is over (certainly not written); the sends behind it
// are invoked later. Simplifications: the memory a batch takes counts key and value bytes
// only (as batch.size does in mqsim), and a send waiting for metadata does not count
// against max.block.ms (mqsim's waiting sends time out after delivery.timeout.ms).

// Back-pressure timers.
const (
	ptBlock = firstOwnTimer + 60 // max.block.ms is over for the blocked send; Arg = record number
)

// backPressure is the producer's buffer.memory accounting and its blocked application.
type backPressure struct {
	used int64 // bytes taken by batches that have not completed
	// blocked is the send the application is blocked in, nil when none; blockedAt when it
	// began to wait, blockT its max.block.ms timer.
	blocked   *record
	blockedAt sim.Time
	blockT    sim.TimerID
	// appQueue holds the sends made after the blocked one, in order: the application has
	// not reached them yet.
	appQueue []Send
	// exhausted counts the sends that failed for want of memory.
	exhausted int
	// blocks counts the sends that had to wait for memory.
	blocks int
}

// BufferStats describe the accumulator's memory and the application's blocking, for views.
type BufferStats struct {
	Used, Total int64
	Blocked     bool          // a send waits for memory now
	BlockedFor  time.Duration // how long it has waited
	Behind      int           // sends the application has not made yet, queued behind it
	Blocks      int           // sends that waited for memory
	Exhausted   int           // sends that failed after max.block.ms
}

// Buffer returns the accumulator's memory and blocking figures.
func (p *Producer) Buffer(now sim.Time) BufferStats {
	bp := &p.bp
	s := BufferStats{Used: bp.used, Total: p.cfg.BufferMemory, Blocked: bp.blocked != nil, Behind: len(bp.appQueue),
		Blocks: bp.blocks, Exhausted: bp.exhausted}
	if bp.blocked != nil {
		s.BlockedFor = time.Duration(now - bp.blockedAt)
	}
	return s
}

// appBusy reports whether the application is blocked in a send: a new send queues behind.
func (p *Producer) appBusy(m Send) bool {
	if p.bp.blocked == nil {
		return false
	}
	p.bp.appQueue = append(p.bp.appQueue, m)
	return true
}

// batchMemory is what appending r takes from buffer.memory: nothing if it fits in its
// partition's open batch, else a new batch's max(batch.size, record size).
func (p *Producer) batchMemory(r *record) int64 {
	size := len(r.key) + len(r.value)
	if r.delay == 0 {
		if ps := p.parts[r.tp]; ps != nil {
			if n := len(ps.queue); n > 0 && ps.queue[n-1].open() && ps.queue[n-1].bytes+size <= p.cfg.BatchSize {
				return 0
			}
		}
	}
	return int64(max(p.cfg.BatchSize, size))
}

// mustBlock reports whether r needs more memory than is free; if so the application
// blocks in its send: the send is invoked in the history now and waits up to
// max.block.ms. A producer built without buffer.memory (0) never blocks.
func (p *Producer) mustBlock(env *sim.Env, r *record) bool {
	need := p.batchMemory(r)
	if p.cfg.BufferMemory <= 0 || need == 0 || p.bp.used+need <= p.cfg.BufferMemory {
		return false
	}
	p.invoke(env, r)
	p.bp.blocked, p.bp.blockedAt = r, env.Now()
	p.bp.blocks++
	p.bp.blockT = env.SetTimer(p.cfg.MaxBlock, sim.TimerTag{Kind: p.cl.timerBase + ptBlock, Arg: r.n})
	sim.Record(env, SendBlocked{Key: r.key, Value: r.value, TP: r.tp, Need: need, Used: p.bp.used, Total: p.cfg.BufferMemory, MaxBlock: p.cfg.MaxBlock})
	return true
}

// acceptOrBlock accepts a send that waited for metadata, now placed, unless the
// application is blocked: it then queues behind the blocked send, or is the one that
// blocks. (Kafka's send() waits for metadata itself, so these sends were made one after
// another; mqsim's producer holds them until the metadata comes.)
func (p *Producer) acceptOrBlock(env *sim.Env, r *record) {
	if p.bp.blocked != nil {
		p.bp.appQueue = append(p.bp.appQueue, Send{Topic: r.tp.Topic, Key: r.key, Value: r.value, Partition: r.tp.Partition,
			Tags: r.tags, Delay: r.delay, Tombstone: r.tombstone})
		return
	}
	if !p.mustBlock(env, r) {
		p.accept(env, r)
	}
}

// reserve takes a new batch's memory; release gives it back when the batch completes.
func (p *Producer) reserve(b *batch, firstRecord int) {
	b.memory = int64(max(p.cfg.BatchSize, firstRecord))
	p.bp.used += b.memory
}

func (p *Producer) release(b *batch) {
	p.bp.used -= b.memory
	b.memory = 0
}

// maybeUnblock accepts the blocked send once completed batches gave back enough memory,
// and lets the application go on with its next sends. It runs before every drain, which
// follows every completion, so a send unblocks after the completion that freed its
// memory is recorded, as Kafka deallocates a batch after its callbacks ran.
func (p *Producer) maybeUnblock(env *sim.Env) {
	r := p.bp.blocked
	if r == nil || p.bp.used+p.batchMemory(r) > p.cfg.BufferMemory {
		return
	}
	env.CancelTimer(p.bp.blockT)
	p.bp.blocked, p.bp.blockT = nil, 0
	sim.Record(env, SendUnblocked{Value: r.value, TP: r.tp, Waited: time.Duration(env.Now() - p.bp.blockedAt)})
	p.accept(env, r)
	p.resumeApp(env)
}

// onBlockTimeout fails the blocked send (BufferExhaustedException) and lets the
// application make its next sends.
func (p *Producer) onBlockTimeout(env *sim.Env, n int64) {
	r := p.bp.blocked
	if r == nil || r.n != n {
		return
	}
	p.bp.blocked, p.bp.blockT = nil, 0
	p.bp.exhausted++
	p.stats.Failed++
	need := p.batchMemory(r)
	why := fmt.Sprintf("Failed to allocate %d bytes within the configured max blocking time %d ms. Total memory: %d bytes. Available memory: %d bytes",
		need, p.cfg.MaxBlock.Milliseconds(), p.cfg.BufferMemory, p.cfg.BufferMemory-p.bp.used)
	p.sendDone(env, r, history.Fail, history.Result{Error: why})
	sim.Record(env, BufferExhausted{Value: r.value, TP: r.tp, Need: need, Available: p.cfg.BufferMemory - p.bp.used, MaxBlock: p.cfg.MaxBlock})
	p.resumeApp(env)
	p.drain(env)
}

// resumeApp makes the sends queued behind a blocked one, until one blocks again.
func (p *Producer) resumeApp(env *sim.Env) {
	for len(p.bp.appQueue) > 0 && p.bp.blocked == nil {
		m := p.bp.appQueue[0]
		p.bp.appQueue = p.bp.appQueue[1:]
		p.makeSend(env, m)
	}
}
