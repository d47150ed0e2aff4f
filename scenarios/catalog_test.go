package scenarios

import "testing"

// TestLoadSuggestsTheNearestName: a mistyped catalogue name gets "did you mean" with the
// nearest names, not the whole catalogue.
func TestLoadSuggestsTheNearestName(t *testing.T) {
	for _, c := range []struct{ typed, want string }{
		{"acks1-leader-crsh", `no scenario file or catalogue entry named "acks1-leader-crsh"; did you mean acks1-leader-crash? (mqsim list shows them all)`},
		{"rebalance-duplicate", `no scenario file or catalogue entry named "rebalance-duplicate"; did you mean rebalance-duplicates? (mqsim list shows them all)`},
		{"fifo", `no scenario file or catalogue entry named "fifo"; did you mean sqs-fifo-group-blocking? (mqsim list shows them all)`},
		{"zzzzzzzz", `no scenario file or catalogue entry named "zzzzzzzz" (mqsim list shows the catalogue)`},
	} {
		_, err := Load(c.typed)
		if err == nil || err.Error() != c.want {
			t.Errorf("Load(%q): %v\nwant %s", c.typed, err, c.want)
		}
	}
}
