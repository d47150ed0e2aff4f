package tui

import "charm.land/bubbles/v2/key"

// keyMap declares every binding once; the help bar and Update both read it.
type keyMap struct {
	Next, Prev, Next10, Prev10, First, Last key.Binding
	Play, Faster, Slower                    key.Binding
	JumpNext, JumpPrev, JumpKind            key.Binding
	Goto, Search, SearchNext, SearchPrev    key.Binding
	Filter, Panes, CheckNext, CheckPrev     key.Binding
	Fault, Save, Branch                     key.Binding
	Present, PointNext, PointPrev           key.Binding
	Help, Esc, Quit                         key.Binding
	Explore, Rejoin                         key.Binding // classroom sessions only
}

func newKeyMap() keyMap {
	b := func(keys []string, h, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(h, desc))
	}
	return keyMap{
		Next:       b([]string{"right", "l"}, "→/l", "step"),
		Prev:       b([]string{"left", "h"}, "←/h", "back"),
		Next10:     b([]string{"shift+right", "L"}, "L", "+10"),
		Prev10:     b([]string{"shift+left", "H"}, "H", "-10"),
		First:      b([]string{"home"}, "home", "first"),
		Last:       b([]string{"end"}, "end", "last"),
		Play:       b([]string{"space"}, "space", "play/pause"),
		Faster:     b([]string{"+", "="}, "+/-", "speed"),
		Slower:     b([]string{"-"}, "-", "slower"),
		JumpNext:   b([]string{"]"}, "]/[", "next/prev of kind"),
		JumpPrev:   b([]string{"["}, "[", "previous of kind"),
		JumpKind:   b([]string{"t"}, "t", "kind to jump to"),
		Goto:       b([]string{"g"}, "g", "go to step or time"),
		Search:     b([]string{"/"}, "/", "search"),
		SearchNext: b([]string{"n"}, "n/N", "next/prev match"),
		SearchPrev: b([]string{"N"}, "N", "previous match"),
		Filter:     b([]string{"f"}, "f", "filter kinds/nodes"),
		Panes:      b([]string{"1", "2", "3", "4", "5", "6", "7"}, "1-7", "toggle panes"),
		CheckNext:  b([]string{"c"}, "c/C", "next/prev check"),
		CheckPrev:  b([]string{"C"}, "C", "previous check"),
		Fault:      b([]string{"x"}, "x", "break it: fault here (fork)"),
		Save:       b([]string{"w"}, "w", "save run as scenario"),
		Branch:     b([]string{"b"}, "b", "switch branch"),
		Present:    b([]string{"p"}, "p", "presenter mode"),
		PointNext:  b([]string{"pgdown", "."}, "pgdn/.", "next narrated point"),
		PointPrev:  b([]string{"pgup", ","}, "pgup/,", "previous narrated point"),
		Help:       b([]string{"?"}, "?", "help"),
		Esc:        b([]string{"esc"}, "esc", "cancel/clear"),
		Quit:       b([]string{"q", "ctrl+c"}, "q", "quit"),
		Explore:    b([]string{"e"}, "e", "explore on your own"),
		Rejoin:     b([]string{"r"}, "r", "rejoin the lecturer"),
	}
}

// ShortHelp is the one-line help bar.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Explore, k.Rejoin, k.Next, k.Prev, k.Play, k.JumpNext, k.JumpKind, k.Fault, k.PointNext, k.Help, k.Quit}
}

// FullHelp is the help shown by ?, in columns.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Next, k.Prev, k.Next10, k.Prev10, k.First, k.Last, k.Goto},
		{k.Play, k.Faster, k.JumpNext, k.JumpKind, k.CheckNext, k.Search, k.SearchNext},
		{k.Filter, k.Panes, k.Fault, k.Save, k.Branch, k.Present, k.PointNext},
		{k.PointPrev, k.Explore, k.Rejoin, k.Help, k.Esc, k.Quit},
	}
}
