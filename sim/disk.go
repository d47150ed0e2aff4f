package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// DiskConfig shapes a node's disk.
type DiskConfig struct {
	FsyncLatency time.Duration
	FsyncJitter  time.Duration
	// Torn is the probability that a crash tears the unsynced tail of each file instead of
	// losing it whole: a random prefix of it survives.
	Torn PPM
	// Corrupt is the probability that a torn tail also has a byte flipped in what survived.
	Corrupt PPM
}

// DefaultDisk is an SSD-like disk: fsync in 2ms plus up to 1ms, crashes lose unsynced
// bytes cleanly.
func DefaultDisk() DiskConfig {
	return DiskConfig{FsyncLatency: 2 * time.Millisecond, FsyncJitter: time.Millisecond}
}

func (c DiskConfig) String() string {
	return fmt.Sprintf("fsync=%s jitter=%s torn=%dppm corrupt=%dppm", c.FsyncLatency, c.FsyncJitter, c.Torn, c.Corrupt)
}

// undo remembers bytes overwritten inside the durable prefix, so a crash before the next
// fsync can put them back.
type undo struct {
	off  int64
	old  []byte
	wseq uint64
}

type file struct {
	gen    uint64 // tells a re-created file from the one an fsync was issued for
	data   fileBytes
	synced int64 // this prefix survives a crash
	undos  []undo
	// cuts are truncations since the last fsync that covered them: an fsync issued
	// before a cut can make durable only what the file kept through it.
	cuts []cut
	// issued is the length the last fsync was issued for: with a write cost, the bytes
	// below it are already on their way to the platter.
	issued int64
	// spans are the writes stored at another size than their bytes (AppendStored), by
	// offset: the costs see the file in stored bytes (storedAt).
	spans []storedSpan
}

// storedSpan is an append of n bytes at off that the disk stores as size bytes: a batch
// its producer compressed, whose bytes mqsim keeps uncompressed. savedBefore is what the
// earlier spans of the file saved (their n - size, summed).
type storedSpan struct {
	off, n, size, savedBefore int64
}

// storedAt maps an offset of the file's bytes to the same place in its stored bytes,
// which the disk's write throughput and the page cache count: the identity for a file
// without spans, and proportional inside a span.
func (f *file) storedAt(x int64) int64 {
	if len(f.spans) == 0 {
		return x
	}
	i, _ := slices.BinarySearchFunc(f.spans, x, func(s storedSpan, x int64) int {
		if s.off <= x {
			return -1
		}
		return 1
	})
	if i == 0 { // every span starts after x
		return x
	}
	s := f.spans[i-1]
	if x >= s.off+s.n {
		return x - s.savedBefore - (s.n - s.size)
	}
	return s.off - s.savedBefore + (x-s.off)*s.size/s.n
}

// storedLen is the stored size of [off, off+n).
func (f *file) storedLen(off, n int64) int64 { return f.storedAt(off+n) - f.storedAt(off) }

// cutSpans forgets what the spans say beyond size: the file was cut there.
func (f *file) cutSpans(size int64) {
	for len(f.spans) > 0 {
		last := &f.spans[len(f.spans)-1]
		switch {
		case last.off >= size:
			f.spans = f.spans[:len(f.spans)-1]
			continue
		case last.off+last.n > size:
			n := size - last.off
			last.size, last.n = last.size*n/last.n, n
		}
		return
	}
}

type cut struct {
	wseq uint64
	size int64
}

// Disk is one node's files. Bytes written are visible at once but durable only after an
// fsync completes; a crash loses (or tears) the rest. Creating, truncating and deleting a
// file are durable at once: mqsim simplifies metadata operations to atomic and synchronous.
type Disk struct {
	cfg   DiskConfig
	files map[string]*file
	// names are the files' names, sorted: List reads the ones under a prefix without
	// looking at every file (a broker opening one of a thousand partitions lists its own).
	names []string
	wseq  uint64 // counts writes, to tell which an fsync covers
	gens  uint64 // counts file creations
	// tearNext makes the next crash tear every unsynced tail, whatever Torn says;
	// corruptNext also flips a byte in what survives.
	tearNext, corruptNext bool

	// ch is the world's bookkeeping of costs (costs.go), shared by every disk; owner
	// is the disk's node: only its handlers' reads are charged (and move pages), not a
	// view's or a checker's.
	ch    *charging
	owner NodeID
	// cache is the page cache while reads are charged (nil otherwise, and after a
	// crash until the next read or write); cacheSize is the PageCache it was made for.
	cache     *pageCache
	cacheSize int64
	// writeFree is when the fsyncs queued on the disk will have written their bytes.
	writeFree Time
	// readCached and readDisk count the bytes the node's handlers read while reads are
	// charged: found in the page cache, and read from the disk (ReadStats).
	readCached, readDisk int64
}

func newDisk(cfg DiskConfig, ch *charging, owner NodeID) *Disk {
	return &Disk{cfg: cfg, files: map[string]*file{}, ch: ch, owner: owner}
}

// pages is the page cache when reads are charged, else nil.
func (d *Disk) pages() *pageCache {
	if d.ch == nil || d.ch.costs.DiskRead <= 0 {
		d.cache = nil
		return nil
	}
	if size := d.ch.costs.PageCache; d.cache == nil || d.cacheSize != size {
		d.cache, d.cacheSize = newPageCache(size), size
	}
	return d.cache
}

// wrote puts the bytes just written in the page cache: writes go through it.
func (d *Disk) wrote(f *file, off, n int64) {
	if c := d.pages(); c != nil {
		c.touch(f.gen, f.storedAt(off), f.storedLen(off, n))
	}
}

// read charges a handler's read of [off, off+n) of f for the bytes not in the cache,
// and brings them in.
func (d *Disk) read(f *file, off, n int64) {
	if d.ch == nil || d.ch.handler != d.owner {
		return
	}
	if c := d.pages(); c != nil {
		n := f.storedLen(off, n)
		missed := c.touch(f.gen, f.storedAt(off), n)
		d.ch.missed += missed
		d.readDisk += missed
		d.readCached += n - missed
	}
}

// ReadStats are the bytes the node's handlers read while reads were charged (Costs.DiskRead):
// from the page cache, and from the disk (which cost time), counted as stored
// (AppendStored). A crash keeps the counts.
func (d *Disk) ReadStats() (cached, disk int64) { return d.readCached, d.readDisk }

// queueWrite queues, behind the fsyncs already queued, the writing of the bytes of the
// file an fsync issued now covers that no earlier fsync covered, and returns when they
// are written.
func (d *Disk) queueWrite(name string, now Time, rate int64) Time {
	f := d.files[name]
	if f == nil {
		return now
	}
	from := max(f.synced, f.issued)
	n := f.storedLen(from, f.data.len()-from)
	f.issued = f.data.len()
	d.writeFree = max(now, d.writeFree).Add(perSecond(n, rate))
	return d.writeFree
}

// CachedBytes is how many bytes the page cache holds (0 while reads are not charged).
func (d *Disk) CachedBytes() int64 {
	if d.cache == nil {
		return 0
	}
	return d.cache.cached()
}

// Config is the disk's configuration.
func (d *Disk) Config() DiskConfig { return d.cfg }

// SetConfig replaces the disk's configuration.
func (d *Disk) SetConfig(cfg DiskConfig) { d.cfg = cfg }

func (d *Disk) open(name string) *file {
	f := d.files[name]
	if f == nil {
		d.gens++
		f = &file{gen: d.gens}
		d.files[name] = f
		i, _ := slices.BinarySearch(d.names, name)
		d.names = slices.Insert(d.names, i, name)
	}
	return f
}

// Append adds p at the end of the file (creating it) and returns the offset it starts at.
func (d *Disk) Append(name string, p []byte) int64 { return d.AppendStored(name, p, int64(len(p))) }

// AppendStored appends p as Append does, stored as size bytes: the disk's write
// throughput and the page cache count size bytes for it, as a disk holding p compressed
// would (a batch its producer compressed: mqsim keeps its records as they are). What is
// read back is p. A file appended to with Append only costs what it holds, as before.
func (d *Disk) AppendStored(name string, p []byte, size int64) int64 {
	f := d.open(name)
	off := f.data.len()
	n := int64(len(p))
	if size = max(size, 0); size != n && n > 0 {
		saved := int64(0)
		if k := len(f.spans); k > 0 {
			last := f.spans[k-1]
			saved = last.savedBefore + last.n - last.size
		}
		f.spans = append(f.spans, storedSpan{off: off, n: n, size: size, savedBefore: saved})
	}
	f.data.append(p)
	d.wseq++
	d.wrote(f, off, n)
	return off
}

// StoredSize is the file's size as stored (AppendStored), or -1 if it does not exist.
func (d *Disk) StoredSize(name string) int64 {
	f := d.files[name]
	if f == nil {
		return -1
	}
	return f.storedAt(f.data.len())
}

// Replace gives the file new contents, durable at once, as one atomic step: what a
// writer gets by writing a new file, fsyncing it and renaming it over the old one (Kafka's
// log cleaner swaps a cleaned segment in this way). It counts as a metadata operation,
// which mqsim makes atomic and synchronous; a crash keeps either the old or the new
// contents, never a mix. An fsync issued for the old contents does nothing to the new.
// The new contents are stored as their bytes (what AppendStored said of the old is gone).
func (d *Disk) Replace(name string, p []byte) {
	f := d.open(name)
	d.gens++
	d.wseq++
	f.gen = d.gens
	f.data = fileBytes{}
	f.data.append(p)
	f.synced = int64(len(p))
	f.undos, f.cuts, f.spans = nil, nil, nil
	d.wrote(f, 0, int64(len(p)))
}

// WriteAt writes p at off, extending the file if needed. Offsets beyond the end are
// refused.
func (d *Disk) WriteAt(name string, off int64, p []byte) error {
	f := d.open(name)
	if off < 0 || off > f.data.len() {
		return fmt.Errorf("disk: write at %d beyond end %d of %s", off, f.data.len(), name)
	}
	d.wseq++
	if off < f.synced {
		end := min(off+int64(len(p)), f.synced)
		f.undos = append(f.undos, undo{off: off, old: f.data.slice(off, end), wseq: d.wseq})
	}
	f.data.extend(off + int64(len(p)))
	f.data.writeAt(off, p)
	d.wrote(f, off, int64(len(p)))
	return nil
}

// ReadAt copies bytes from off into p and returns how many it copied (fewer at the end).
func (d *Disk) ReadAt(name string, off int64, p []byte) int {
	f := d.files[name]
	if f == nil || off < 0 || off >= f.data.len() {
		return 0
	}
	n := f.data.readAt(off, p)
	d.read(f, off, int64(n))
	return n
}

// ReadAll returns a copy of the whole file.
func (d *Disk) ReadAll(name string) []byte {
	f := d.files[name]
	if f == nil {
		return nil
	}
	d.read(f, 0, f.data.len())
	return f.data.slice(0, f.data.len())
}

// Size is the file's length, or -1 if it does not exist.
func (d *Disk) Size(name string) int64 {
	f := d.files[name]
	if f == nil {
		return -1
	}
	return f.data.len()
}

// SyncedSize is the length of the file's durable prefix, or -1 if it does not exist.
func (d *Disk) SyncedSize(name string) int64 {
	f := d.files[name]
	if f == nil {
		return -1
	}
	return f.synced
}

// Exists reports whether the file exists.
func (d *Disk) Exists(name string) bool { return d.files[name] != nil }

// Truncate cuts the file to size bytes (or extends it with zeros).
func (d *Disk) Truncate(name string, size int64) {
	f := d.open(name)
	d.wseq++
	if size < f.data.len() {
		f.data.truncate(size)
		f.cutSpans(size)
		f.cuts = append(f.cuts, cut{wseq: d.wseq, size: size})
		kept := f.undos[:0]
		for _, u := range f.undos {
			if u.off < size {
				u.old = u.old[:min(int64(len(u.old)), size-u.off)]
				kept = append(kept, u)
			}
		}
		f.undos = kept
	} else {
		f.data.extend(size)
	}
	f.synced = min(f.synced, size)
}

// Delete removes the file.
func (d *Disk) Delete(name string) {
	if i, found := slices.BinarySearch(d.names, name); found {
		d.names = slices.Delete(d.names, i, i+1)
	}
	delete(d.files, name)
}

// List returns the names of the files that start with prefix, sorted.
func (d *Disk) List(prefix string) []string {
	var names []string
	i, _ := slices.BinarySearch(d.names, prefix) // the first name not below prefix
	for ; i < len(d.names) && strings.HasPrefix(d.names[i], prefix); i++ {
		names = append(names, d.names[i])
	}
	return names
}

// Unsynced is the number of bytes across all files that a crash now would lose.
func (d *Disk) Unsynced() int64 {
	var n int64
	for _, f := range d.files {
		n += f.data.len() - f.synced
	}
	return n
}

// TearNextCrash makes the next crash tear every unsynced tail, and with corrupt also flip
// a byte in the part that survives.
func (d *Disk) TearNextCrash(corrupt bool) { d.tearNext, d.corruptNext = true, corrupt }

// Corrupt flips every byte in [off, off+n) of the file, durable or not: bit rot.
func (d *Disk) Corrupt(name string, off, n int64) error {
	f := d.files[name]
	if f == nil {
		return fmt.Errorf("disk: no file %s", name)
	}
	if off < 0 || n <= 0 || off+n > f.data.len() {
		return fmt.Errorf("disk: corrupt range [%d,%d) outside %s (size %d)", off, off+n, name, f.data.len())
	}
	for i := off; i < off+n; i++ {
		f.data.flip(i)
	}
	return nil
}

// syncPoint is what an fsync issued now will make durable: the file's length, the write
// sequence it covers, and the file's generation.
func (d *Disk) syncPoint(name string) (size int64, wseq, gen uint64) {
	f := d.files[name]
	if f == nil {
		return 0, d.wseq, 0
	}
	return f.data.len(), d.wseq, f.gen
}

// synced completes an fsync and returns the durable length: the first size bytes become
// durable, except what a truncation after the fsync was issued removed, and overwrites
// made before it was issued can no longer be undone by a crash. An fsync of a file since
// deleted (and perhaps re-created) does nothing.
func (d *Disk) synced(name string, size int64, wseq, gen uint64) int64 {
	f := d.files[name]
	if f == nil || f.gen != gen {
		return 0
	}
	keptCuts := f.cuts[:0]
	for _, c := range f.cuts {
		if c.wseq > wseq {
			size = min(size, c.size)
			keptCuts = append(keptCuts, c)
		}
	}
	f.cuts = keptCuts
	f.synced = max(f.synced, min(size, f.data.len()))
	kept := f.undos[:0]
	for _, u := range f.undos {
		if u.wseq > wseq {
			kept = append(kept, u)
		}
	}
	f.undos = kept
	return f.synced
}

// crash applies a crash to the disk and describes what was lost.
func (d *Disk) crash(r *Rand) string {
	tear, corrupt := d.tearNext, d.corruptNext
	d.tearNext, d.corruptNext = false, false
	// The power went: the page cache is empty and queued writes are gone.
	d.cache, d.writeFree = nil, 0
	var lost []string
	for _, name := range d.List("") {
		f := d.files[name]
		f.issued = 0
		for i := len(f.undos) - 1; i >= 0; i-- {
			u := f.undos[i]
			f.data.writeAt(u.off, u.old)
		}
		f.undos = nil
		tail := f.data.len() - f.synced
		if tail == 0 {
			continue
		}
		keep := int64(0)
		if tear || r.Chance(d.cfg.Torn) {
			keep = r.Int64N(tail + 1)
		}
		durable := f.synced
		f.data.truncate(durable + keep)
		f.cutSpans(durable + keep)
		f.synced = f.data.len() // what survived is on the platter now
		note := fmt.Sprintf("%s lost %dB", name, tail-keep)
		if keep > 0 {
			note = fmt.Sprintf("%s torn: kept %dB of %dB unsynced", name, keep, tail)
			if corrupt || r.Chance(d.cfg.Corrupt) {
				at := durable + r.Int64N(keep)
				f.data.flip(at)
				note += fmt.Sprintf(", byte %d corrupt", at)
			}
		}
		lost = append(lost, note)
	}
	if len(lost) == 0 {
		return "no unsynced data"
	}
	return strings.Join(lost, "; ")
}
