package client

import (
	"fmt"
	"strings"
	"time"

	"mqsim/model/proto"
	"mqsim/sim"
)

// fakeShare is the share-group side of the fake brokers: b1 is the group coordinator (one
// member id per client, every partition assigned), and each partition's leader keeps a
// minimal share-partition (acquire what is available, apply acknowledgements of records the
// member holds, archive at the delivery count limit). It logs every share request a broker
// receives, so that a test can check the exact messages a consumer sent. Scripted faults:
// sessionErrs answer ShareFetches with a session error, drop leaves
// ShareFetches unanswered (both by the number of the ShareFetch, from 0), ackErrs answers
// the next acknowledgements with an error.
type fakeShare struct {
	fc          *fakeCluster
	limit       int16
	recs        map[proto.TP]map[int64]*fakeShareRec
	log         []string
	sessionErrs map[int]proto.Error
	drop        map[int]bool
	fetches     int
	ackErrs     []proto.Error
	members     int
}

type fakeShareRec struct {
	state proto.RecordState
	owner string
	count int16
}

func newFakeShare(fc *fakeCluster, limit int16) *fakeShare {
	fs := &fakeShare{fc: fc, limit: limit, recs: map[proto.TP]map[int64]*fakeShareRec{}}
	fc.share = fs
	return fs
}

func (fs *fakeShare) rec(tp proto.TP, off int64) *fakeShareRec {
	if fs.recs[tp] == nil {
		fs.recs[tp] = map[int64]*fakeShareRec{}
	}
	r := fs.recs[tp][off]
	if r == nil {
		r = &fakeShareRec{}
		fs.recs[tp][off] = r
	}
	return r
}

func acksText(acks []proto.PartitionAcks) string {
	var s []string
	for _, pa := range acks {
		var bs []string
		for _, b := range pa.Batches {
			bs = append(bs, b.String())
		}
		s = append(s, pa.TP.String()+"["+strings.Join(bs, " ")+"]")
	}
	return strings.Join(s, " ")
}

func (fs *fakeShare) recv(env *sim.Env, from sim.NodeID, msg sim.Message) bool {
	switch m := msg.(type) {
	case proto.FindCoordinator:
		env.Send(from, proto.FindCoordinatorResponse{CorrelationID: m.CorrelationID, Group: m.Group, Coordinator: fs.fc.brokers[0]})
	case proto.ShareGroupHeartbeat:
		fs.log = append(fs.log, fmt.Sprintf("%s: heartbeat member=%q epoch=%d", env.Name(), m.MemberID, m.MemberEpoch))
		r := proto.ShareGroupHeartbeatResponse{CorrelationID: m.CorrelationID, Group: m.Group, MemberID: m.MemberID,
			MemberEpoch: m.MemberEpoch, HeartbeatInterval: time.Second, HasAssignment: true}
		switch m.MemberEpoch {
		case proto.JoinEpoch:
			fs.members++
			r.MemberID, r.MemberEpoch = fmt.Sprintf("m%d", fs.members), 1
		case proto.LeaveEpoch:
			r.HasAssignment = false
		}
		if r.HasAssignment {
			for _, t := range fs.fc.topics {
				for p := range t.Partitions {
					r.Assignment = append(r.Assignment, proto.TP{Topic: t.Name, Partition: int32(p)})
				}
			}
		}
		env.Send(from, r)
	case proto.ShareFetch:
		fs.log = append(fs.log, fmt.Sprintf("%s: fetch epoch=%d %s acks=%s", env.Name(), m.SessionEpoch, proto.TPList(m.Partitions), acksText(m.Acks)))
		n := fs.fetches
		fs.fetches++
		if fs.drop[n] {
			return true
		}
		if e, ok := fs.sessionErrs[n]; ok {
			env.Send(from, proto.ShareFetchResponse{CorrelationID: m.CorrelationID, Group: m.Group, Error: e})
			return true
		}
		res := proto.ShareFetchResponse{CorrelationID: m.CorrelationID, Group: m.Group}
		for _, pa := range m.Acks {
			res.Partitions = append(res.Partitions, proto.SharePartitionData{TP: pa.TP, AckError: fs.acknowledge(m.MemberID, pa)})
		}
		for _, tp := range m.Partitions {
			i := len(res.Partitions)
			for j, p := range res.Partitions {
				if p.TP == tp {
					i = j
				}
			}
			if i == len(res.Partitions) {
				res.Partitions = append(res.Partitions, proto.SharePartitionData{TP: tp})
			}
			fs.acquire(env, m.MemberID, m.MaxRecords, &res.Partitions[i])
		}
		env.Send(from, res)
	case proto.ShareAcknowledge:
		fs.log = append(fs.log, fmt.Sprintf("%s: acknowledge epoch=%d acks=%s", env.Name(), m.SessionEpoch, acksText(m.Acks)))
		res := proto.ShareAcknowledgeResponse{CorrelationID: m.CorrelationID, Group: m.Group}
		for _, pa := range m.Acks {
			res.Partitions = append(res.Partitions, proto.PartitionAckResult{TP: pa.TP, Error: fs.acknowledge(m.MemberID, pa)})
		}
		env.Send(from, res)
	default:
		return false
	}
	return true
}

// acknowledge applies one partition's acknowledgements, all or nothing.
func (fs *fakeShare) acknowledge(member string, pa proto.PartitionAcks) proto.Error {
	if len(fs.ackErrs) > 0 {
		e := fs.ackErrs[0]
		fs.ackErrs = fs.ackErrs[1:]
		return e
	}
	for _, b := range pa.Batches {
		for o := b.First; o <= b.Last; o++ {
			if r := fs.rec(pa.TP, o); r.state != proto.Acquired || r.owner != member {
				return proto.InvalidRecordState
			}
		}
	}
	for _, b := range pa.Batches {
		for o := b.First; o <= b.Last; o++ {
			r := fs.rec(pa.TP, o)
			r.owner = ""
			switch {
			case b.Type == proto.AckAccept:
				r.state = proto.Acknowledged
			case b.Type == proto.AckReject || r.count >= fs.limit:
				r.state = proto.Archived
			default:
				r.state = proto.Available
			}
		}
	}
	return proto.None
}

// acquire hands out available records, up to max, one range per run of equal counts.
func (fs *fakeShare) acquire(env *sim.Env, member string, max int, pd *proto.SharePartitionData) {
	p := fs.fc.parts[pd.TP]
	if p == nil || p.leader != env.Self() {
		pd.Error = proto.NotLeaderOrFollower
		return
	}
	n := 0
	for off := p.logStart; off < p.end() && n < max; off++ {
		r := fs.rec(pd.TP, off)
		if r.state != proto.Available {
			continue
		}
		r.state, r.owner = proto.Acquired, member
		r.count++
		n++
		if k := len(pd.Acquired); k > 0 && pd.Acquired[k-1].Last+1 == off && pd.Acquired[k-1].DeliveryCount == r.count {
			pd.Acquired[k-1].Last = off
		} else {
			pd.Acquired = append(pd.Acquired, proto.AcquiredRange{First: off, Last: off, DeliveryCount: r.count})
		}
	}
	if n > 0 {
		pd.Batches = append(pd.Batches, p.batches...)
	}
}
