package raft

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"

	"mqsim/model/wal"
	"mqsim/sim"
)

// What Raft keeps on its node's disk, under Config.Dir:
//
//	state.0, state.1    the term and the vote, one CRC'd record each; writes alternate
//	                    between the two files and are never more than one in flight,
//	                    so the newest durable record always survives a torn write
//	log/                a wal.Log: one batch per entry, the entry's term as the batch's
//	                    leader epoch, its type as the record key, its data as the value
//	snap-<index>        a snapshot: header, host data, CRC; the newest valid one counts
//
// Index i of the Raft log (counting from 1) is offset i-1 of the wal.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ---- term and vote ----

const (
	stateMagic   = 0x52465453 // "RFTS"
	stateRecSize = 4 + 8 + 8 + 4 + 4
)

// hardState is what a vote or a term change must make durable before the node acts on it.
type hardState struct {
	gen  uint64 // counts writes; the valid record with the highest gen wins
	term int64
	vote sim.NodeID
}

func encodeState(s hardState) []byte {
	p := make([]byte, stateRecSize)
	binary.BigEndian.PutUint32(p[0:], stateMagic)
	binary.BigEndian.PutUint64(p[4:], s.gen)
	binary.BigEndian.PutUint64(p[12:], uint64(s.term))
	binary.BigEndian.PutUint32(p[20:], uint32(int32(s.vote)))
	binary.BigEndian.PutUint32(p[24:], crc32.Checksum(p[:24], castagnoli))
	return p
}

func decodeState(p []byte) (hardState, bool) {
	if len(p) != stateRecSize || binary.BigEndian.Uint32(p[0:]) != stateMagic ||
		binary.BigEndian.Uint32(p[24:]) != crc32.Checksum(p[:24], castagnoli) {
		return hardState{}, false
	}
	return hardState{
		gen:  binary.BigEndian.Uint64(p[4:]),
		term: int64(binary.BigEndian.Uint64(p[12:])),
		vote: sim.NodeID(int32(binary.BigEndian.Uint32(p[20:]))),
	}, true
}

// stateStore writes the hard state. want is the newest state; durable the gen of the
// newest record known synced. One write is in flight at a time; a change made meanwhile
// is written when it completes (group commit).
type stateStore struct {
	files    [2]string
	want     hardState
	durable  uint64
	inflight uint64 // gen being synced, 0 when none
	slot     int    // the file the next write goes to: never the one holding the newest durable record
}

func (s *stateStore) init(dir string) { s.files = [2]string{dir + "/state.0", dir + "/state.1"} }

func (s *stateStore) file(slot int) string { return s.files[slot] }

func (s *stateStore) isFile(name string) bool { return name == s.files[0] || name == s.files[1] }

// load reads both files and keeps the valid record with the highest gen. It returns the
// file it used ("" when neither held a valid record) and the record's gen, for the trace.
func (s *stateStore) load(d *sim.Disk) (file string, gen uint64) {
	best, bestSlot, found := hardState{vote: None}, 0, false
	for slot := 0; slot < 2; slot++ {
		if hs, ok := decodeState(d.ReadAll(s.file(slot))); ok && (!found || hs.gen > best.gen) {
			best, bestSlot, found = hs, slot, true
		}
	}
	s.want, s.durable = best, best.gen
	s.slot = 1 - bestSlot
	if !found {
		s.slot = 0
		return "", 0
	}
	return s.file(bestSlot), best.gen
}

// set records a new term and vote and starts writing it unless a write is in flight.
func (s *stateStore) set(env *sim.Env, term int64, vote sim.NodeID) {
	if s.want.term == term && s.want.vote == vote {
		return
	}
	s.want = hardState{gen: s.want.gen + 1, term: term, vote: vote}
	if s.inflight == 0 {
		s.write(env)
	}
}

func (s *stateStore) write(env *sim.Env) {
	name := s.file(s.slot)
	d := env.Disk()
	d.Truncate(name, 0)
	d.Append(name, encodeState(s.want))
	env.Fsync(name)
	s.inflight = s.want.gen
}

// synced handles the completion of the write in flight.
func (s *stateStore) synced(env *sim.Env, size int64) {
	if s.inflight == 0 {
		return
	}
	if size < stateRecSize {
		invariant("state fsync of %s covered %d bytes", s.file(s.slot), size)
	}
	s.durable = s.inflight
	s.inflight = 0
	s.slot = 1 - s.slot
	if s.want.gen > s.durable {
		s.write(env)
	}
}

// ---- snapshots ----

const (
	snapMagic      = 0x52465350 // "RFSP"
	snapHeaderSize = 4 + 8 + 8 + 8
)

func snapName(dir string, index int64) string { return fmt.Sprintf("%s/snap-%020d", dir, index) }

func parseSnapName(dir, name string) (int64, bool) {
	digits, ok := strings.CutPrefix(name, dir+"/snap-")
	if !ok || len(digits) != 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	return n, err == nil && n > 0
}

func encodeSnapshot(s Snapshot) []byte {
	p := make([]byte, snapHeaderSize, snapHeaderSize+len(s.Data)+4)
	binary.BigEndian.PutUint32(p[0:], snapMagic)
	binary.BigEndian.PutUint64(p[4:], uint64(s.Index))
	binary.BigEndian.PutUint64(p[12:], uint64(s.Term))
	binary.BigEndian.PutUint64(p[20:], uint64(len(s.Data)))
	p = append(p, s.Data...)
	return binary.BigEndian.AppendUint32(p, crc32.Checksum(p, castagnoli))
}

func decodeSnapshot(p []byte) (Snapshot, bool) {
	if len(p) < snapHeaderSize+4 || binary.BigEndian.Uint32(p[0:]) != snapMagic {
		return Snapshot{}, false
	}
	n := binary.BigEndian.Uint64(p[20:])
	if n != uint64(len(p)-snapHeaderSize-4) {
		return Snapshot{}, false
	}
	body := p[:len(p)-4]
	if binary.BigEndian.Uint32(p[len(p)-4:]) != crc32.Checksum(body, castagnoli) {
		return Snapshot{}, false
	}
	s := Snapshot{
		SnapshotMeta: SnapshotMeta{Index: int64(binary.BigEndian.Uint64(p[4:])), Term: int64(binary.BigEndian.Uint64(p[12:]))},
		Data:         slices.Clone(p[snapHeaderSize : len(p)-4]),
	}
	if s.Index <= 0 || s.Term <= 0 {
		return Snapshot{}, false
	}
	return s, true
}

// loadSnapshot returns the newest valid snapshot in dir and deletes every other snapshot
// file (older ones, and torn or corrupt ones a crash left); it names the invalid ones.
func loadSnapshot(d *sim.Disk, dir string) (Snapshot, []string) {
	var best Snapshot
	bestName := ""
	var invalid []string
	names := d.List(dir + "/snap-")
	for i := len(names) - 1; i >= 0; i-- { // newest first
		name := names[i]
		idx, ok := parseSnapName(dir, name)
		if bestName == "" && ok {
			if s, valid := decodeSnapshot(d.ReadAll(name)); valid && s.Index == idx {
				best, bestName = s, name
				continue
			}
			invalid = append(invalid, name)
		}
		d.Delete(name)
	}
	return best, invalid
}

// ---- the log ----

// logStore is the Raft log: a wal.Log on disk and, in memory, the entries after the
// snapshot (ents[0] has index snap.Index+1).
type logStore struct {
	wal  *wal.Log
	dir  string
	snap SnapshotMeta // the prefix the durable snapshot covers
	ents []Entry
	// syncing counts log fsyncs in flight; new writes wait for them and go in one fsync.
	syncing int
	// durable is the last index whose entry (and all before it) a crash would keep.
	durable int64
	// want are files the wal asked to have synced (a rolled segment, a checkpoint) that
	// no fsync covers yet.
	want []string
	rec  [1]wal.Record
}

// wants records files the wal returned in a Sync list.
func (l *logStore) wants(files []string) {
	for _, f := range files {
		if !slices.Contains(l.want, f) {
			l.want = append(l.want, f)
		}
	}
}

func (l *logStore) last() int64 { return l.snap.Index + int64(len(l.ents)) }

func (l *logStore) lastTerm() int64 {
	if n := len(l.ents); n > 0 {
		return l.ents[n-1].Term
	}
	return l.snap.Term
}

// term is the term of the entry at i, false when i is compacted or beyond the end.
func (l *logStore) term(i int64) (int64, bool) {
	switch {
	case i == l.snap.Index:
		return l.snap.Term, true
	case i > l.snap.Index && i <= l.last():
		return l.ents[i-l.snap.Index-1].Term, true
	}
	return 0, false
}

// entry returns the entry at i, which must be in memory.
func (l *logStore) entry(i int64) Entry {
	if i <= l.snap.Index || i > l.last() {
		invariant("entry %d outside the log (%d, %d]", i, l.snap.Index, l.last())
	}
	return l.ents[i-l.snap.Index-1]
}

// slice returns a fresh slice of the entries [lo, hi], which must be in memory.
func (l *logStore) slice(lo, hi int64) []Entry {
	if lo > hi {
		return nil
	}
	if lo <= l.snap.Index || hi > l.last() {
		invariant("slice [%d, %d] outside the log (%d, %d]", lo, hi, l.snap.Index, l.last())
	}
	return slices.Clone(l.ents[lo-l.snap.Index-1 : hi-l.snap.Index])
}

func (l *logStore) isFile(name string) bool { return strings.HasPrefix(name, l.dir+"/") }

// append writes entries that continue the log at last()+1.
func (l *logStore) append(now sim.Time, ents []Entry) {
	for _, e := range ents {
		if e.Index != l.last()+1 {
			invariant("append %d after %d", e.Index, l.last())
		}
		if e.Term < l.lastTerm() {
			invariant("append %d with term %d after term %d", e.Index, e.Term, l.lastTerm())
		}
		if e.Term > 1<<31-1 {
			invariant("term %d does not fit a leader epoch", e.Term)
		}
		l.rec[0] = wal.Record{Key: entryKeys[e.Type : e.Type+1], Value: e.Data}
		b := wal.Batch{
			BaseOffset: e.Index - 1, LeaderEpoch: int32(e.Term), ProducerID: wal.NoProducerID,
			ProducerEpoch: wal.NoProducerEpoch, BaseSequence: wal.NoSequence, Timestamp: now, Records: l.rec[:],
		}
		res, err := l.wal.AppendReplica(b)
		if err != nil {
			invariant("wal append of %d: %v", e.Index, err)
		}
		if n := len(l.want); n == 0 || l.want[n-1] != res.File {
			l.wants([]string{res.File})
		}
		l.wants(res.Sync)
		l.ents = append(l.ents, e)
	}
	l.rec[0] = wal.Record{}
}

// entryKeys holds the one-byte record keys of the entry types (the wal copies them).
var entryKeys = []byte{byte(EntryNormal), byte(EntryNoop)}

// truncateFrom removes the entries at and after i (i > snap.Index).
func (l *logStore) truncateFrom(i int64) {
	if i <= l.snap.Index || i > l.last() {
		invariant("truncate from %d outside the log (%d, %d]", i, l.snap.Index, l.last())
	}
	t, err := l.wal.TruncateTo(i - 1)
	if err != nil {
		invariant("wal truncate to %d: %v", i-1, err)
	}
	l.wants(t.Sync)
	l.ents = l.ents[:i-l.snap.Index-1]
	l.refreshDurable()
}

// compact drops the entries up to the durable snapshot s, which the log holds.
func (l *logStore) compact(s SnapshotMeta) {
	if t, ok := l.term(s.Index); !ok || t != s.Term {
		invariant("compact to %d/t%d: log has %d/t%d", s.Index, s.Term, s.Index, t)
	}
	del, err := l.wal.DeleteBefore(s.Index)
	if err != nil {
		invariant("wal delete before %d: %v", s.Index, err)
	}
	l.wants(del.Sync)
	l.ents = slices.Clone(l.ents[s.Index-l.snap.Index:])
	l.snap = s
	l.refreshDurable()
}

// reset empties the log: it restarts after the durable snapshot s.
func (l *logStore) reset(s SnapshotMeta) {
	t, err := l.wal.Reset(s.Index)
	if err != nil {
		invariant("wal reset to %d: %v", s.Index, err)
	}
	l.wants(t.Sync)
	l.ents = nil
	l.snap = s
	l.refreshDurable()
}

func (l *logStore) refreshDurable() {
	l.durable = max(l.snap.Index, min(l.wal.SyncedOffset(), l.last()))
}

// sync starts an fsync of every log file written since the last one, unless one is in
// flight: writes made meanwhile wait for it and share the next (group commit).
func (l *logStore) sync(env *sim.Env) {
	if l.syncing > 0 || len(l.want) == 0 {
		return
	}
	for _, f := range l.want {
		if env.Disk().Exists(f) {
			env.Fsync(f)
			l.syncing++
		}
	}
	l.want = l.want[:0]
}

// synced handles the completion of a log fsync.
func (l *logStore) synced(env *sim.Env) {
	if l.syncing > 0 {
		l.syncing--
	}
	l.refreshDurable()
	if l.syncing == 0 {
		l.sync(env)
	}
}

// open recovers the log in dir, reconciles it with the snapshot s, and loads the
// entries after s into memory. It returns the wal's recovery and whether the log had to
// start over after s, for the trace.
func (l *logStore) open(env *sim.Env, dir string, cfg wal.Config, s SnapshotMeta) (wal.Recovery, LogReset) {
	cfg.Flush = wal.FlushNever
	w, rec, err := wal.Open(env.Disk(), dir, cfg)
	if err != nil {
		invariant("open log %s: %v", dir, err)
	}
	l.wal, l.dir, l.snap, l.ents = w, dir, s, nil
	start, leo := w.LogStartOffset(), w.LogEndOffset()
	reset := LogReset{Snapshot: s}
	switch {
	case start > s.Index:
		reset.Cause, reset.Offset = LogStartsAfterSnapshot, start+1
	case leo < s.Index:
		reset.Cause, reset.Offset = LogEndsBeforeSnapshot, leo
	case s.Index > 0 && start <= s.Index-1:
		if t := l.readTerm(s.Index - 1); t != s.Term {
			reset.Cause, reset.LogTerm = LogTermDiffers, t
		}
	}
	if reset.Cause != NoReset {
		l.reset(s)
	} else {
		l.load(s.Index, leo)
	}
	l.wants(rec.Sync)
	l.refreshDurable()
	return rec, reset
}

// readTerm reads the term of the entry at offset off from the wal.
func (l *logStore) readTerm(off int64) int64 {
	bs, err := l.wal.Read(off, 1)
	if err != nil || len(bs) == 0 {
		invariant("read offset %d: %v", off, err)
	}
	return int64(bs[0].LeaderEpoch)
}

// load reads the wal offsets [from, to) into memory.
func (l *logStore) load(from, to int64) {
	for off := from; off < to; {
		bs, err := l.wal.Read(off, 64<<10)
		if err != nil || len(bs) == 0 {
			invariant("read offset %d: %v", off, err)
		}
		for _, b := range bs {
			if b.BaseOffset < off {
				continue
			}
			if b.BaseOffset != off || len(b.Records) != 1 {
				invariant("batch at %d: base %d, %d records", off, b.BaseOffset, len(b.Records))
			}
			r := b.Records[0]
			if len(r.Key) != 1 {
				invariant("entry %d has key %q", off+1, r.Key)
			}
			e := Entry{Index: off + 1, Term: int64(b.LeaderEpoch), Type: EntryType(r.Key[0]), Data: r.Value}
			if e.Term < l.lastTerm() {
				invariant("entry %d term %d after term %d", e.Index, e.Term, l.lastTerm())
			}
			l.ents = append(l.ents, e)
			off++
		}
	}
}
