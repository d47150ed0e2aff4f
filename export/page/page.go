// Package page joins the terminal UI's recording of a run to export's HTML page (mqsim
// export --format html): export and tui are peers that do not import each other, so the
// words the page takes from the TUI (its explanations, its panes' lines, its jump groups)
// are handed over here, one layer above both.
package page

import (
	"fmt"

	"mqsim/export"
	"mqsim/scenarios/runner"
	"mqsim/scenarios/script"
	"mqsim/tui"
)

// pageWidth is the width, in columns, at which the page takes the TUI's pane lines.
const pageWidth = 160

// Record records the run as mqsim tui does and hands export what the TUI's panes show at
// each event; it is export.Request.Record for the html format.
func Record(s *script.Script, opts runner.Options) (export.Recording, error) {
	run, err := tui.Record("main", s, opts)
	if err != nil {
		return export.Recording{}, err
	}
	if run.Err != nil {
		return export.Recording{}, fmt.Errorf("%s: %w", s.Name, run.Err)
	}
	m := tui.New(run, tui.Options{NoColor: true}).WithSize(pageWidth, 60)
	rec := export.Recording{Events: run.Events, View: func(i int) export.StepView { return stepView(run, m.At(i)) }}
	for _, g := range run.JumpTargets() {
		rec.Jumps = append(rec.Jumps, export.JumpGroup{Name: g.Name, Events: g.Events})
	}
	return rec, nil
}

// stepView is what the TUI shows at the model's event, in export's terms.
func stepView(run *tui.Run, m tui.Model) export.StepView {
	st := m.State()
	ex := tui.Explain(run, m.Pos(), &st)
	v := export.StepView{Explanation: ex.Text, Note: ex.Note, Clients: m.PaneLines(tui.PaneClients, pageWidth)}
	if run.QueueMode() {
		v.Queues = m.PaneLines(tui.PaneCluster, pageWidth)
	}
	if len(st.Net.Cuts)+len(st.Net.Clogs) > 0 {
		v.Network = m.PaneLines(tui.PaneNetwork, pageWidth)
	}
	for _, n := range st.Nodes {
		v.Nodes = append(v.Nodes, export.NodeRow{Name: n.Name, Role: n.Role.String(), Status: n.Status.String(), Quorum: n.Quorum})
	}
	nb := len(run.Brokers)
	for pi, p := range st.Parts {
		pr := export.PartRow{Name: p.Name(), Leader: p.Leader, Epoch: p.Epoch, ISR: p.ISR, Stale: p.Stale}
		for bi, b := range run.Brokers {
			if pi*nb+bi >= len(st.Replicas) {
				break
			}
			rv := st.Replicas[pi*nb+bi]
			row := export.ReplicaRow{Broker: b, Hosted: rv.Hosted, Down: rv.Down, Leader: rv.Leader, Epoch: rv.Epoch,
				HW: rv.HW, LSO: rv.LSO, LEO: rv.LEO, LogStart: rv.LogStart, Synced: rv.Synced}
			for _, r := range rv.Recs {
				label := r.Value
				if r.Control {
					label = r.Marker.String() // COMMIT or ABORT
				}
				row.Records = append(row.Records, export.RecordCell{Label: label, Epoch: r.Epoch, Control: r.Control})
			}
			pr.Replicas = append(pr.Replicas, row)
		}
		v.Parts = append(v.Parts, pr)
	}
	return v
}
