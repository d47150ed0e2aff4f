package checker

import (
	"fmt"
	"strings"

	"mqsim/model/history"
)

// Failover judges a consumer group that failed over from one cluster to another
// (geo-replication, MirrorMaker 2 style): it read Source on the first cluster, then Remote
// (the replicated topic, "east.t") on the second, from a translated checkpoint. Records
// are related by value, which the scenarios keep unique. Of the values the source
// acknowledged:
//
//   - NotReplicated: never acknowledged on Remote (the replication lag when the source
//     cluster died): gone from the other cluster;
//   - Lost: of those, the ones the group had not read on the source either: it never
//     will;
//   - NotRead: replicated, yet the group read them on neither cluster;
//   - ReadTwice: read by the group more than once, on either cluster (what lay between
//     the last checkpoint and the group's last commit on the source, read again).
type FailoverReport struct {
	Acked         int
	NotReplicated []string
	Lost          []string
	NotRead       []string
	ReadTwice     []string
}

// FailoverChecker names the notes of Failover in a Report.
const FailoverChecker = "failover"

// Note says the report in one line of a verdict.
func (r FailoverReport) Note(group, remote string) Note {
	return Note{Checker: FailoverChecker, Text: fmt.Sprintf("group %s failed over to the remote topic %s: of %d records acknowledged on the source, %d never replicated "+
		"(%d of them lost to the group, never read), %d replicated but never read, %d read twice",
		group, remote, r.Acked, len(r.NotReplicated), len(r.Lost), len(r.NotRead), len(r.ReadTwice))}
}

// Failover builds the report from a history holding both clusters' clients.
func Failover(h history.History, group, source, remote string) FailoverReport {
	var rep FailoverReport
	var acked []string
	replicated := map[string]bool{}
	reads := map[string]int{}
	for _, op := range h {
		if op.Type != history.Ok {
			continue
		}
		switch {
		case op.Send != nil && op.Send.Topic == source:
			acked = append(acked, op.Send.Value)
		case op.Send != nil && op.Send.Topic == remote:
			replicated[op.Send.Value] = true
		case op.Poll != nil && op.Poll.Group == group:
			for _, pr := range op.Poll.Reads {
				if pr.Topic != source && pr.Topic != remote {
					continue
				}
				for _, r := range pr.Records {
					reads[r.Value]++
				}
			}
		}
	}
	rep.Acked = len(acked)
	for _, v := range acked {
		if !replicated[v] {
			rep.NotReplicated = append(rep.NotReplicated, v)
		}
		switch {
		case !replicated[v] && reads[v] == 0:
			rep.Lost = append(rep.Lost, v)
		case reads[v] == 0:
			rep.NotRead = append(rep.NotRead, v)
		case reads[v] > 1:
			rep.ReadTwice = append(rep.ReadTwice, v)
		}
	}
	return rep
}

// String says the report in plain words.
func (r FailoverReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d records acknowledged on the source cluster\n", r.Acked)
	fmt.Fprintf(&b, "never replicated (the replication lag when it died): %d%s\n", len(r.NotReplicated), list(r.NotReplicated))
	fmt.Fprintf(&b, "lost to the group (never replicated, not read before the failover): %d%s\n", len(r.Lost), list(r.Lost))
	fmt.Fprintf(&b, "replicated but never read by the group: %d%s\n", len(r.NotRead), list(r.NotRead))
	fmt.Fprintf(&b, "read twice (once before the failover, again after it): %d%s", len(r.ReadTwice), list(r.ReadTwice))
	return b.String()
}

func list(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	const most = 8
	if len(vs) > most {
		return fmt.Sprintf(" (%s ... %s)", strings.Join(vs[:most-1], " "), vs[len(vs)-1])
	}
	return " (" + strings.Join(vs, " ") + ")"
}
