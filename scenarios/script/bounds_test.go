package script

import (
	"strings"
	"testing"
)

func TestAKeyGivenTwiceIsRefusedWithItsPosition(t *testing.T) {
	_, err := Parse("dup.txt", "# two sizes\n\ncluster brokers=3 brokers=5\n----\n")
	if err == nil || err.Error() != "dup.txt:3: cluster: brokers= is given twice; give it once" {
		t.Fatalf("err %v", err)
	}
	// Bare words may repeat: they are node names and arrows.
	if _, err := Parse("ok.txt", "partition b1 b2 | b3 b1\n----\n"); err != nil {
		t.Fatalf("bare words: %v", err)
	}
}

func TestAScenarioWithNoCommandsIsRefused(t *testing.T) {
	for _, text := range []string{"", "\n\n", "# only narration\n# nothing else\n"} {
		_, err := Parse("empty.txt", text)
		if err == nil || !strings.HasPrefix(err.Error(), "empty.txt: no commands: a scenario needs at least one") {
			t.Errorf("%q: err %v", text, err)
		}
	}
}
