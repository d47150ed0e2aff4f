package sim

import (
	"bytes"
	"slices"
	"testing"
	"time"
)

// writer is a test node that fsyncs on request and counts completions.
type writer struct{ done []FsyncDone }

func (n *writer) Start(env *Env) {}
func (n *writer) Recv(env *Env, from NodeID, msg Message) {
	if d, ok := msg.(FsyncDone); ok {
		n.done = append(n.done, d)
	}
}
func (n *writer) Timer(env *Env, tag TimerTag) {}

func newDiskWorld(cfg DiskConfig) (*World, NodeID) {
	c := DefaultConfig(9)
	c.Disk = cfg
	w := NewWorld(c)
	id := w.MustAddNode("n", func() Node { return &writer{} })
	w.RunFor(0)
	return w, id
}

func TestCrashLosesUnsyncedKeepsSynced(t *testing.T) {
	w, id := newDiskWorld(DiskConfig{FsyncLatency: time.Millisecond})
	env, d := w.Env(id), w.Disk(id)
	d.Append("log", []byte("durable-"))
	env.Fsync("log")
	d.Append("log", []byte("in-flight")) // written after the fsync was issued: not covered
	w.RunFor(5 * time.Millisecond)
	if got := w.Node(id).(*writer).done; len(got) != 1 || got[0].Size != 8 {
		t.Fatalf("fsync completions %v, want one of size 8", got)
	}
	if d.SyncedSize("log") != 8 || d.Size("log") != 17 || d.Unsynced() != 9 {
		t.Fatalf("synced %d size %d unsynced %d", d.SyncedSize("log"), d.Size("log"), d.Unsynced())
	}
	w.Crash(id)
	if got := d.ReadAll("log"); string(got) != "durable-" {
		t.Errorf("after crash %q, want the synced prefix", got)
	}
}

func TestFsyncPendingAtCrashIsLost(t *testing.T) {
	w, id := newDiskWorld(DiskConfig{FsyncLatency: 10 * time.Millisecond})
	w.Disk(id).Append("log", []byte("abc"))
	w.Env(id).Fsync("log")
	w.RunFor(5 * time.Millisecond)
	w.Crash(id)
	w.Restart(id)
	w.RunFor(20 * time.Millisecond)
	if n := w.Disk(id).Size("log"); n != 0 {
		t.Errorf("size %d: an fsync that had not completed made data durable", n)
	}
	if len(w.Node(id).(*writer).done) != 0 {
		t.Errorf("the new incarnation got the old incarnation's fsync completion")
	}
}

func TestTornWriteKeepsAPrefix(t *testing.T) {
	torn := 0
	for seed := uint64(0); seed < 40; seed++ {
		c := DefaultConfig(seed)
		w := NewWorld(c)
		id := w.MustAddNode("n", func() Node { return &writer{} })
		d := w.Disk(id)
		d.Append("log", []byte("synced"))
		d.synced("log", 6, d.wseq, d.files["log"].gen)
		tail := []byte("0123456789abcdef")
		d.Append("log", tail)
		d.TearNextCrash(false)
		w.Crash(id)
		got := d.ReadAll("log")
		if !bytes.HasPrefix(got, []byte("synced")) || !bytes.HasPrefix(tail, got[6:]) {
			t.Fatalf("seed %d: torn file %q is not synced data plus a prefix of the tail", seed, got)
		}
		if len(got) > 6 {
			torn++
		}
	}
	if torn == 0 {
		t.Errorf("no seed kept any part of the torn tail")
	}
}

func TestTornCorruptFlipsAByteInTheSurvivingTail(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		w := NewWorld(DefaultConfig(seed))
		id := w.MustAddNode("n", func() Node { return &writer{} })
		d := w.Disk(id)
		tail := bytes.Repeat([]byte{'x'}, 64)
		d.Append("log", tail)
		if err := w.Apply(Action{Verb: VerbTorn, Nodes: []string{"n"}, Corrupt: true}); err != nil {
			t.Fatal(err)
		}
		w.Crash(id)
		got := d.ReadAll("log")
		if len(got) == 0 {
			continue
		}
		if bytes.Equal(got, tail[:len(got)]) {
			t.Fatalf("seed %d: torn+corrupt left the tail intact: %q", seed, got)
		}
		return
	}
	t.Fatal("no seed kept a torn tail")
}

func TestOverwriteInsideSyncedRegionIsUndoneByCrash(t *testing.T) {
	w, id := newDiskWorld(DiskConfig{FsyncLatency: time.Millisecond})
	d := w.Disk(id)
	d.Append("meta", []byte("epoch=1"))
	w.Env(id).Fsync("meta")
	w.RunFor(2 * time.Millisecond)
	if err := d.WriteAt("meta", 6, []byte("2")); err != nil {
		t.Fatal(err)
	}
	w.Crash(id)
	if got := string(d.ReadAll("meta")); got != "epoch=1" {
		t.Errorf("unsynced overwrite survived a crash: %q", got)
	}
	w.Restart(id)
	w.RunFor(0)
	_ = d.WriteAt("meta", 6, []byte("3"))
	w.Env(id).Fsync("meta")
	w.RunFor(2 * time.Millisecond)
	w.Crash(id)
	if got := string(d.ReadAll("meta")); got != "epoch=3" {
		t.Errorf("synced overwrite lost: %q", got)
	}
}

func TestCorruptFlipsSyncedBytes(t *testing.T) {
	w, id := newDiskWorld(DefaultDisk())
	d := w.Disk(id)
	d.Append("log", []byte{1, 2, 3, 4})
	if err := w.Apply(Action{Verb: VerbCorrupt, Nodes: []string{"n"}, File: "log", Off: 1, Len: 2}); err != nil {
		t.Fatal(err)
	}
	if got := d.ReadAll("log"); !bytes.Equal(got, []byte{1, ^byte(2), ^byte(3), 4}) {
		t.Errorf("got %v", got)
	}
	if err := d.Corrupt("log", 3, 5); err == nil {
		t.Errorf("corrupting past the end should fail")
	}
}

func TestTruncateAndList(t *testing.T) {
	w, id := newDiskWorld(DefaultDisk())
	d := w.Disk(id)
	d.Append("p0/2.log", []byte("b"))
	d.Append("p0/1.log", []byte("abcdef"))
	d.Append("p1/1.log", []byte("z"))
	d.Truncate("p0/1.log", 2)
	if got := d.ReadAll("p0/1.log"); string(got) != "ab" {
		t.Errorf("truncate: %q", got)
	}
	if got := d.List("p0/"); len(got) != 2 || got[0] != "p0/1.log" {
		t.Errorf("list %v", got)
	}
	d.Delete("p0/2.log")
	if d.Exists("p0/2.log") || d.Size("p0/2.log") != -1 {
		t.Errorf("delete did not remove the file")
	}
}

// An fsync issued before a truncation can make durable only what survived the cut; an
// fsync of a deleted file does nothing for a new file of the same name.
func TestFsyncDoesNotCoverWritesAfterATruncation(t *testing.T) {
	w, id := newDiskWorld(DiskConfig{FsyncLatency: time.Millisecond})
	d, env := w.Disk(id), w.Env(id)
	d.Append("f", bytes.Repeat([]byte{1}, 100))
	env.Fsync("f")
	d.Truncate("f", 40)
	d.Append("f", bytes.Repeat([]byte{2}, 62))
	w.RunFor(5 * time.Millisecond)
	if got := d.SyncedSize("f"); got != 40 {
		t.Errorf("synced %d, want 40: bytes written after the fsync was issued became durable", got)
	}
	d.Append("g", bytes.Repeat([]byte{1}, 50))
	env.Fsync("g")
	d.Delete("g")
	d.Append("g", bytes.Repeat([]byte{2}, 80))
	w.RunFor(5 * time.Millisecond)
	if got := d.SyncedSize("g"); got != 0 {
		t.Errorf("re-created file has %d synced bytes from the old file's fsync", got)
	}
}

func TestTruncateBelowAnOverwriteThenCrash(t *testing.T) {
	w, id := newDiskWorld(DiskConfig{FsyncLatency: time.Millisecond})
	d := w.Disk(id)
	d.Append("f", bytes.Repeat([]byte{1}, 100))
	w.Env(id).Fsync("f")
	w.RunFor(5 * time.Millisecond)
	if err := d.WriteAt("f", 80, []byte{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}); err != nil {
		t.Fatal(err)
	}
	d.Truncate("f", 50)
	w.Crash(id) // must not panic
	if got := d.ReadAll("f"); !bytes.Equal(got, bytes.Repeat([]byte{1}, 50)) {
		t.Errorf("after crash: %v", got)
	}
}

// TestKillKeepsThePageCacheCrashDoesNot shows the two process faults side by side: a
// killed process's unsynced writes are still there when it restarts (they are in the
// kernel's page cache), and a power loss of the same node afterwards loses them, because
// no fsync ever covered them.
func TestKillKeepsThePageCacheCrashDoesNot(t *testing.T) {
	w, id := newDiskWorld(DiskConfig{FsyncLatency: time.Millisecond})
	env, d := w.Env(id), w.Disk(id)
	d.Append("log", []byte("durable-"))
	env.Fsync("log")
	w.RunFor(5 * time.Millisecond)
	d.Append("log", []byte("cached"))
	env.Fsync("log") // dies with the process: its completion never arrives
	w.Kill(id)
	if w.Status(id) != Down || d.Size("log") != 14 || d.Unsynced() != 6 {
		t.Fatalf("after kill: status %v size %d unsynced %d, want down, 14, 6", w.Status(id), d.Size("log"), d.Unsynced())
	}
	w.Restart(id)
	w.RunFor(5 * time.Millisecond)
	if got := string(d.ReadAll("log")); got != "durable-cached" {
		t.Fatalf("restarted process reads %q, want the cached write too", got)
	}
	if n := len(w.Node(id).(*writer).done); n != 0 {
		t.Fatalf("the new process got %d fsync completions of the old one", n)
	}
	w.Crash(id)
	if got := string(d.ReadAll("log")); got != "durable-" {
		t.Fatalf("after a power loss the log holds %q, want only the synced part", got)
	}
}

// A start count kept on the node's disk is lost with the fsync a power loss beats, so the
// next start would reuse it; Env.Starts never repeats, whether the process was killed or
// its machine lost power.
func TestStartsNeverRepeat(t *testing.T) {
	w, id := newDiskWorld(DiskConfig{FsyncLatency: 10 * time.Millisecond})
	got := []int64{w.Env(id).Starts()}
	for _, stop := range []func(NodeID){w.Crash, w.Kill, w.Crash} {
		stop(id)
		w.Restart(id)
		w.RunFor(time.Millisecond)
		got = append(got, w.Env(id).Starts())
	}
	if want := []int64{1, 2, 3, 4}; !slices.Equal(got, want) {
		t.Errorf("starts %v, want %v", got, want)
	}
}

// Replace is durable at once and atomic: a crash right after keeps the new contents
// whole, and an fsync issued for the old contents completes without effect on them.
func TestReplaceIsDurableAtOnce(t *testing.T) {
	w, id := newDiskWorld(DiskConfig{FsyncLatency: time.Millisecond})
	env, d := w.Env(id), w.Disk(id)
	d.Append("seg", []byte("old-unsynced-bytes"))
	env.Fsync("seg")
	d.Replace("seg", []byte("new"))
	w.RunFor(5 * time.Millisecond)
	if d.SyncedSize("seg") != 3 || d.Size("seg") != 3 {
		t.Fatalf("synced %d size %d, want 3 and 3", d.SyncedSize("seg"), d.Size("seg"))
	}
	w.Crash(id)
	if got := d.ReadAll("seg"); string(got) != "new" {
		t.Errorf("after crash %q, want the replaced contents", got)
	}
}
