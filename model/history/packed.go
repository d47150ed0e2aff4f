package history

// A gateway session records two ops for every record its clients produce: millions
// in a long session. Kept as Ops, each send is structs of pointers (the op and its
// value) that the collector scans on every cycle and that write barriers guard
// while it runs; in a produce-heavy session that cost more than the three replicas'
// appends. So a Recorder keeps a send packed: a pointer-free packedOp, its key and
// value copied into a pointer-free byte arena. Any other op is kept whole. History
// builds the Ops of what was recorded since it was last called, once.

// packedOp is one recorded op: a send, or the index of an op kept whole.
type packedOp struct {
	time    int64
	process int
	// invoke is, on a completion, the index of the invocation it completes; -1
	// on an invocation.
	invoke int
	// whole is the index in Recorder.whole of an op that is not a send; -1 for
	// a send, whose fields follow.
	whole int32
	typ   uint8 // index in types
	// tp is the send's partition (index in Recorder.tps), key and value its
	// record's bytes: on the invocation only, as its completions repeat them.
	tp         int32
	key, value span
	offset     int64 // NoOffset when not learnt
	err        int32 // the completion's error (index in Recorder.errs), -1 none
}

// types are the op types a packedOp's typ indexes.
var types = [...]Type{Invoke, Ok, Fail, Info}

func typeIndex(t Type) uint8 {
	for i, u := range types {
		if u == t {
			return uint8(i)
		}
	}
	panic("history: op type " + string(t))
}

// span is where bytes are in an arena: a chunk, and a range in it.
type span struct{ chunk, at, n int32 }

// arena holds bytes in chunks that never move or grow past arenaChunk (longer
// bytes get a chunk of their own).
type arena struct{ chunks [][]byte }

const arenaChunk = 256 << 10

// put copies s into the arena.
func put[S string | []byte](a *arena, s S) span {
	if len(s) == 0 {
		return span{}
	}
	k := len(a.chunks) - 1
	if k < 0 || len(a.chunks[k])+len(s) > cap(a.chunks[k]) {
		a.chunks = append(a.chunks, make([]byte, 0, max(arenaChunk, len(s))))
		k++
	}
	at := len(a.chunks[k])
	a.chunks[k] = append(a.chunks[k], s...)
	return span{chunk: int32(k), at: int32(at), n: int32(len(s))}
}

func (a *arena) get(s span) string {
	if s.n == 0 {
		return ""
	}
	return string(a.chunks[s.chunk][s.at : s.at+s.n])
}

// intern numbers distinct values (partitions, error texts) in the order first met.
type intern[K comparable] struct {
	index map[K]int32
	all   []K
	last  int32 // the last value numbered: a batch's sends are all to one partition
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
