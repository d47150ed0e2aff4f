package tui

import "testing"

// The replica strip's tail shows the LSO only while an open transaction holds it below
// the HW, so runs without transactions read as before.
func TestStripTailShowsLSOBelowHW(t *testing.T) {
	m := Model{st: newStyles(true)}
	part := PartView{ISR: []string{"b1"}}
	if got := m.stripTail(part, "b1", ReplicaView{Hosted: true, HW: 5, LSO: 5, LEO: 6, Synced: 6}); got != " HW 5 LEO 6" {
		t.Errorf("no open transaction: %q", got)
	}
	if got := m.stripTail(part, "b1", ReplicaView{Hosted: true, HW: 5, LSO: 2, LEO: 6, Synced: 6}); got != " LSO 2 HW 5 LEO 6" {
		t.Errorf("open transaction from 2: %q", got)
	}
}
