package runner

import (
	"strconv"
	"strings"
	"testing"

	"mqsim/sim"
)

// Zipf keys: the hottest key gets the largest share, the shares fall with the rank, the
// same seed gives the same keys, and each key costs exactly one draw.
func TestZipfKeys(t *testing.T) {
	c, err := newKeyChooser(10, "zipf(s=1.1)")
	if err != nil {
		t.Fatal(err)
	}
	draws := 0
	r := sim.NewRand(1, "workload/keys")
	count := map[string]int{}
	var first []string
	for i := 0; i < 10_000; i++ {
		k := c.key(func() *sim.Rand { draws++; return r })
		count[k]++
		if i < 8 {
			first = append(first, k)
		}
	}
	if draws != 10_000 {
		t.Fatalf("%d draws for 10000 keys", draws)
	}
	// P(k1) = 1 / sum_{i=1..10} i^-1.1 = 1 / 2.680 = 0.373 (sd of the count: 48)
	if n := count["k1"]; n < 3590 || n > 3880 {
		t.Errorf("k1 drawn %d times in 10000, want about 3731", n)
	}
	for i := 2; i <= 10; i++ {
		if prev, cur := count["k"+itoa(i-1)], count["k"+itoa(i)]; cur > prev {
			t.Errorf("k%d drawn %d times, more than k%d's %d", i, cur, i-1, prev)
		}
	}
	again, _ := newKeyChooser(10, "zipf(s=1.1)")
	r2 := sim.NewRand(1, "workload/keys")
	for i, want := range first {
		if got := again.key(func() *sim.Rand { return r2 }); got != want {
			t.Fatalf("draw %d: %s, then %s with the same seed", i, want, got)
		}
	}
}

// Without skew the keys come in turn and nothing is drawn.
func TestKeysInTurnDrawNothing(t *testing.T) {
	c, err := newKeyChooser(3, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := 0; i < 4; i++ {
		got = append(got, c.key(func() *sim.Rand { t.Fatal("drew a key without skew"); return nil }))
	}
	if strings.Join(got, " ") != "k1 k2 k3 k1" {
		t.Fatalf("keys %v", got)
	}
}

func TestKeySkewErrors(t *testing.T) {
	for _, tc := range []struct {
		k    int
		skew string
		want string
	}{
		{0, "", "keys=0: want 1 to 100000"},
		{5, "zipf(s=0)", "skew=zipf(s=0): want zipf(s=X) with 0 < X <= 10"},
		{5, "zipf(q=1)", "skew=zipf(q=1): want zipf(s=X)"},
		{5, "pareto", "skew=pareto: want zipf(s=X)"},
	} {
		_, err := newKeyChooser(tc.k, tc.skew)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("keys=%d skew=%s: err %v, want %q", tc.k, tc.skew, err, tc.want)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
