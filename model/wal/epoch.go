package wal

// EpochEntry is one line of the leader epoch cache: leader epoch Epoch wrote its first
// batch (or was assigned, when its leader took over) at StartOffset.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// epochCache is Kafka's LeaderEpochFileCache (storage/.../epoch/LeaderEpochFileCache.java)
// without the file: entries with strictly increasing epochs and strictly increasing start
// offsets. The Log persists it in its checkpoint.
type epochCache []EpochEntry

// assign records that epoch starts at startOffset, as LeaderEpochFileCache.assign does:
// nothing when the latest entry already has this epoch and an earlier or equal start;
// otherwise every entry whose epoch or start offset is not below the new one is removed
// (a warning in Kafka: the log went back, or a follower is being handed an older epoch)
// and the new entry appended. It reports whether the cache changed.
func (c epochCache) assign(epoch int32, startOffset int64) (epochCache, bool) {
	if epoch < 0 || startOffset < 0 {
		invariant("assign epoch %d at %d", epoch, startOffset)
	}
	if n := len(c); n > 0 && c[n-1].Epoch == epoch && c[n-1].StartOffset <= startOffset {
		return c, false
	}
	keep := len(c)
	for keep > 0 && (c[keep-1].Epoch >= epoch || c[keep-1].StartOffset >= startOffset) {
		keep--
	}
	c = append(c[:keep], EpochEntry{Epoch: epoch, StartOffset: startOffset})
	c.check()
	return c, true
}

// truncateFromEnd removes the entries that start at or after endOffset (the log was
// truncated to endOffset).
func (c epochCache) truncateFromEnd(endOffset int64) (epochCache, bool) {
	keep := len(c)
	for keep > 0 && c[keep-1].StartOffset >= endOffset {
		keep--
	}
	return c[:keep], keep != len(c)
}

// truncateFromStart drops the entries wholly below startOffset (the log start moved):
// every entry starting at or before it is removed and the last of them comes back
// starting at startOffset, so the epoch of the first retained offset stays known.
func (c epochCache) truncateFromStart(startOffset int64) (epochCache, bool) {
	n := 0
	for n < len(c) && c[n].StartOffset <= startOffset {
		n++
	}
	if n == 0 || (n == 1 && c[0].StartOffset == startOffset) {
		return c, false
	}
	last := c[n-1]
	last.StartOffset = startOffset
	out := append(epochCache{last}, c[n:]...)
	out.check()
	return out, true
}

// endOffsetFor answers OffsetsForLeaderEpoch exactly as LeaderEpochFileCache.endOffsetFor:
// the largest epoch <= requested that the cache knows and its end offset, which is the
// start offset of the next higher epoch, or logEndOffset when requested is the latest
// epoch. (UndefinedEpoch, UndefinedOffset) when requested is undefined or above every
// known epoch. When no known epoch is <= requested but a higher one is, the answer is
// (requested, start of the lowest epoch): the requester truncates to where this log's
// history begins.
func (c epochCache) endOffsetFor(requested int32, logEndOffset int64) (int32, int64) {
	if requested == UndefinedEpoch || len(c) == 0 {
		return UndefinedEpoch, UndefinedOffset
	}
	if c[len(c)-1].Epoch == requested {
		return requested, logEndOffset
	}
	higher := -1 // first entry with epoch > requested
	for i := range c {
		if c[i].Epoch > requested {
			higher = i
			break
		}
	}
	if higher < 0 {
		return UndefinedEpoch, UndefinedOffset
	}
	if higher == 0 {
		return requested, c[0].StartOffset
	}
	return c[higher-1].Epoch, c[higher].StartOffset
}

// check asserts the cache's invariant: epochs and start offsets strictly increasing.
func (c epochCache) check() {
	for i := 1; i < len(c); i++ {
		if c[i-1].Epoch >= c[i].Epoch || c[i-1].StartOffset >= c[i].StartOffset {
			invariant("epoch cache out of order: %v then %v", c[i-1], c[i])
		}
	}
}

// valid is check for data read from disk: an error, not a panic.
func (c epochCache) valid() bool {
	for i := range c {
		if c[i].Epoch < 0 || c[i].StartOffset < 0 {
			return false
		}
		if i > 0 && (c[i-1].Epoch >= c[i].Epoch || c[i-1].StartOffset >= c[i].StartOffset) {
			return false
		}
	}
	return true
}
