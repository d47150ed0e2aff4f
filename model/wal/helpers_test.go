package wal

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"time"

	"mqsim/sim"
)

// tb is what the helpers need from *testing.T and *rapid.T alike.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// walNode is a tiny node that owns one log: it opens (recovers) it in Start and forwards
// fsync completions, as a broker would. Tests call its log directly between world steps
// and fsync through the world's Env for the node.
type walNode struct {
	dir string
	cfg Config
	log *Log
	rec Recovery
	err error
}

func (n *walNode) Start(env *sim.Env) {
	n.log, n.rec, n.err = Open(env.Disk(), n.dir, n.cfg)
	if n.err == nil {
		fsyncAll(env, n.rec.Sync)
	}
}

func (n *walNode) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	if m, ok := msg.(sim.FsyncDone); ok && n.log != nil {
		n.log.OnSynced(m.File)
	}
}

func (n *walNode) Timer(env *sim.Env, tag sim.TimerTag) {}

func fsyncAll(env *sim.Env, files []string) {
	for _, f := range files {
		env.Fsync(f)
	}
}

// harness is a world with one walNode.
type harness struct {
	t  tb
	w  *sim.World
	id sim.NodeID
}

func newHarness(t tb, seed uint64, cfg Config) *harness {
	t.Helper()
	w := sim.NewWorld(sim.DefaultConfig(seed))
	id := w.MustAddNode("b1", func() sim.Node { return &walNode{dir: "p0", cfg: cfg} })
	h := &harness{t: t, w: w, id: id}
	h.w.RunFor(0) // run Start
	h.mustNode()
	return h
}

func (h *harness) mustNode() *walNode {
	h.t.Helper()
	n, ok := h.w.Node(h.id).(*walNode)
	if !ok || n.log == nil {
		h.t.Fatalf("node not up or log not open: %v", n)
	}
	if n.err != nil {
		h.t.Fatalf("open: %v", n.err)
	}
	return n
}

func (h *harness) log() *Log     { return h.mustNode().log }
func (h *harness) env() *sim.Env { return h.w.Env(h.id) }
func (h *harness) disk() *sim.Disk {
	return h.w.Disk(h.id)
}

// settle runs the world long enough for every requested fsync to complete.
func (h *harness) settle() { h.w.RunFor(10 * time.Millisecond) }

// crashRestart crashes the node (losing or tearing unsynced bytes), restarts it and
// returns the recovery report.
func (h *harness) crashRestart() Recovery {
	h.t.Helper()
	h.w.Crash(h.id)
	h.w.Restart(h.id)
	h.w.RunFor(0)
	return h.mustNode().rec
}

func (h *harness) append(b Batch) AppendResult {
	h.t.Helper()
	res, err := h.log().Append(b)
	if err != nil {
		h.t.Fatalf("append: %v", err)
	}
	fsyncAll(h.env(), res.Sync)
	return res
}

// rec builds a record with a key and value derived from i.
func rec(i int) Record {
	return Record{Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "value-%d", i)}
}

// batchOf builds a leader batch of n records at epoch and time ts; i numbers the records.
func batchOf(epoch int32, ts sim.Time, i, n int) Batch {
	b := Batch{LeaderEpoch: epoch, ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence, Timestamp: ts}
	for j := 0; j < n; j++ {
		b.Records = append(b.Records, rec(i+j))
	}
	return b
}

// readAll reads every batch from the log start.
func readAll(t tb, l *Log) []Batch {
	t.Helper()
	var out []Batch
	off := l.LogStartOffset()
	for steps := 0; off < l.LogEndOffset(); steps++ {
		if steps > 1_000_000 {
			t.Fatal("readAll does not terminate")
		}
		bs, err := l.Read(off, 1<<20)
		if err != nil {
			t.Fatalf("read %d: %v", off, err)
		}
		if len(bs) == 0 {
			t.Fatalf("read %d below log end %d returned nothing", off, l.LogEndOffset())
		}
		out = append(out, bs...)
		off = bs[len(bs)-1].NextOffset()
	}
	return out
}

func sameRecords(a, b []Record) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].Key, b[i].Key) || !bytes.Equal(a[i].Value, b[i].Value) ||
			(a[i].Key == nil) != (b[i].Key == nil) || (a[i].Value == nil) != (b[i].Value == nil) ||
			len(a[i].Headers) != len(b[i].Headers) {
			return false
		}
		for j := range a[i].Headers {
			if a[i].Headers[j].Key != b[i].Headers[j].Key || !bytes.Equal(a[i].Headers[j].Value, b[i].Headers[j].Value) ||
				(a[i].Headers[j].Value == nil) != (b[i].Headers[j].Value == nil) {
				return false
			}
		}
	}
	return true
}

func sameBatch(a, b Batch) bool {
	return a.BaseOffset == b.BaseOffset && a.LeaderEpoch == b.LeaderEpoch && a.ProducerID == b.ProducerID &&
		a.ProducerEpoch == b.ProducerEpoch && a.BaseSequence == b.BaseSequence && a.Timestamp == b.Timestamp &&
		a.Flags == b.Flags && sameRecords(a.Records, b.Records)
}

// checkStructure asserts the log's internal invariants: contiguous segments matching the
// disk, sorted index entries that point at batch starts with the right offsets, spaced by
// more than IndexIntervalBytes.
func checkStructure(t tb, l *Log) {
	t.Helper()
	for i, s := range l.segs {
		if got := l.disk.Size(s.file); got != s.size {
			t.Fatalf("%s: size %d, disk %d", s.file, s.size, got)
		}
		if i > 0 && s.base != l.segs[i-1].next {
			t.Fatalf("%s starts at %d, previous ends at %d", s.file, s.base, l.segs[i-1].next)
		}
		if s.base > s.next {
			t.Fatalf("%s: base %d > next %d", s.file, s.base, s.next)
		}
		prev := int64(0)
		for j, e := range s.index {
			if j > 0 && e.pos-prev <= l.cfg.IndexIntervalBytes {
				t.Fatalf("%s: index entries %d and %d only %d bytes apart", s.file, j-1, j, e.pos-prev)
			}
			if j == 0 && e.pos <= l.cfg.IndexIntervalBytes {
				t.Fatalf("%s: first index entry at byte %d", s.file, e.pos)
			}
			h, err := l.headerAt(s, e.pos)
			if err != nil || h.base != e.offset {
				t.Fatalf("%s: index entry %d (%d@%d) does not point at its batch: %v %v", s.file, j, e.offset, e.pos, h, err)
			}
			prev = e.pos
		}
	}
	if l.durableSegs > 0 && l.durableSegs >= len(l.segs) {
		t.Fatalf("%d segments counted wholly synced of %d: the active one is never counted", l.durableSegs, len(l.segs))
	}
	if known, walked := l.syncedSegmentsOffset(), l.syncedOffsetFrom(0); known != walked {
		t.Fatalf("synced offset %d after the %d segments known durable, %d walking them all", known, l.durableSegs, walked)
	}
	if l.logStart < l.segs[0].base || l.logStart > l.LogEndOffset() {
		t.Fatalf("log start %d outside [%d,%d]", l.logStart, l.segs[0].base, l.LogEndOffset())
	}
}

func crcOf(p []byte) uint32 { return crc32.Checksum(p, castagnoli) }
