package client

import (
	"testing"
)

// The sync decision is OffsetSyncWriter.PartitionState.update with offset.lag.max 3: the
// first record syncs, then only a record whose translation would be 3 or more behind, a
// skip upstream, or a downstream offset that went back.
func TestMirrorSyncsAsOffsetSyncWriterDoes(t *testing.T) {
	m := &Mirror{cfg: MirrorConfig{OffsetLagMax: 3}}
	p := &mirrorPart{prevUp: -1, prevDown: -1, lastSyncDown: -1}
	due := func(up, down int64) bool {
		d := m.syncDue(p, up, down)
		if d {
			p.should = false // emitted
		}
		return d
	}
	for _, c := range []struct {
		up, down int64
		want     bool
	}{
		{0, 0, true},    // first of the task's life
		{1, 1, false},   // 1-(0+1) = 0 < 3
		{2, 2, false},   // 1
		{3, 3, false},   // 2
		{4, 4, true},    // 3 >= 3: too stale
		{6, 5, true},    // upstream skipped 5 (a compacted or transactional gap)
		{7, 6, false},   //
		{8, 2, true},    // downstream went back (the remote topic was truncated)
		{9, 3, false},   //
		{10, 4, false},  //
		{11, 10, true},  // 10-(2+1) = 7 >= 3
		{12, 11, false}, //
	} {
		if got := due(c.up, c.down); got != c.want {
			t.Errorf("upstream %d downstream %d: sync %t, want %t", c.up, c.down, got, c.want)
		}
	}
}

// Translation is OffsetSyncStore.translateDownstream: the latest sync at or before the
// committed offset, exact when equal, else one past its downstream offset; nothing
// before the first sync.
func TestMirrorTranslatesFromTheLatestSyncAtOrBefore(t *testing.T) {
	syncs := []OffsetSync{{Upstream: 5, Downstream: 0}, {Upstream: 29, Downstream: 24}, {Upstream: 40, Downstream: 30}}
	for _, c := range []struct {
		up, want int64
		ok       bool
	}{
		{4, 0, false},
		{5, 0, true},
		{6, 1, true},
		{29, 24, true},
		{35, 25, true}, // six records past the sync: translated one past it, re-read the rest
		{40, 30, true},
		{100, 31, true},
	} {
		got, ok := translate(syncs, c.up)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("translate(%d) = %d, %t; want %d, %t", c.up, got, ok, c.want, c.ok)
		}
	}
}

func TestRemoteTopicIsAliasDotTopic(t *testing.T) {
	if got := RemoteTopic("us-west", "orders"); got != "us-west.orders" {
		t.Fatalf("got %s", got)
	}
}
