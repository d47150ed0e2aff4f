package sim

import (
	"strings"
	"testing"
)

func TestPlanRoundTrip(t *testing.T) {
	text := `1ms crash b1 b2
1ms restart b1
1.2s kill b2 b3
1.5s pause c1
2s resume c1
2s partition b1 | b2 b3 | c1
2s cut b1 -> b2
2s clog b1 <-> b2
2.1s unclog b1 <-> b2
3s heal b1 -> b2
3s heal
3s drop-next b2 -> b3 count=4
3s drop-next ctl -> b1 kind=LeaderAndIsr count=2
3s delay-next b1 <-> ctl for=1.5s kind=AlterPartition
3s dup-next b1 -> ctl kind=BrokerHeartbeat count=3
3s release b1 -> b2
3s release b1 -> b2 kind=FetchResponse count=2
4s torn b1 corrupt
4s torn b2
5s corrupt b1 p0/0.log 10 4
`
	plan, err := ParsePlan(text)
	if err != nil {
		t.Fatal(err)
	}
	if got := plan.String(); got != text {
		t.Errorf("round trip:\n%s\nwant\n%s", got, text)
	}
}

func TestPlanErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"1s crash b1\nsoon crash b2", "line 2: bad duration \"soon\""},
		{"100 crash b1", "line 1: duration \"100\" needs a unit"},
		{"1s explode b1", "line 1: unknown fault verb \"explode\"; want one of crash, kill, restart"},
		{"1s crash", "line 1: crash: missing node"},
		{"1s partition b1 b2", "line 1: partition: need at least two groups"},
		{"1s partition b1 | | b2", "line 1: partition: empty group"},
		{"1s cut b1 b2", "line 1: cut: want A -> B or A <-> B"},
		{"1s drop-next a -> b zero", "count \"zero\" is not a positive integer"},
		{"1s drop-next a -> b count=0", "count \"0\" is not a positive integer"},
		{"1s drop-next a -> b for=1s", "unknown argument for="},
		{"1s delay-next a -> b kind=Fetch", "missing for=D"},
		{"1s delay-next a -> b for=0", "want one positive duration"},
		{"1s dup-next a -> b kind=x.y", "want one message kind"},
		{"1s release a -> b up", "unexpected \"up\""},
		{"1s corrupt b1 f -1 4", "OFFSET must be >= 0"},
		{"2s crash b1\n1s restart b1", "line 2: time 1s is before the previous action's 2s"},
		{"-1s crash b1", "negative"},
	} {
		_, err := ParsePlan(tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want it to contain %q", tc.text, err, tc.want)
		}
	}
}

// FuzzParsePlan checks that any text either fails to parse with an error or parses to a
// plan whose printed form parses back to the same plan.
func FuzzParsePlan(f *testing.F) {
	for _, s := range []string{"1s crash b1", "1s kill b1", "2s partition a | b c", "0 heal", "3ms drop-next a <-> b 2", "1s delay-next a -> b for=2ms kind=X count=3", "1s release a -> b kind=Y", "1s dup-next a -> b",
		"1s torn n corrupt", "1s corrupt n f 0 1", "# comment\n\n1s pause x\n2s resume x", "1s cut a -> b\n1s clog a <-> b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		plan, err := ParsePlan(text)
		if err != nil {
			return
		}
		again, err := ParsePlan(plan.String())
		if err != nil {
			t.Fatalf("printed plan does not parse: %v\n%s", err, plan)
		}
		if again.String() != plan.String() {
			t.Fatalf("round trip changed the plan:\n%s\n%s", plan, again)
		}
	})
}

func TestLegacyDropNextCountReadsAsCount(t *testing.T) {
	plan, err := ParsePlan("1s drop-next a -> b 3")
	if err != nil || plan[0].Count != 3 || plan.String() != "1s drop-next a -> b count=3\n" {
		t.Errorf("got %v, %v", plan, err)
	}
}
