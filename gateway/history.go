package gateway

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/model/history"
	"mqsim/model/proto"
	"mqsim/model/wal"
	"mqsim/scenarios/runner"
)

// wireHistory records the clients' operations as the gateway saw them on the wire, in
// mqsim's history format, into the cluster's one recorder: the checkers then judge a
// session exactly as they judge any run (runner.Runner.Judge).
//
//   - send: one op per record of each Produce request, invoked when the request
//     arrives; ok with the offset the response gave (base offset + the record's place in
//     its batch; no offset with acks=0), fail on a definite error, info on an ambiguous
//     one (proto.Error.Ambiguous, as mqsim's own producer judges) or when no answer came
//     in time and the gateway closed the connection. A client's retry is a new request:
//     its records are sent again, and the checkers judge such a value by its surest send.
//   - poll: one op per Fetch response that carries records, invoked and completed when
//     the response is made (the empty long polls in between are no operations); it lists
//     what the client keeps: records at or after the fetch offset, no control records,
//     and for read_committed no record of an aborted transaction.
//   - commit: one op per OffsetCommit request, ok when every partition was committed.
//   - txn: a transactional producer's transaction (KIP-98), one op from its first
//     transactional Produce to the answer to its EndTxn: its sends (with the offsets the
//     responses gave) and the offsets its TxnOffsetCommit sent, ok when a commit was
//     answered, fail when an abort was, info otherwise (an EndTxn with an error, or none
//     before the session ended). The sends of a transactional batch are the
//     transaction's, never plain sends: an aborted transaction's records are acknowledged
//     by the leader, yet no read_committed reader may see them.
//
// A process is one connection (a Kafka client opens several, one per kind of request,
// so one client is several processes). A poll names the group of its connection's
// client: the group the connection itself sent group requests for (a client with one
// connection per broker, as librdkafka's), else the one group that members with the
// same client.id joined (kgo fetches on a connection of its own); otherwise none.
// Two clients of different groups sharing a client.id make their polls group-less,
// and a group-less consumer sharing a member's client.id is counted with that group:
// give clients their own client.id.
//
// It is part of the gateway node's state machine: everything it records follows from
// the requests the node received, so a replay records the same history.
type wireHistory struct {
	rec        *history.Recorder
	newProcess func() int
	processes  map[int]int // connection → process
	calls      map[int64][]pending
	// connGroup is the group each connection last sent a group request for;
	// clientGroups the groups that members with each client.id joined (sorted).
	connGroup    map[int]string
	clientGroups map[string][]string
	// txns are the open transactions, by producer id.
	txns map[int64]*wireTxn
}

// wireTxn is an open transaction: its op and what it did so far.
type wireTxn struct {
	h       history.Handle
	ops     []history.MicroOp
	offsets *history.CommitValue
}

// pending is an open part of a call: the sends of partition tp's batch, ops first to
// first+n-1 (invoked together: history.Recorder.InvokeSends), or the call's commit (op
// first, n 1, no batch). A transactional batch's sends have no ops of their own: txn is
// their transaction, which gains them as steps once the batch is answered.
type pending struct {
	first history.Handle
	n     int
	tp    history.TopicPartition
	batch *wal.Batch
	txn   *wireTxn
}

func newWireHistory(rec *history.Recorder, newProcess func() int) *wireHistory {
	return &wireHistory{rec: rec, newProcess: newProcess, processes: map[int]int{}, calls: map[int64][]pending{},
		connGroup: map[int]string{}, clientGroups: map[string][]string{}, txns: map[int64]*wireTxn{}}
}

// process is the history process of a connection, numbered when it first acts.
func (h *wireHistory) process(conn int) int {
	p, ok := h.processes[conn]
	if !ok {
		p = h.newProcess()
		h.processes[conn] = p
	}
	return p
}

// request records what a request invokes, as it arrives.
func (h *wireHistory) request(now int64, c *call) {
	if h == nil {
		return
	}
	switch req := c.req.Req.(type) {
	case *kmsg.ProduceRequest:
		h.invokeSends(now, c, req)
	case *kmsg.OffsetCommitRequest:
		h.connGroup[c.req.Conn] = req.Group
		var offsets []history.PartitionOffset
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				if t.Topic != "" && p.Partition >= 0 && p.Offset >= 0 {
					offsets = append(offsets, history.PartitionOffset{TopicPartition: history.TopicPartition{Topic: t.Topic, Partition: p.Partition}, Offset: p.Offset})
				}
			}
		}
		if len(offsets) > 0 && req.Group != "" {
			h.calls[c.id] = []pending{{first: h.rec.InvokeCommit(now, h.process(c.req.Conn), req.Group, offsets), n: 1}}
		}
	case *kmsg.JoinGroupRequest:
		h.connGroup[c.req.Conn] = req.Group
		if gs := h.clientGroups[c.req.Header.ClientID]; !slices.Contains(gs, req.Group) {
			gs = append(gs, req.Group)
			slices.Sort(gs)
			h.clientGroups[c.req.Header.ClientID] = gs
		}
	case *kmsg.SyncGroupRequest:
		h.connGroup[c.req.Conn] = req.Group
	case *kmsg.HeartbeatRequest:
		h.connGroup[c.req.Conn] = req.Group
	case *kmsg.OffsetFetchRequest:
		h.connGroup[c.req.Conn] = req.Group
	case *kmsg.TxnOffsetCommitRequest:
		if t := h.txns[req.ProducerID]; t != nil {
			if t.offsets == nil {
				t.offsets = &history.CommitValue{Group: req.Group}
			}
			for _, tp := range req.Topics {
				for _, p := range tp.Partitions {
					t.offsets.Offsets = append(t.offsets.Offsets, history.PartitionOffset{
						TopicPartition: history.TopicPartition{Topic: tp.Topic, Partition: p.Partition}, Offset: p.Offset})
				}
			}
			h.progress(t)
		}
	}
}

// transaction is the open transaction of a transactional batch's producer, begun now if
// it has none.
func (h *wireHistory) transaction(now int64, conn int, req *kmsg.ProduceRequest, pid int64) *wireTxn {
	t := h.txns[pid]
	if t == nil {
		id := ""
		if req.TransactionID != nil {
			id = *req.TransactionID
		}
		t = &wireTxn{h: h.rec.InvokeTxn(now, h.process(conn), id)}
		h.txns[pid] = t
	}
	return t
}

// progress tells the recorder what an open transaction did so far, for a session that
// ends inside it.
func (h *wireHistory) progress(t *wireTxn) {
	h.rec.TxnProgress(t.h, history.Result{TxnOps: t.ops, TxnOffsets: t.offsets})
}

// endTxn completes the producer's transaction from the answer to its EndTxn: committed
// (ok) or aborted (fail) when answered without error; unknown (info) otherwise.
func (h *wireHistory) endTxn(now int64, req *kmsg.EndTxnRequest, code int16, answered bool) {
	t := h.txns[req.ProducerID]
	if t == nil {
		return
	}
	delete(h.txns, req.ProducerID)
	res := history.Result{TxnOps: t.ops, TxnOffsets: t.offsets}
	switch {
	case answered && code == 0 && req.Commit:
		h.rec.Ok(now, t.h, res)
	case answered && code == 0:
		h.rec.Fail(now, t.h, res)
	default:
		res.Error = "EndTxn not answered"
		if answered {
			res.Error = errorName(code)
		}
		h.rec.Info(now, t.h, res)
	}
}

// invokeSends invokes a send per record of each partition's batch. A batch that does
// not decode is answered CORRUPT_MESSAGE and appends nothing: no op.
func (h *wireHistory) invokeSends(now int64, c *call, req *kmsg.ProduceRequest) {
	var open []pending
	decoded := c.req.batches(req)
	for ti, t := range req.Topics {
		for pi, p := range t.Partitions {
			if t.Topic == "" || p.Partition < 0 || decoded.errs[ti][pi] != nil {
				continue
			}
			batch := &decoded.batches[ti][pi]
			o := pending{tp: history.TopicPartition{Topic: t.Topic, Partition: p.Partition}, batch: batch}
			switch {
			case batch.Flags&wal.FlagTransactional != 0:
				o.txn = h.transaction(now, c.req.Conn, req, batch.ProducerID)
			case len(batch.Records) > 0:
				o.first, o.n = h.rec.InvokeSends(now, h.process(c.req.Conn), o.tp, decoded.sends[ti][pi]), len(batch.Records)
			default:
				continue // no record: no send
			}
			open = append(open, o)
		}
	}
	if len(open) > 0 {
		h.calls[c.id] = open
	}
}

// answered records what a call's response says; resp is nil when the request takes no
// response (a produce with acks=0).
func (h *wireHistory) answered(now int64, c *call, resp kmsg.Response) {
	if h == nil {
		return
	}
	open := h.calls[c.id]
	delete(h.calls, c.id)
	switch r := resp.(type) {
	case nil:
		for _, o := range open { // acks=0: sent, offset never learnt
			h.completeBatch(now, o, 0, history.NoOffset)
		}
	case *kmsg.ProduceResponse:
		h.completeSends(now, open, r)
	case *kmsg.OffsetCommitResponse:
		h.completeCommit(now, open, r)
	case *kmsg.FetchResponse:
		h.poll(now, c, r)
	case *kmsg.EndTxnResponse:
		if req, ok := c.req.Req.(*kmsg.EndTxnRequest); ok {
			h.endTxn(now, req, r.ErrorCode, true)
		}
	}
}

// unanswered records that a call got no answer in time: the gateway closed its
// connection, so the client cannot know what happened.
func (h *wireHistory) unanswered(now int64, c *call) {
	if h == nil {
		return
	}
	const why = "no answer in time: the gateway closed the connection"
	for _, o := range h.calls[c.id] {
		switch {
		case o.txn != nil:
			h.completeBatch(now, o, kerr.RequestTimedOut.Code, history.NoOffset)
		case o.batch != nil:
			h.rec.CompleteSends(now, o.first, o.n, history.Info, history.Result{Error: why})
		default:
			h.rec.Info(now, o.first, history.Result{Error: why})
		}
	}
	delete(h.calls, c.id)
	if req, ok := c.req.Req.(*kmsg.EndTxnRequest); ok {
		h.endTxn(now, req, 0, false)
	}
}

func (h *wireHistory) completeSends(now int64, open []pending, resp *kmsg.ProduceResponse) {
	for _, o := range open {
		code, base := kerr.RequestTimedOut.Code, int64(-1)
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if t.Topic == o.tp.Topic && p.Partition == o.tp.Partition {
					code, base = p.ErrorCode, p.BaseOffset
				}
			}
		}
		if code != 0 || base < 0 {
			base = history.NoOffset
		}
		h.completeBatch(now, o, code, base)
	}
}

// completeBatch ends the sends of o's batch, whose first record is at offset base
// (NoOffset: not learnt) unless code is an error: plain sends ok or by their error; a
// transactional batch's sends become steps of its transaction, with their offsets
// when the leader appended them (their outcome is the transaction's).
func (h *wireHistory) completeBatch(now int64, o pending, code int16, base int64) {
	if o.txn == nil {
		t, res := outcome(code)
		if t == history.Ok {
			res.Offset = base
		}
		h.rec.CompleteSends(now, o.first, o.n, t, res)
		return
	}
	for i, r := range o.batch.Records {
		v := history.SendValue{TopicPartition: o.tp, Key: string(r.Key), Value: string(r.Value), Offset: history.NoOffset}
		if code == 0 && base != history.NoOffset {
			v.Offset = base + int64(i)
		}
		o.txn.ops = append(o.txn.ops, history.MicroOp{F: history.Send, Send: &v})
	}
	h.progress(o.txn)
}

func (h *wireHistory) completeCommit(now int64, open []pending, resp *kmsg.OffsetCommitResponse) {
	if len(open) == 0 {
		return
	}
	var worst int16
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 && (worst == 0 || ambiguous(p.ErrorCode)) {
				worst = p.ErrorCode
			}
		}
	}
	if worst == 0 {
		h.rec.Ok(now, open[0].first, history.Result{})
		return
	}
	h.complete(now, open[0].first, worst)
}

// complete ends an op that got an error (outcome).
func (h *wireHistory) complete(now int64, op history.Handle, code int16) {
	switch t, res := outcome(code); t {
	case history.Info:
		h.rec.Info(now, op, res)
	default:
		h.rec.Fail(now, op, res)
	}
}

// outcome is what a request that ended with this Kafka error code did: ok without
// one; info when it may still have taken effect (ambiguous); fail when it certainly
// did not.
func outcome(code int16) (history.Type, history.Result) {
	switch {
	case code == 0:
		return history.Ok, history.Result{}
	case ambiguous(code):
		return history.Info, history.Result{Error: errorName(code)}
	default:
		return history.Fail, history.Result{Error: errorName(code)}
	}
}

// ambiguous reports whether a request that ended with this Kafka error may still have
// taken effect: mqsim's own clients' rule (proto.Error.Ambiguous), and an error the
// gateway could not name.
func ambiguous(code int16) bool {
	return code == kerr.UnknownServerError.Code || proto.Error(errorName(code)).Ambiguous()
}

// errorName is the Kafka name of an error code.
func errorName(code int16) string {
	if e := kerr.ErrorForCode(code); e != nil {
		if ke, ok := e.(*kerr.Error); ok {
			return ke.Message
		}
		return e.Error()
	}
	return fmt.Sprintf("error code %d", code)
}

// groupOf is the group a connection's polls count for (see wireHistory).
func (h *wireHistory) groupOf(c *call) string {
	if g, ok := h.connGroup[c.req.Conn]; ok {
		return g
	}
	if gs := h.clientGroups[c.req.Header.ClientID]; len(gs) == 1 {
		return gs[0]
	}
	return ""
}

// poll records a fetch response's records as one poll, if it carries any.
func (h *wireHistory) poll(now int64, c *call, resp *kmsg.FetchResponse) {
	req, ok := c.req.Req.(*kmsg.FetchRequest)
	if !ok {
		return
	}
	from := map[history.TopicPartition]int64{}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			from[history.TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.FetchOffset
		}
	}
	readCommitted := req.IsolationLevel == 1
	var reads []history.PartitionRecords
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 || len(p.RecordBatches) == 0 || t.Topic == "" || p.Partition < 0 {
				continue
			}
			tp := history.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			if slices.ContainsFunc(reads, func(r history.PartitionRecords) bool { return r.TopicPartition == tp }) {
				continue // a request that names a partition twice is answered twice: one read
			}
			var aborted []kmsg.FetchResponseTopicPartitionAbortedTransaction
			if readCommitted {
				aborted = p.AbortedTransactions
			}
			recs := fetchedRecords(p.RecordBatches, from[tp], aborted)
			if len(recs) > 0 {
				reads = append(reads, history.PartitionRecords{TopicPartition: tp, Records: recs})
			}
		}
	}
	if len(reads) == 0 {
		return
	}
	proc, group := h.process(c.req.Conn), h.groupOf(c)
	var op history.Handle
	if readCommitted {
		op = h.rec.InvokeReadCommittedPoll(now, proc, group)
	} else {
		op = h.rec.InvokePoll(now, proc, group)
	}
	h.rec.Ok(now, op, history.Result{Reads: reads})
}

// fetchedRecords are the records a client keeps of a partition's fetched batches: at or
// after the fetch offset, no control records, and (given the aborted transactions of a
// read_committed fetch) none of an aborted transaction, as Kafka's consumer drops them
// (CompletedFetch: a producer's batches are skipped from its aborted transaction's first
// offset to its abort marker). Bytes that do not decode end the list: the client could
// not read past them either.
func fetchedRecords(raw []byte, from int64, aborted []kmsg.FetchResponseTopicPartitionAbortedTransaction) []history.Record {
	aborted = slices.Clone(aborted)
	slices.SortFunc(aborted, func(a, b kmsg.FetchResponseTopicPartitionAbortedTransaction) int {
		return cmp.Compare(a.FirstOffset, b.FirstOffset)
	})
	abortedProducers := map[int64]bool{}
	var out []history.Record
	for len(raw) > 0 {
		var kb kmsg.RecordBatch
		if err := kb.ReadFrom(raw); err != nil || kb.Length < 0 || int(kb.Length)+12 > len(raw) {
			break
		}
		raw = raw[kb.Length+12:]
		last := kb.FirstOffset + int64(kb.LastOffsetDelta)
		for len(aborted) > 0 && aborted[0].FirstOffset <= last {
			abortedProducers[aborted[0].ProducerID] = true
			aborted = aborted[1:]
		}
		if kb.Attributes&attrControl != 0 {
			delete(abortedProducers, kb.ProducerID) // its marker ends the transaction
			continue
		}
		if kb.Attributes&attrTransactional != 0 && abortedProducers[kb.ProducerID] {
			continue
		}
		records, err := decompressor.Decompress(kb.Records, kgo.CompressionCodecType(kb.Attributes&attrCompression))
		if err != nil {
			break
		}
		for i := int32(0); i < kb.NumRecords && len(records) > 0; i++ {
			r := kbin.Reader{Src: records}
			n := int(r.Varint())
			head := len(records) - len(r.Src)
			if !r.Ok() || n < 0 || head+n > len(records) {
				return out
			}
			var kr kmsg.Record
			if err := kr.ReadFrom(records[:head+n]); err != nil {
				return out
			}
			records = records[head+n:]
			if off := kb.FirstOffset + int64(kr.OffsetDelta); off >= from && off >= 0 {
				out = append(out, history.Record{Offset: off, Value: string(kr.Value)})
			}
		}
	}
	return out
}

// Verdict judges the session now: the checkers on the cluster's history (the operations
// the gateway saw on the wire, and those of any client the scenario runs) and the
// invariant checks, by the settings of the scenario's last check command. It is
// runner.Runner.Judge, the one verdict of every run: serve, replay and the TUI show it.
func (w *World) Verdict() (runner.Verdict, error) {
	return w.Runner.Judge(w.Runner.CheckSettings())
}
