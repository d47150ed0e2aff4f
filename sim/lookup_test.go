package sim

import "testing"

// A node of a site ("west.ctl") finds its own site's "b1" first, and a name its site
// lacks as given; a node without a site finds names as given.
func TestLookupLooksInTheCallersSiteFirst(t *testing.T) {
	w, ids := newProbeWorld(t, fixedConfig(), "b1", "ctl", "west.ctl", "west.b1", "mm2")
	b1, westCtl, westB1, mm2 := ids[0], ids[2], ids[3], ids[4]
	env := func(id NodeID) *Env { return &Env{w: w, id: id} }
	for _, c := range []struct {
		from NodeID
		name string
		want NodeID
	}{
		{westCtl, "b1", westB1},
		{westCtl, "mm2", mm2},
		{westCtl, "west.b1", westB1},
		{b1, "b1", b1},
		{mm2, "b1", b1},
		{mm2, "west.b1", westB1},
	} {
		if got, ok := env(c.from).Lookup(c.name); !ok || got != c.want {
			t.Errorf("%s looks up %s: got %s, want %s", w.Name(c.from), c.name, w.Name(got), w.Name(c.want))
		}
	}
	if _, ok := env(westCtl).Lookup("b9"); ok {
		t.Error("west.ctl found b9, which does not exist")
	}
}
