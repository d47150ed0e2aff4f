package sim

// PageSize is the page cache's unit: a read of one byte of a page not in the cache
// brings the whole page in, as Linux's does (it charges only the bytes asked for).
const PageSize = 4096

// pageKey names one page of one file. The file's generation, not its name, tells a
// re-created or replaced file's pages from the old ones, which then age out unread.
type pageKey struct {
	gen  uint64
	page int64
}

// pageCache keeps the most recently used pages of a disk, up to a bound: a doubly linked
// list over a slab (indices, not pointers) with a map from page to slot. Its order comes
// from the sequence of reads and writes only, never from the map's.
type pageCache struct {
	limit int // pages
	slots map[pageKey]int32
	nodes []pageNode
	head  int32 // most recently used, -1 when empty
	tail  int32 // least recently used
}

type pageNode struct {
	key        pageKey
	prev, next int32
}

func newPageCache(bytes int64) *pageCache {
	return &pageCache{limit: int(bytes / PageSize), slots: map[pageKey]int32{}, head: -1, tail: -1}
}

// touch marks the pages of [off, off+n) of a file as just used, bringing in those that
// were missing, and returns how many of the n bytes were missing.
func (c *pageCache) touch(gen uint64, off, n int64) int64 {
	if n <= 0 {
		return 0
	}
	var missed int64
	for p := off / PageSize; p*PageSize < off+n; p++ {
		if c.use(pageKey{gen, p}) {
			continue
		}
		lo, hi := max(off, p*PageSize), min(off+n, (p+1)*PageSize)
		missed += hi - lo
	}
	return missed
}

// use moves the page to the front, adding it (and evicting the least recently used page
// when full) if it was missing; it reports whether it was there.
func (c *pageCache) use(k pageKey) bool {
	if s, ok := c.slots[k]; ok {
		c.unlink(s)
		c.pushFront(s)
		return true
	}
	if c.limit <= 0 {
		return false
	}
	var s int32
	if len(c.nodes) < c.limit {
		s = int32(len(c.nodes))
		c.nodes = append(c.nodes, pageNode{})
	} else {
		s = c.tail
		c.unlink(s)
		delete(c.slots, c.nodes[s].key)
	}
	c.nodes[s].key = k
	c.slots[k] = s
	c.pushFront(s)
	return false
}

func (c *pageCache) unlink(s int32) {
	n := &c.nodes[s]
	if n.prev >= 0 {
		c.nodes[n.prev].next = n.next
	} else {
		c.head = n.next
	}
	if n.next >= 0 {
		c.nodes[n.next].prev = n.prev
	} else {
		c.tail = n.prev
	}
}

func (c *pageCache) pushFront(s int32) {
	n := &c.nodes[s]
	n.prev, n.next = -1, c.head
	if c.head >= 0 {
		c.nodes[c.head].prev = s
	}
	c.head = s
	if c.tail < 0 {
		c.tail = s
	}
}

// cached is how many bytes the cache holds.
func (c *pageCache) cached() int64 { return int64(len(c.slots)) * PageSize }
