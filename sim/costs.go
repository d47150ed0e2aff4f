package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Costs are what the simulated hardware charges in time: the bandwidth of the links, the
// throughput of the disks with a page cache per node, and the CPU a node spends on each
// message it receives. The zero value charges nothing, and it is every world's default,
// so runs without costs are exactly what they were before costs existed. RealisticCosts
// is the one place where realistic figures live.
//
// What each cost does:
//   - Bandwidth: every directed link serialises what it carries. A message starts
//     transmitting when the link is free and takes WireSize/Bandwidth, then the link's
//     latency (and jitter) as before. A message's size is what it says (Sized), or
//     HeaderSize.
//   - DiskWrite: an fsync costs the bytes of the file not yet synced (nor already on
//     their way by an earlier fsync) divided by DiskWrite, after the fsyncs already
//     queued on the node's disk, then the fsync latency as before. Writes themselves go
//     to the page cache and cost nothing.
//   - DiskRead and PageCache: each node keeps the PageCache bytes it most recently wrote
//     or read, in 4 KiB pages (least recently used goes first). A read, by a handler of
//     the node, of bytes not in the cache costs their size divided by DiskRead and brings
//     them in. A crash (a power loss) empties the cache; a Kill keeps it, as Linux's page
//     cache outlives a killed process.
//   - CPUPerRequest and CPUPerRecord: a node that receives a message from another node
//     is busy for CPUPerRequest plus CPUPerRecord for each record it carries (Counted),
//     so that a batch of many records pays one request's cost. What World.Inject hands
//     a node (a scenario's command: the application calling the client) costs nothing.
//     A message may cost more (Laboured: decompressing a batch), and a handler may spend
//     CPU on its own work (Env.Work: compressing a batch); both only with CPU costs on.
//
// Time spent reading the disk or on the CPU makes the node busy: a node does one thing
// at a time. A message that arrives while its node is busy waits until the node is free,
// and what the node sends while busy leaves when the busy time is over. This is the
// simplification: a real broker has several network and I/O threads and overlaps disk
// reads with other work; mqsim's node is one thread that blocks on them.
type Costs struct {
	Bandwidth     int64         // bytes per second of every directed link; 0: unlimited
	DiskWrite     int64         // bytes per second an fsync writes; 0: free
	DiskRead      int64         // bytes per second of reads that miss the page cache; 0: free, and no cache is kept
	PageCache     int64         // bytes of page cache per node (with DiskRead set)
	CPUPerRequest time.Duration // busy time per message received
	CPUPerRecord  time.Duration // busy time per record a received message carries
}

// RealisticCosts are the figures of a small commodity cluster:
//   - links of 1 Gbit/s (125 MB/s), gigabit Ethernet;
//   - disk writes at 500 MB/s: SATA III's 6 Gbit/s caps a SATA SSD's sequential
//     writes near 550 MB/s;
//   - disk reads at 2 GB/s: a PCIe 3.0 x4 NVMe SSD reads 2 to 3.5 GB/s sequentially;
//   - a page cache of 1 GiB per node: Kafka's operations guide sizes memory to buffer
//     about 30 seconds of writes (docs "Hardware and OS: Memory"); a teaching run that
//     wants a lagging consumer to read the disk sets it smaller;
//   - 1µs of CPU per record: LinkedIn's "2 million writes per second on three cheap
//     machines" (Kreps, 2014) measured 821,557 records of 100 bytes per second from one
//     producer thread, about 1.2µs a record end to end;
//   - 50µs of CPU per request: an estimate, the order of an idle broker's request
//     handling time (kafka.network RequestMetrics' LocalTimeMs on a quiet cluster is
//     well under a millisecond).
func RealisticCosts() Costs {
	return Costs{
		Bandwidth:     125_000_000,
		DiskWrite:     500_000_000,
		DiskRead:      2_000_000_000,
		PageCache:     1 << 30,
		CPUPerRequest: 50 * time.Microsecond,
		CPUPerRecord:  time.Microsecond,
	}
}

// Zero reports whether the costs charge nothing.
func (c Costs) Zero() bool { return c == Costs{} }

// CPU reports whether receiving a message costs CPU time.
func (c Costs) CPU() bool { return c.CPUPerRequest > 0 || c.CPUPerRecord > 0 }

func (c Costs) String() string {
	if c.Zero() {
		return "off"
	}
	return fmt.Sprintf("bandwidth=%s disk-write=%s disk-read=%s page-cache=%s cpu-request=%s cpu-record=%s",
		FormatRate(c.Bandwidth), FormatRate(c.DiskWrite), FormatRate(c.DiskRead), FormatSize(c.PageCache),
		FormatDuration(c.CPUPerRequest), FormatDuration(c.CPUPerRecord))
}

// Check reports a cost that cannot be: a negative one, or a duration beyond MaxDuration.
func (c Costs) Check() error {
	for _, v := range []struct {
		name string
		n    int64
	}{{"bandwidth", c.Bandwidth}, {"disk-write", c.DiskWrite}, {"disk-read", c.DiskRead}, {"page-cache", c.PageCache},
		{"cpu-request", int64(c.CPUPerRequest)}, {"cpu-record", int64(c.CPUPerRecord)}} {
		if v.n < 0 {
			return fmt.Errorf("%s=%d: want zero (off) or more", v.name, v.n)
		}
	}
	if c.CPUPerRequest > MaxDuration || c.CPUPerRecord > MaxDuration {
		return fmt.Errorf("cpu costs above %s", FormatDuration(MaxDuration))
	}
	return nil
}

// Sized is a message that knows its size on the wire, in bytes. A message that is not
// Sized counts as HeaderSize bytes.
type Sized interface{ WireSize() int }

// Counted is a message that carries records: the CPU cost per record applies to each.
type Counted interface{ RecordCount() int }

// Laboured is a message whose handling costs CPU beyond CPUPerRequest and CPUPerRecord:
// a compressed batch the receiver decompresses to validate. ExtraCPU is charged with the
// other CPU costs, only when they are on (Costs.CPU).
type Laboured interface{ ExtraCPU() time.Duration }

// HeaderSize is the size on the wire of a message that does not say its own: about a
// TCP/IP header (40 bytes) and a Kafka request header with a short client id (24).
const HeaderSize = 64

// WireSize is the size of msg on the wire: its own (Sized), or HeaderSize.
func WireSize(msg Message) int {
	if s, ok := msg.(Sized); ok {
		return s.WireSize()
	}
	return HeaderSize
}

// perSecond is how long n units take at rate units per second, rounded up to whole
// nanoseconds so that a cost is never free. It saturates at MaxDuration.
func perSecond(n, rate int64) time.Duration {
	if n <= 0 || rate <= 0 {
		return 0
	}
	if n > int64(MaxDuration)/int64(time.Second) {
		return MaxDuration // n*1e9 would overflow; no run gets near
	}
	return time.Duration((n*int64(time.Second) + rate - 1) / rate)
}

// charging is the kernel's bookkeeping of costs, kept in the world and shared by its
// disks, so that what runs for every event touches one place.
type charging struct {
	costs Costs
	on    bool // costs is not zero: what runs for every event checks this alone
	// handler is the node whose handler runs now, or External: only its disk reads are
	// charged.
	handler NodeID
	// missed counts the bytes the running handler read from outside its page cache.
	missed int64
}

// SetCosts changes what the hardware charges, from now on. The page caches start empty
// when reads become charged; links and disks already busy finish what they had queued.
func (w *World) SetCosts(c Costs) {
	w.ch.costs, w.ch.on = c, !c.Zero()
	w.cfg.Costs = c
	if !w.ch.on {
		for i := range w.nodes {
			w.nodes[i].busyUntil = 0 // nothing is charged any more
		}
	}
}

// Costs are what the hardware charges now.
func (w *World) Costs() Costs { return w.ch.costs }

// Busy is the time until which the node is busy (the CPU cost of what it received, its
// disk reads); at or before now, it is free.
func (w *World) Busy(id NodeID) Time { return w.nodes[id].busyUntil }

// handle starts a handler of the node.
func (w *World) handle(id NodeID) {
	if w.ch.on {
		w.ch.handler = id
	}
}

// charge ends a handler of the node: the disk reads it made keep the node busy.
func (w *World) charge(slot *nodeSlot) {
	if w.ch.on {
		w.ch.handler = External
		w.chargeReads(slot)
	}
}

// chargeReads makes the node busy for the time of the disk reads its running handler
// made so far, counted from the end of what it was already busy with. The check is kept
// apart so that it inlines: it runs for every event.
func (w *World) chargeReads(slot *nodeSlot) {
	if w.ch.missed != 0 {
		w.chargeMissed(slot)
	}
}

//go:noinline
func (w *World) chargeMissed(slot *nodeSlot) {
	slot.busyUntil = max(slot.busyUntil, w.now).Add(perSecond(w.ch.missed, w.ch.costs.DiskRead))
	w.ch.missed = 0
}

// units for sizes and rates, in the order FormatSize tries them: the largest decimal
// unit that divides exactly, else the largest binary one.
var sizeUnits = []struct {
	name string
	n    int64
}{
	{"GB", 1_000_000_000}, {"MB", 1_000_000}, {"KB", 1_000},
	{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"Gbit", 125_000_000}, {"Mbit", 125_000}, {"Kbit", 125},
	{"B", 1},
}

// ParseSize reads a number of bytes: 4096, 512B, 64KiB, 1GiB, 10MB, 1Gbit (bits count
// an eighth of a byte; KB, MB, GB are powers of 1000, KiB, MiB, GiB of 1024).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	num := strings.TrimRightFunc(t, func(r rune) bool { return r < '0' || r > '9' })
	unit := t[len(num):]
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q: want a number of bytes such as 4096, 64KiB, 10MB or 1Gbit", s)
	}
	if unit == "" {
		return n, nil
	}
	for _, u := range sizeUnits {
		if u.name == unit {
			if n > (1<<62)/u.n {
				return 0, fmt.Errorf("%q: too large", s)
			}
			return n * u.n, nil
		}
	}
	return 0, fmt.Errorf("%q: unknown unit %q; want B, KB, MB, GB, KiB, MiB, GiB, Kbit, Mbit or Gbit", s, unit)
}

// ParseRate reads bytes per second: a size (ParseSize) with an optional "/s", such as
// 1Gbit/s or 500MB/s.
func ParseRate(s string) (int64, error) {
	n, err := ParseSize(strings.TrimSuffix(strings.TrimSpace(s), "/s"))
	if err != nil {
		return 0, fmt.Errorf("%q: want bytes per second such as 125MB/s or 1Gbit/s", s)
	}
	return n, nil
}

// FormatSize writes a number of bytes in the largest decimal unit that divides it
// exactly, else the largest binary one: FormatSize(125_000_000) is "125MB",
// FormatSize(1<<30) is "1GiB".
func FormatSize(n int64) string {
	if n == 0 {
		return "0"
	}
	for _, u := range sizeUnits {
		if strings.HasSuffix(u.name, "bit") {
			continue
		}
		if n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// FormatRate writes bytes per second as FormatSize does, with "/s"; 0 is "off".
func FormatRate(n int64) string {
	if n == 0 {
		return "off"
	}
	return FormatSize(n) + "/s"
}
