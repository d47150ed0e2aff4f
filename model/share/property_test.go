package share

import (
	"fmt"
	"testing"
	"time"

	"mqsim/model/proto"
	"mqsim/sim"

	"pgregory.net/rapid"
)

// Random acquire / acknowledge / expire / release / log-start / persist / rollback /
// failover sequences on one share-partition. A failover rebuilds the partition from the
// last state a successful write persisted, as a new leader does. Checked after every step:
//   - no record that is done (terminal in this leader's window, or persisted terminal) is
//     acquired again;
//   - no delivery count above the limit;
//   - no offset acquired at or past SPSO + the in-flight limit;
//   - the SPSO never moves back within one leader, nor the persisted SPSO across writes.
func TestPartitionProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		lim := Limits{LockDuration: 10 * time.Second, DeliveryCountLimit: rapid.IntRange(2, 4).Draw(rt, "limit"),
			MaxInFlight: rapid.IntRange(1, 6).Draw(rt, "maxInFlight")}
		members := []string{"m1", "m2", "m3"}
		p := NewPartition(key, lim, 0)
		var persisted proto.ShareState
		persistedDone := map[int64]bool{} // offsets a successful write persisted as terminal (or below its SPSO)
		memDone := map[int64]bool{}       // offsets this leader made terminal
		now := sim.Time(0)
		hw, logStart := int64(0), int64(0)
		start := p.Start()

		markPersisted := func(st proto.ShareState) {
			if st.StartOffset < persisted.StartOffset {
				rt.Fatalf("persisted SPSO went back from %d to %d", persisted.StartOffset, st.StartOffset)
			}
			persisted = st
			for off := int64(0); off < st.StartOffset; off++ {
				persistedDone[off] = true
			}
			for _, b := range st.Batches {
				if b.State == proto.Acknowledged || b.State == proto.Archived {
					for off := b.First; off <= b.Last; off++ {
						persistedDone[off] = true
					}
				}
			}
		}
		markMem := func(ts []Transition) {
			for _, tr := range ts {
				if tr.To == proto.Acknowledged || tr.To == proto.Archived {
					memDone[tr.Offset] = true
				}
			}
		}

		steps := rapid.IntRange(1, 80).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			member := rapid.SampledFrom(members).Draw(rt, "member")
			switch op := rapid.IntRange(0, 8).Draw(rt, "op"); op {
			case 0: // produce
				hw += int64(rapid.IntRange(1, 4).Draw(rt, "produce"))
			case 1: // acquire
				before := p.Start()
				for _, r := range p.Acquire(member, hw, rapid.IntRange(1, 5).Draw(rt, "max"), now) {
					if int(r.DeliveryCount) > lim.DeliveryCountLimit {
						rt.Fatalf("delivery count %d above the limit %d", r.DeliveryCount, lim.DeliveryCountLimit)
					}
					for off := r.First; off <= r.Last; off++ {
						if memDone[off] || persistedDone[off] {
							rt.Fatalf("offset %d acquired again after it was done", off)
						}
						if off >= before+int64(lim.MaxInFlight) || off >= hw || off < logStart {
							rt.Fatalf("offset %d acquired outside [%d, min(SPSO %d + %d, hw %d))", off, logStart, before, lim.MaxInFlight, hw)
						}
					}
				}
			case 2: // acknowledge some of what the member holds
				held := p.Held(member)
				if len(held) == 0 {
					break
				}
				off := rapid.SampledFrom(held).Draw(rt, "off")
				typ := proto.AckType(rapid.IntRange(0, 3).Draw(rt, "type"))
				p.Acknowledge(member, ack(off, off, typ))
			case 3: // time passes, locks expire
				now = now.Add(time.Duration(rapid.IntRange(1, 12).Draw(rt, "secs")) * time.Second)
				markMem(p.Expire(now))
			case 4:
				p.ReleaseMember(member)
			case 5, 6: // the write succeeds or fails
				if w, ok := p.NextWrite(); ok {
					if op == 5 {
						markPersisted(w.State)
						markMem(p.Apply(w.ID))
					} else {
						p.Rollback(w.ID)
					}
				}
			case 7: // failover: the new leader reads the persisted state
				q, err := Load(key, lim, persisted)
				if err != nil {
					rt.Fatalf("load %+v: %v", persisted, err)
				}
				q.LogStartMoved(logStart)
				p, memDone, start = q, map[int64]bool{}, q.Start()
			case 8: // retention moves the log start
				if logStart < hw {
					logStart++
					markMem(p.LogStartMoved(logStart))
				}
			}
			if p.Start() < start {
				rt.Fatalf("SPSO went back from %d to %d", start, p.Start())
			}
			start = p.Start()
			if err := p.check(); err != nil {
				rt.Fatal(err)
			}
		}
	})
}

// check is the window's own consistency, for the property test.
func (p *Partition) check() error {
	if int64(len(p.recs)) != p.next-p.start {
		return fmt.Errorf("window [%d, %d) holds %d records", p.start, p.next, len(p.recs))
	}
	if len(p.recs) > 0 && (p.recs[0].state == proto.Acknowledged || p.recs[0].state == proto.Archived) {
		return fmt.Errorf("the SPSO %d did not move past a terminal record", p.start)
	}
	return nil
}
