package tui

// explainRaft says what raft events mean.
func explainRaft(run *Run, i int, st *State) (Explanation, bool) {
	return Explanation{}, false
}
