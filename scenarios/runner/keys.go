package runner

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"mqsim/sim"
)

// Key distributions of the produce command: keys=K names keys k1..kK; without skew= the
// records take them in turn (k1, k2, ..., kK, k1, ...) and nothing is drawn, with
// skew=zipf(s=X) each record draws its key from a Zipf distribution over the K keys
// (P(k_i) proportional to 1/i^s: k1 the hottest).
//
// The draw is a hand-rolled inverse CDF, not math/rand/v2's Zipf: that one takes a
// *rand.Rand (the sim's streams are sim.Rand), needs s > 1, and draws a varying number of
// floats per value (rejection sampling), compared as floats on every draw. Here the
// weights are computed once, rounded to integers, and each record costs exactly one
// IntN of the run's stream "workload/keys": the same seed gives the same keys on every
// platform, and a run without skew= draws nothing, so no existing run changes.

// keyChooser hands out the keys of one produce command.
type keyChooser struct {
	keys []string
	// cum is, for a Zipf draw, the cumulative integer weights of the keys; nil to take
	// the keys in turn.
	cum  []int64
	next int
}

// maxKeys bounds keys=K.
const maxKeys = 100_000

// zipfScale is the integer weight of the hottest key: fine enough for any share a
// scenario shows, small enough that maxKeys weights sum within an int64 (every key
// weighs at least 1).
const zipfScale = 1 << 40

// newKeyChooser reads keys=K and skew=: the skew names a distribution, "zipf(s=X)" with
// 0 < s <= 10, or "uniform" (the keys in turn, as without skew=).
func newKeyChooser(k int, skew string) (*keyChooser, error) {
	if k < 1 || k > maxKeys {
		return nil, fmt.Errorf("keys=%d: want 1 to %d", k, maxKeys)
	}
	c := &keyChooser{}
	for i := 1; i <= k; i++ {
		c.keys = append(c.keys, "k"+strconv.Itoa(i))
	}
	if skew == "" || skew == "uniform" {
		return c, nil
	}
	s, err := parseZipf(skew)
	if err != nil {
		return nil, err
	}
	var total int64
	for i := 1; i <= k; i++ {
		w := max(int64(math.Round(zipfScale/math.Pow(float64(i), s))), 1)
		total += w
		c.cum = append(c.cum, total)
	}
	return c, nil
}

// parseZipf reads "zipf(s=X)" (or "zipf", s=1).
func parseZipf(skew string) (float64, error) {
	bad := fmt.Errorf("skew=%s: want zipf(s=X) with 0 < X <= 10 (e.g. zipf(s=1.1)), or uniform", skew)
	if skew == "zipf" {
		return 1, nil
	}
	arg, ok := strings.CutPrefix(skew, "zipf(s=")
	if !ok {
		return 0, bad
	}
	arg, ok = strings.CutSuffix(arg, ")")
	if !ok {
		return 0, bad
	}
	s, err := strconv.ParseFloat(arg, 64)
	if err != nil || !(s > 0 && s <= 10) {
		return 0, bad
	}
	return s, nil
}

// key is the next record's key: drawn from the stream rand gives when skewed (rand is
// called only then), else the next in turn.
func (c *keyChooser) key(rand func() *sim.Rand) string {
	if c.cum == nil {
		k := c.keys[c.next%len(c.keys)]
		c.next++
		return k
	}
	x := rand().Int64N(c.cum[len(c.cum)-1])
	i, _ := slices.BinarySearch(c.cum, x+1) // the first key whose cumulative weight passes x
	return c.keys[i]
}

// keyRand is the run's stream for key draws, made at its first use.
func (r *Runner) keyRand() *sim.Rand {
	if r.keys == nil {
		r.keys = sim.NewRand(r.World().Seed(), "workload/keys")
	}
	return r.keys
}
