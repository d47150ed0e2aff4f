package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"mqsim/export"
	"mqsim/export/page"
)

// pageJSON is the data a page embeds, as its script reads it.
type pageJSON struct {
	Name    string             `json:"name"`
	Steps   int                `json:"steps"`
	Start   int                `json:"start"`
	Notes   []string           `json:"notes"`
	Texts   []string           `json:"texts"`
	Rows    []json.RawMessage  `json:"rows"`
	Views   [][]int            `json:"views"`
	Events  [][]any            `json:"ev"`
	Jumps   []export.JumpGroup `json:"jumps"`
	Verdict *struct {
		Result     string `json:"result"`
		Violations []struct {
			Anomaly string `json:"anomaly"`
			Subject string `json:"subject"`
			Step    uint64 `json:"step"`
			Event   int    `json:"event"`
		} `json:"violations"`
	} `json:"verdict"`
	SVG []struct {
		From, To int
		Gz       string `json:"gz"`
	} `json:"svg"`
}

type pagePart struct {
	Name   string   `json:"name"`
	Leader string   `json:"leader"`
	Epoch  int32    `json:"epoch"`
	ISR    []string `json:"isr"`
	Reps   []struct {
		B      string  `json:"b"`
		Leader bool    `json:"leader"`
		HW     int64   `json:"hw"`
		LEO    int64   `json:"leo"`
		First  int64   `json:"first"`
		Recs   [][]any `json:"recs"`
	} `json:"reps"`
}

// writePage exports the scenario's page.
func writePage(t *testing.T, scenario string) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := export.Export(export.Request{Scenario: scenario, Format: export.HTML, Record: page.Record}, &b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func readPage(t *testing.T, page []byte) pageJSON {
	t.Helper()
	_, rest, ok := strings.Cut(string(page), `<script type="application/json" id="data">`)
	data, _, ok2 := strings.Cut(rest, "</script>")
	if !ok || !ok2 {
		t.Fatal("the page has no data script")
	}
	var p pageJSON
	if err := json.Unmarshal([]byte(data), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// event finds the page's event of a kernel step by node and kind.
func (p pageJSON) event(t *testing.T, step int, node, kind string) int {
	t.Helper()
	for i, e := range p.Events {
		if int(e[0].(float64)) == step && e[2] == node && e[3] == kind {
			return i
		}
	}
	t.Fatalf("no event %s %s at step %d", node, kind, step)
	return -1
}

// part is the first partition of the view at event i.
func (p pageJSON) part(t *testing.T, i int) pagePart {
	t.Helper()
	ids := p.Views[int(p.Events[i][7].(float64))]
	nodes := ids[0]
	parts := ids[1+nodes]
	if parts == 0 {
		t.Fatalf("event %d: no partition", i)
	}
	var pp pagePart
	if err := json.Unmarshal(p.Rows[ids[2+nodes]], &pp); err != nil {
		t.Fatal(err)
	}
	return pp
}

func (pp pagePart) offsets() string {
	var s []string
	for _, r := range pp.Reps {
		s = append(s, fmt.Sprintf("%s HW %d LEO %d", r.B, r.HW, r.LEO))
	}
	return strings.Join(s, ", ")
}

// The page of acks1-leader-crash holds, at each event, what the TUI shows there: the
// replicas' HW and LEO, the controller's leader, epoch and ISR, the explanation's note;
// it opens where the verdict's violations begin, and each links there.
func TestHTMLPageOfAcks1(t *testing.T) {
	p := readPage(t, writePage(t, "acks1-leader-crash"))
	if p.Name != "acks1-leader-crash" || p.Steps != 344 || len(p.Events) != 70 {
		t.Fatalf("page of %q: %d steps, %d events; want acks1-leader-crash, 344, 70", p.Name, p.Steps, len(p.Events))
	}
	lostSend := p.event(t, 48, "p1", "send")
	if p.Start != lostSend {
		t.Errorf("the page opens on event %d, want %d (p1 sends \"lost\" at step 48, where the violations begin)", p.Start, lostSend)
	}
	if p.Verdict == nil || p.Verdict.Result != "invalid" || len(p.Verdict.Violations) != 3 {
		t.Fatalf("verdict %+v: want invalid with 3 violations", p.Verdict)
	}
	for _, v := range p.Verdict.Violations {
		if v.Step != 48 || v.Event != lostSend || v.Subject != "t/0" {
			t.Errorf("violation %s links step %d event %d about %s; want step 48, event %d, t/0", v.Anomaly, v.Step, v.Event, v.Subject, lostSend)
		}
	}
	for _, c := range []struct {
		step       int
		node, kind string
		offsets    string
		leader     string
		epoch      int32
		isr        []string
		note       string
	}{
		{51, "b1", "ack", "b1 HW 1 LEO 2, b2 HW 0 LEO 1, b3 HW 0 LEO 1", "b1", 0, []string{"b1", "b2", "b3"}, "acks.md"},
		{76, "ctl", "election", "b1 HW 1 LEO 2, b2 HW 0 LEO 1, b3 HW 0 LEO 1", "b2", 1, []string{"b2", "b3"}, "leader-election.md"},
		{200, "b1", "truncate", "b1 HW 0 LEO 1, b2 HW 2 LEO 2, b3 HW 1 LEO 2", "b2", 1, []string{"b2", "b3"}, "truncation.md"},
		{206, "ctl", "isr", "b1 HW 2 LEO 2, b2 HW 2 LEO 2, b3 HW 1 LEO 2", "b2", 1, []string{"b2", "b3", "b1"}, "isr.md"},
	} {
		i := p.event(t, c.step, c.node, c.kind)
		pp := p.part(t, i)
		if got := pp.offsets(); got != c.offsets {
			t.Errorf("step %d %s %s: %s, want %s", c.step, c.node, c.kind, got, c.offsets)
		}
		if pp.Name != "t/0" || pp.Leader != c.leader || pp.Epoch != c.epoch || !slices.Equal(pp.ISR, c.isr) {
			t.Errorf("step %d %s %s: %s leader %s epoch %d ISR %v, want t/0 leader %s epoch %d ISR %v", c.step, c.node, c.kind, pp.Name, pp.Leader, pp.Epoch, pp.ISR, c.leader, c.epoch, c.isr)
		}
		if note := p.Notes[int(p.Events[i][6].(float64))]; note != c.note {
			t.Errorf("step %d %s %s: note %q, want %q", c.step, c.node, c.kind, note, c.note)
		}
	}
	// At the acknowledgement of "lost", b1's strip shows it above the HW.
	pp := p.part(t, p.event(t, 51, "b1", "ack"))
	if r := pp.Reps[0]; r.B != "b1" || !r.Leader || len(r.Recs) != 2 || r.Recs[1][0] != "lost" {
		t.Errorf("b1's strip at its ack of \"lost\": %+v, want the leader b1 with records before, lost", r)
	}
	// The fault group of ] and [ is the TUI's: the partition, the crash, the heal, the restart.
	if g := p.Jumps[0]; g.Name != "fault" || len(g.Events) != 4 || p.Events[g.Events[1]][3] != "crash" {
		t.Errorf("first jump group %+v: want fault with 4 events, the second a crash", g)
	}
	if len(p.SVG) == 0 || p.SVG[0].From != 1 || p.SVG[len(p.SVG)-1].To != 344 {
		t.Errorf("diagram windows %d, want steps 1..344 covered", len(p.SVG))
	}
}

// A page is one file: nothing is fetched, and it stays small (acks1-leader-crash under
// 1 MB; the two other classroom runs are measured too).
func TestHTMLPageIsSelfContainedAndSmall(t *testing.T) {
	for _, c := range []struct {
		scenario string
		max      int
	}{
		{"acks1-leader-crash", 1 << 20},
		{"rebalance-duplicates", 1 << 20},
		{"rabbit-quorum-leader-crash", 1 << 20},
	} {
		page := writePage(t, c.scenario)
		t.Logf("%s: %d bytes", c.scenario, len(page))
		if len(page) > c.max {
			t.Errorf("%s: the page is %d bytes, want at most %d", c.scenario, len(page), c.max)
		}
		// The inline diagram names the SVG namespace and points at its own markers
		// (url(#...)): neither is fetched. Anything else of the kind would be.
		own := strings.NewReplacer(`xmlns="http://www.w3.org/2000/svg"`, "", "url(#", "").Replace(string(page))
		for _, ref := range []string{"<script src", "<link", "@import", "url(", "http://", "https://"} {
			if strings.Contains(own, ref) {
				t.Errorf("%s: the page refers to something outside it (%q)", c.scenario, ref)
			}
		}
		p := readPage(t, page)
		if p.Verdict == nil || len(p.Events) == 0 || len(p.SVG) == 0 {
			t.Errorf("%s: page has %d events, %d diagram windows, verdict %v", c.scenario, len(p.Events), len(p.SVG), p.Verdict)
		}
	}
}
