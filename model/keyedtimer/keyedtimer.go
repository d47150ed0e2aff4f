// Package keyedtimer is the timer table of a state machine a broker hosts (the group and
// transaction coordinators): each timer gets a key from the host, the table remembers what
// the key is for, and the host hands the key back when the timer fires. A coordinator can
// then tell its own timers from the broker's (Owns) and forget them all when it is
// unloaded (Reset). Lookups only: nothing iterates the table, so no output depends on map
// order.
package keyedtimer

import (
	"time"

	"mqsim/sim"
)

// Host is what the table needs from the broker.
type Host interface {
	// NewKey returns a key no other timer of the broker uses.
	NewKey() int64
	// SetTimer arranges for the broker to hand key back after d.
	SetTimer(d time.Duration, key int64) sim.TimerID
	CancelTimer(id sim.TimerID)
}

// Table maps the keys of pending timers to what each is for.
type Table[R any] struct{ refs map[int64]R }

// Set arms a timer for ref after d and returns it with its key.
func (t *Table[R]) Set(h Host, d time.Duration, ref R) (sim.TimerID, int64) {
	if t.refs == nil {
		t.refs = map[int64]R{}
	}
	key := h.NewKey()
	t.refs[key] = ref
	return h.SetTimer(d, key), key
}

// Cancel stops the timer and forgets its key.
func (t *Table[R]) Cancel(h Host, id sim.TimerID, key int64) {
	h.CancelTimer(id)
	delete(t.refs, key)
}

// Owns reports whether key is one of the table's pending timers.
func (t *Table[R]) Owns(key int64) bool {
	_, ok := t.refs[key]
	return ok
}

// Fired takes a timer that fired out of the table: what it was for, if it is one of its.
func (t *Table[R]) Fired(key int64) (R, bool) {
	ref, ok := t.refs[key]
	if ok {
		delete(t.refs, key)
	}
	return ref, ok
}

// Reset forgets every timer (the broker drops a coordinator's timers with it).
func (t *Table[R]) Reset() { t.refs = nil }
