package history

import (
	"encoding/binary"
	"sort"
)

// A gateway session records two ops for every record its clients produce: millions
// in a long session. Kept as Ops, each send is structs of pointers (the op and its
// value) that the world's goroutine builds and the collector scans on every cycle;
// in a produce-heavy session that cost more than the three replicas' appends. So a
// Recorder keeps what it records as runs: a batch's sends are one run (their
// records packed in one SendBlock, which a client may build on its own goroutine),
// their completions another, and any other op is a run of its own, kept whole.
// History builds the Ops of what was recorded since it was last called, once.

// run is ops recorded together, at consecutive indexes.
type run struct {
	first int // index of the run's first op
	n     int
	time  int64
	// process is the ops' process, typ their type (index in types).
	process int
	typ     uint8
	// whole is the index in Recorder.whole of the run's one op if it is not a
	// send; -1 for a run of sends, whose fields follow.
	whole int32
	// tp and block are a run of invocations' partition (index in Recorder.tps)
	// and records (index in Recorder.blocks).
	tp, block int32
	// invoke is, on a run of completions, the invocation its first op
	// completes; op k completes invoke+k. offset is the first op's offset (an
	// ok send's), op k's offset+k; NoOffset when not learnt. err is their
	// error (index in Recorder.errs), -1 for none.
	invoke int
	offset int64
	err    int32
}

// types are the op types a run's typ indexes.
var types = [...]Type{Invoke, Ok, Fail, Info}

func typeIndex(t Type) uint8 {
	for i, u := range types {
		if u == t {
			return uint8(i)
		}
	}
	panic("history: op type " + string(t))
}

// runOf returns the index in Recorder.runs of the run holding op i.
func (r *Recorder) runOf(i int) int {
	return sort.Search(len(r.runs), func(k int) bool { return r.runs[k].first > i }) - 1
}

// SendBlock is the records of sends invoked together (Recorder.InvokeSends), packed
// in one pointer-free block: each record's key and value, length-prefixed.
type SendBlock struct {
	n int
	b []byte
}

// PackSends packs n records, record(i) giving the key and value of the i-th. It
// copies them, and needs no recorder: a client may pack where its records are.
func PackSends(n int, record func(i int) (key, value []byte)) SendBlock {
	size := 0
	for i := range n {
		k, v := record(i)
		size += len(k) + len(v) + 2*binary.MaxVarintLen32
	}
	b := make([]byte, 0, size)
	for i := range n {
		k, v := record(i)
		b = appendSend(b, k, v)
	}
	return SendBlock{n: n, b: b}
}

// appendSend appends a record's key and value to a block's bytes, length-prefixed.
func appendSend[S string | []byte](b []byte, key, value S) []byte {
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(len(value)))
	return append(b, value...)
}

// unpack calls f with each record's key and value, in order: parts of one string.
func (s SendBlock) unpack(f func(key, value string)) {
	all, at := string(s.b), 0
	field := func() string {
		n, k := binary.Uvarint(s.b[at:])
		at += k + int(n)
		return all[at-int(n) : at]
	}
	for range s.n {
		key := field()
		f(key, field())
	}
}

// intern numbers distinct values (partitions, error texts) in the order first met.
type intern[K comparable] struct {
	index map[K]int32
	all   []K
	last  int32 // the last value numbered: it often comes again at once
}

func (t *intern[K]) of(k K) int32 {
	if len(t.all) > 0 && t.all[t.last] == k {
		return t.last
	}
	i, ok := t.index[k]
	if !ok {
		if t.index == nil {
			t.index = make(map[K]int32)
		}
		i = int32(len(t.all))
		t.index[k] = i
		t.all = append(t.all, k)
	}
	t.last = i
	return i
}
