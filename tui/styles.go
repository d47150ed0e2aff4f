package tui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"
)

// styles are every style the views use. In no-colour mode they carry no colour (bold and
// reverse stay, as NO_COLOR allows); the text markers (▶ ★ ✖ ┃ * ⚡) carry the meaning.
type styles struct {
	title, header, dim, current, fault, down, leader, unsynced, committed, warn, ok, prompt, marker lipgloss.Style
	kinds                                                                                           map[string]lipgloss.Style
	help                                                                                            help.Styles
}

func newStyles(noColor bool) styles {
	n := lipgloss.NewStyle
	if noColor {
		plain := n()
		return styles{
			title: n().Bold(true), header: n().Bold(true), dim: plain, current: n().Reverse(true),
			fault: n().Bold(true), down: plain, leader: n().Bold(true), unsynced: plain, committed: plain,
			warn: n().Bold(true), ok: plain, prompt: n().Bold(true), marker: n().Underline(true),
			kinds: map[string]lipgloss.Style{},
			help: help.Styles{Ellipsis: plain, ShortKey: n().Bold(true), ShortDesc: plain, ShortSeparator: plain,
				FullKey: n().Bold(true), FullDesc: plain, FullSeparator: plain},
		}
	}
	c := lipgloss.Color
	kind := func(col string) lipgloss.Style { return n().Foreground(c(col)) }
	s := styles{
		title:     n().Bold(true).Foreground(c("12")),
		header:    n().Bold(true).Foreground(c("15")).Background(c("4")),
		dim:       n().Faint(true),
		current:   n().Reverse(true).Bold(true),
		fault:     n().Bold(true).Foreground(c("9")),
		down:      n().Foreground(c("9")),
		leader:    n().Bold(true).Foreground(c("11")),
		unsynced:  n().Italic(true).Faint(true),
		committed: n().Bold(true),
		warn:      n().Bold(true).Foreground(c("9")),
		ok:        n().Foreground(c("10")),
		prompt:    n().Bold(true).Foreground(c("14")),
		marker:    n().Bold(true).Foreground(c("13")),
		kinds: map[string]lipgloss.Style{
			"append": kind("10"), "replicate": kind("2"),
			"fsync": kind("12"),
			"ack":   kind("14"), "reject": kind("9"), "produce-error": kind("9"),
			"hw":  kind("11"),
			"isr": kind("13"), "isr-propose": kind("13"), "isr-rejected": kind("13"),
			"election": kind("13").Bold(true), "leader": kind("5"), "follower": kind("5"), "offline": kind("9"), "fence": kind("9"),
			"truncate": kind("9"), "truncation": kind("9"), "recover": kind("3"),
			"txn-begin": kind("13"), "txn-end": kind("13"), "txn-state": kind("13"),
			"txn-markers": kind("13"), "marker": kind("13").Bold(true), "txn-fence": kind("9"), "txn-fenced": kind("9"),
		},
		help: help.DefaultDarkStyles(),
	}
	return s
}

// kind is the style of an event kind.
func (s styles) kind(k string) lipgloss.Style {
	if isMend(k) {
		return s.ok // a heal is good news: not in the red of the crash it undoes
	}
	if isFault(k) {
		return s.fault
	}
	if st, ok := s.kinds[k]; ok {
		return st
	}
	return lipgloss.NewStyle()
}
