package checker

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"mqsim/model/history"
)

// Dependency is one edge of a cycle between transactions (G0, G1c), as
// Jepsen's Kafka workload draws them: ww when From's write to a partition
// immediately precedes To's in the partition's version order, wr when To
// polled a value From sent. From and To are ops (history indexes of their
// completions); a send or poll outside a transaction is a transaction of one.
type Dependency struct {
	Kind string `json:"kind"` // "ww" or "wr"
	From int    `json:"from"`
	To   int    `json:"to"`
	history.TopicPartition
	// Value is, for wr, the value read; for ww, To's value, and Prev the value
	// of From it follows.
	Value string `json:"value"`
	Prev  string `json:"prev,omitempty"`
	// ReadCommitted says, for wr, that the poll read at read_committed.
	ReadCommitted bool `json:"read_committed,omitempty"`
}

// Dependency kinds.
const (
	WW = "ww"
	WR = "wr"
)

// txnAnomalies finds G1b and the cycles (G0, G1c). Only a transaction writes
// to two partitions, so without one no cycle can form and nothing is built.
func (a *analysis) txnAnomalies(f *findings) {
	hasTxn := false
	for k := range a.ops {
		if a.ops[k].f == history.Txn {
			hasTxn = true
			break
		}
	}
	if !hasTxn {
		return
	}
	for k := range a.ops {
		if o := &a.ops[k]; o.f == history.Poll && o.rc && o.ok() {
			for _, r := range a.readsOf(o) {
				a.intermediateReads(f, int32(k), r)
			}
		}
	}
	a.cycles(f)
}

// owner is the op a send or poll belongs to as a node of the dependency
// graph: its transaction, or itself; -1 when it takes no part (a failed op:
// an aborted transaction's writes and reads are not in effect).
func (a *analysis) owner(k int32) int32 {
	if t := a.ops[k].txn; t >= 0 {
		k = t
	}
	if a.ops[k].typ == history.Fail {
		return -1
	}
	return k
}

// sendIndex is the dense index where send k landed: its own offset, else
// where its value was observed; -1 if nowhere.
func (a *analysis) sendIndex(k int32) int32 {
	o := &a.ops[k]
	p := a.parts[o.part]
	if o.offset != history.NoOffset {
		return p.indexOf(o.offset)
	}
	return p.values[o.vid].minIdx
}

// intermediateReads finds G1b in read r of read_committed poll k: for each
// committed transaction whose writes to the partition the poll returned
// some of, a later write of that transaction to the partition that the
// poll read past without returning it. A poll that stops before such a write
// is not one: a consumer may stop anywhere (max.poll.records), and writes to
// other partitions become visible partition by partition, as markers land.
func (a *analysis) intermediateReads(f *findings, k int32, r read) {
	p := a.parts[r.part]
	recs := a.recordsOf(r)
	seen := make(map[int32]bool, len(recs))
	maxIdx := int32(-1)
	var txns []int32
	for _, rec := range recs {
		seen[rec.vid] = true
		maxIdx = max(maxIdx, p.indexOf(rec.offset))
		if w := p.values[rec.vid].writer; w >= 0 {
			if t := a.ops[w].txn; t >= 0 && a.txnCommitted(t) && !slices.Contains(txns, t) {
				txns = append(txns, t)
			}
		}
	}
	for _, t := range txns {
		first := int32(-1) // the transaction's first write to the partition that the poll returned
		for j := t + 1; j <= t+a.ops[t].nmicro; j++ {
			s := &a.ops[j]
			if s.f != history.Send || s.part != r.part {
				continue
			}
			if seen[s.vid] {
				if first < 0 {
					first = j
				}
				continue
			}
			if idx := a.sendIndex(j); first < 0 || idx < 0 || idx >= maxIdx {
				continue
			}
			got, missed := p.values[a.ops[first].vid].s, p.values[s.vid].s
			f.add(Violation{Anomaly: G1b, TopicPartition: p.tp, Offsets: []int64{a.ops[first].offset, s.offset},
				Values: []string{got, missed}, Ops: a.refs(t, k),
				Text: fmt.Sprintf("intermediate read: a read_committed poll (op %d) returned %q of transaction op %d but not its later write %q to the same partition, though it read past it",
					a.ref(k).Index, got, a.ref(t).Index, missed)})
			break
		}
	}
}

// depGraph is the dependency graph between the ops of the history, as
// indexes into analysis.ops; edges are sorted and unique per kind.
type depGraph struct {
	edges []depEdge
	out   map[int32][]int // node -> indexes into edges, in edge order
}

type depEdge struct {
	from, to int32
	dep      Dependency
}

// dependencies builds the ww and wr edges of Jepsen's Kafka workload. ww links
// the writers of consecutive values in each partition's version order
// (skipping values no transaction in effect wrote); wr links a value's writer
// to every poll that read it. Jepsen's rw edges stay out, as they do in
// Jepsen (commented out of its graph).
func (a *analysis) dependencies() *depGraph {
	type key struct {
		from, to int32
		kind     string
		rc       bool
	}
	seen := map[key]bool{}
	g := &depGraph{out: map[int32][]int{}}
	add := func(from, to int32, d Dependency) {
		k := key{from, to, d.Kind, d.ReadCommitted}
		if from < 0 || to < 0 || from == to || seen[k] {
			return
		}
		seen[k] = true
		d.From, d.To = a.ref(from).Index, a.ref(to).Index
		g.edges = append(g.edges, depEdge{from, to, d})
	}
	for _, p := range a.parts {
		prev, prevValue := int32(-1), ""
		for idx := range p.offsets {
			v := &p.values[p.obsAt(int32(idx))]
			if v.writer < 0 {
				continue
			}
			w := a.owner(v.writer)
			if w < 0 {
				continue
			}
			if prev >= 0 {
				add(prev, w, Dependency{Kind: WW, TopicPartition: p.tp, Value: v.s, Prev: prevValue})
			}
			prev, prevValue = w, v.s
		}
	}
	for k := range a.ops {
		o := &a.ops[k]
		if o.f != history.Poll {
			continue
		}
		reader := a.owner(int32(k))
		for _, r := range a.readsOf(o) {
			p := a.parts[r.part]
			for _, rec := range a.recordsOf(r) {
				if w := p.values[rec.vid].writer; w >= 0 {
					add(a.owner(w), reader, Dependency{Kind: WR, TopicPartition: p.tp, Value: p.values[rec.vid].s, ReadCommitted: o.rc})
				}
			}
		}
	}
	slices.SortFunc(g.edges, func(x, y depEdge) int {
		return cmp.Or(cmp.Compare(x.from, y.from), cmp.Compare(x.to, y.to), cmp.Compare(x.dep.Kind, y.dep.Kind),
			cmp.Compare(btoi(y.dep.ReadCommitted), btoi(x.dep.ReadCommitted)))
	})
	for i, e := range g.edges {
		g.out[e.from] = append(g.out[e.from], i)
	}
	return g
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// cycles reports one cycle per strongly connected component of three graphs:
// wr edges of read_committed polls only (G1c, a violation: a read_committed
// transaction cannot read from one that read from it, since each read waits
// for the other's commit); ww edges only (G0, allowed); and all edges, for
// components that hold a wr edge and no cycle of the first kind (G1c,
// allowed: Kafka does not isolate writes, so T1's write may precede T2's
// while T1 reads what T2 committed). Jepsen allows G0 always and G1c when it
// draws ww edges, for the same reasons.
func (a *analysis) cycles(f *findings) {
	g := a.dependencies()
	rcWR := func(e *depEdge) bool { return e.dep.Kind == WR && e.dep.ReadCommitted }
	onlyWW := func(e *depEdge) bool { return e.dep.Kind == WW }
	all := func(*depEdge) bool { return true }
	inViolation := map[int32]bool{}
	for _, comp := range g.components(rcWR) {
		a.reportCycle(f, G1c, g.cycle(comp, rcWR, nil), false)
		for _, n := range comp {
			inViolation[n] = true
		}
	}
	for _, comp := range g.components(onlyWW) {
		a.reportCycle(f, G0, g.cycle(comp, onlyWW, nil), true)
	}
	for _, comp := range g.components(all) {
		if slices.ContainsFunc(comp, func(n int32) bool { return inViolation[n] }) {
			continue
		}
		in := map[int32]bool{}
		for _, n := range comp {
			in[n] = true
		}
		for i := range g.edges { // edges are sorted: the first wr inside is the lowest
			if e := &g.edges[i]; e.dep.Kind == WR && in[e.from] && in[e.to] {
				a.reportCycle(f, G1c, g.cycle(comp, all, e), true)
				break
			}
		}
	}
}

// components are the strongly connected components of the graph of the
// edges that pass keep, with more than one node, each sorted, in order of
// their lowest node (Tarjan's algorithm, iterative).
func (g *depGraph) components(keep func(*depEdge) bool) [][]int32 {
	var nodes []int32
	for i := range g.edges {
		if e := &g.edges[i]; keep(e) {
			nodes = append(nodes, e.from, e.to)
		}
	}
	slices.Sort(nodes)
	nodes = slices.Compact(nodes)
	index, low := map[int32]int{}, map[int32]int{}
	onStack := map[int32]bool{}
	var stack []int32
	var out [][]int32
	next := 0
	type frame struct {
		node int32
		edge int // position in g.out[node] to look at next
	}
	for _, root := range nodes {
		if _, done := index[root]; done {
			continue
		}
		calls := []frame{{node: root}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(calls) > 0 {
			top := &calls[len(calls)-1]
			v := top.node
			if top.edge < len(g.out[v]) {
				e := &g.edges[g.out[v][top.edge]]
				top.edge++
				if !keep(e) {
					continue
				}
				w := e.to
				if _, seen := index[w]; !seen {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					calls = append(calls, frame{node: w})
				} else if onStack[w] {
					low[v] = min(low[v], index[w])
				}
				continue
			}
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				parent := calls[len(calls)-1].node
				low[parent] = min(low[parent], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			var comp []int32
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			if len(comp) > 1 {
				slices.Sort(comp)
				out = append(out, comp)
			}
		}
	}
	slices.SortFunc(out, func(x, y []int32) int { return cmp.Compare(x[0], y[0]) })
	return out
}

// cycle finds a shortest cycle inside component comp over the edges that
// pass keep: through the given edge when set, else through the lowest node.
func (g *depGraph) cycle(comp []int32, keep func(*depEdge) bool, through *depEdge) []*depEdge {
	in := make(map[int32]bool, len(comp))
	for _, n := range comp {
		in[n] = true
	}
	start, target := comp[0], comp[0]
	var prefix []*depEdge
	if through != nil {
		start, target = through.to, through.from
		prefix = []*depEdge{through}
		if start == target {
			return prefix
		}
	}
	// Breadth-first from start until target is reached again.
	via := map[int32]*depEdge{}
	queue := []int32{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, i := range g.out[v] {
			e := &g.edges[i]
			if !keep(e) || !in[e.to] {
				continue
			}
			if _, seen := via[e.to]; seen || (e.to == start && e.to != target) {
				continue
			}
			via[e.to] = e
			if e.to == target {
				queue = nil
				break
			}
			queue = append(queue, e.to)
		}
	}
	var path []*depEdge
	for n := target; ; {
		e := via[n]
		path = append(path, e)
		n = e.from
		if n == start {
			break
		}
	}
	slices.Reverse(path)
	return append(prefix, path...)
}

// reportCycle turns a cycle into a finding naming every op on it.
func (a *analysis) reportCycle(f *findings, anomaly Anomaly, cycle []*depEdge, allowed bool) {
	if allowed {
		defer f.allowing(anomaly)()
	}
	v := Violation{Anomaly: anomaly, TopicPartition: cycle[0].dep.TopicPartition}
	var ops []int32
	var steps []string
	for _, e := range cycle {
		ops = append(ops, e.from)
		v.Cycle = append(v.Cycle, e.dep)
		v.Values = append(v.Values, e.dep.Value)
		from, to := a.nodeName(e.from), a.nodeName(e.to)
		if e.dep.Kind == WW {
			steps = append(steps, fmt.Sprintf("%s sent %q to %s before %s sent %q (ww)", from, e.dep.Prev, e.dep.TopicPartition, to, e.dep.Value))
		} else {
			level := "read_uncommitted"
			if e.dep.ReadCommitted {
				level = "read_committed"
			}
			steps = append(steps, fmt.Sprintf("%s sent %q to %s, which %s polled at %s (wr)", from, e.dep.Value, e.dep.TopicPartition, to, level))
		}
	}
	v.Ops = a.refs(ops...)
	what := map[Anomaly]string{G0: "write cycle", G1c: "cyclic information flow"}[anomaly]
	v.Text = fmt.Sprintf("%s over %d ops: %s", what, len(cycle), strings.Join(steps, "; "))
	f.add(v)
}

// nodeName names an op of the dependency graph for a text.
func (a *analysis) nodeName(k int32) string {
	o := &a.ops[k]
	if o.f == history.Txn {
		return fmt.Sprintf("txn %s (op %d)", a.value(o).Txn.ID, a.ref(k).Index)
	}
	return fmt.Sprintf("%s (op %d)", o.f, a.ref(k).Index)
}
