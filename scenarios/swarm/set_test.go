package swarm

import (
	"strings"
	"testing"
)

// --set reaches every generated cluster command, after the profile's settings, and is
// validated like the cluster command's own arguments.
func TestSetAddsSettingsToEveryRun(t *testing.T) {
	opts := Options{Profile: ProfileSafe, Set: []string{"isr-expand=hw", "kafka-version=2.0"}}
	if err := opts.Validate(); err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 3; seed++ {
		text := Generate(seed, opts)
		var line string
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "cluster ") {
				line = l
			}
		}
		profile, set := strings.Index(line, "flush=every-batch"), strings.Index(line, "isr-expand=hw kafka-version=2.0")
		if profile < 0 || set < profile {
			t.Errorf("seed %d: cluster line %q lacks the settings after the profile's", seed, line)
		}
	}
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Profile: ProfileSafe, Set: []string{"isr-expand=sometimes"}}, "isr-expand=sometimes: want epoch-start (the default) or hw"},
		{Options{Profile: ProfileSafe, Set: []string{"colour=blue"}}, "colour is not a setting of cluster"},
		{Options{Profile: ProfileSafe, Set: []string{"min-isr=4"}}, "min-isr=4 is more than rf=3"},
		{Options{Profile: ProfileQueue, Set: []string{"isr-expand=hw"}}, "use --profile safe, any, txn or share"},
	} {
		if err := tc.opts.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.opts.Set, err, tc.want)
		}
	}
}
