package tui

// explainGroup says what group events mean.
func explainGroup(run *Run, i int, st *State) (Explanation, bool) {
	return Explanation{}, false
}
