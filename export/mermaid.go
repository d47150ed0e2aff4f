package export

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"mqsim/sim"
)

// mermaidTextMax is how many characters of a message or note a Mermaid diagram keeps.
const mermaidTextMax = 72

// WriteMermaid writes the window as a Mermaid sequence diagram, for Markdown (GitHub
// renders ```mermaid blocks). Mermaid draws every arrow level, so a message is drawn
// where it was sent: ->> when it arrived (at any later time), -x when the network lost
// it, -) when it was still in flight at the end of the run. Model events are notes on
// their node; faults are notes across every lane.
func (r *Run) WriteMermaid(w io.Writer, o Options) error {
	l, err := r.layout(o)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString("sequenceDiagram\n")
	info := fmt.Sprintf("mqsim · %s · seed %d · trace-hash %s · %s of %d · %s", r.Name, r.Seed, r.Hash, o.Window, r.Steps, r.summary())
	fmt.Fprintf(&b, "    %%%% %s\n", info)
	if o.Command != "" {
		fmt.Fprintf(&b, "    %%%% %s\n", o.Command)
	}
	for _, n := range l.lanes {
		fmt.Fprintf(&b, "    participant %s\n", n)
	}
	first, last := "", ""
	if len(l.lanes) > 0 {
		first, last = l.lanes[0], l.lanes[len(l.lanes)-1]
	}
	inWindow := func(i int) bool { return i >= l.lo && i < l.hi }
	for _, i := range l.rows {
		e := r.Events[i]
		switch {
		case r.isMessageEvent(i) && e.Msg == 0:
			// To or from the environment: no message id, nothing to pair.
			if d, ok := e.Data.(sim.Sent); ok {
				fmt.Fprintf(&b, "    %s-->>%s: %s\n", e.Node, EnvNode, mermaidText(sim.Describe(d.Msg)))
			} else {
				fmt.Fprintf(&b, "    %s->>%s: %s\n", EnvNode, e.Node, mermaidText(e.Detail))
			}
		case r.isMessageEvent(i):
			m := r.msgs[e.Msg]
			// A message is drawn once: at its send, or at its first event in the window
			// when it was sent before.
			if i != m.send && (m.send >= 0 && inWindow(m.send) || !firstOfMessage(l, m, i)) {
				continue
			}
			arrow, text := "->>", m.desc
			switch {
			case m.drop >= 0:
				arrow, text = "-x", text+" (lost: "+m.dropWhy+")"
			case len(m.recvs) == 0:
				arrow, text = "-)", text+" (never delivered)"
			case len(m.recvs) > 1:
				text += fmt.Sprintf(" (delivered %d times)", len(m.recvs))
			}
			if i != m.send {
				text = "(sent earlier) " + text
			}
			fmt.Fprintf(&b, "    %s%s%s: %s\n", m.from, arrow, m.to, mermaidText(text))
		case e.Node == EnvNode:
			fmt.Fprintf(&b, "    Note over %s,%s: %s\n", first, last, mermaidText(faultText(e.Kind, e.Detail)))
		default:
			c := classify(e)
			text := e.Kind
			if e.Peer != "" {
				text += " → " + e.Peer
			}
			if e.Detail != "" {
				text += ": " + e.Detail
			}
			if c == classFault || c == classHeal {
				fmt.Fprintf(&b, "    Note over %s: %s\n", e.Node, mermaidText(faultText(text, "")))
				continue
			}
			fmt.Fprintf(&b, "    Note right of %s: %s\n", e.Node, mermaidText(text))
		}
	}
	_, err = w.Write(b.Bytes())
	return err
}

// firstOfMessage reports whether event i is the first of m's events drawn in the window.
func firstOfMessage(l *layout, m *message, i int) bool {
	for _, k := range append(append([]int{m.send}, m.recvs...), m.drop) {
		if k >= l.lo && k < l.hi && k < i {
			if _, drawn := l.rowOf[k]; drawn {
				return false
			}
		}
	}
	return true
}

func faultText(kind, detail string) string {
	s := "⚡ " + kind
	if detail != "" {
		s += ": " + detail
	}
	return s
}

// mermaidEscape keeps text from being read as Mermaid syntax: # and ; start entity codes
// and end statements, < and > may be read as HTML, and arrows inside text confuse some
// renderers.
var mermaidEscape = strings.NewReplacer("#", "#35;", ";", "#59;", "<", "#lt;", ">", "#gt;", "\n", " ")

func mermaidText(s string) string {
	s = strings.ReplaceAll(s, "->", "→")
	return mermaidEscape.Replace(clip(s, mermaidTextMax))
}
