package sim

import (
	"hash/fnv"
	"math/bits"
	"math/rand/v2"
	"time"
)

// Rand is one named random stream. Streams are derived from the run seed and a name
// ("network", "disk", "faults", "workload", "node/b1"), so a stream's sequence depends only
// on the seed and its own draws: adding a node or a fault does not reshuffle the others.
//
// Probabilities are integers in parts per million, never floats, so a run decides the same
// way on every platform.
type Rand struct {
	pcg rand.PCG
}

// PPM is a probability in parts per million: 1_000_000 is certain, 0 is never.
type PPM int

// Percent converts a whole percentage to PPM.
func Percent(p int) PPM { return PPM(p * 10_000) }

// NewRand derives the stream called name from the run seed.
func NewRand(seed uint64, name string) *Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	r := &Rand{}
	r.pcg.Seed(seed, h.Sum64())
	return r
}

// Uint64 returns 64 uniformly random bits.
func (r *Rand) Uint64() uint64 { return r.pcg.Uint64() }

// IntN returns a uniform integer in [0, n). n must be positive.
func (r *Rand) IntN(n int) int {
	if n <= 0 {
		panic("sim: Rand.IntN with n <= 0")
	}
	// Lemire's multiply-shift; the bias is below 2^-32 for the sizes mqsim uses.
	hi, _ := bits.Mul64(r.pcg.Uint64(), uint64(n))
	return int(hi)
}

// Int64N returns a uniform integer in [0, n). n must be positive.
func (r *Rand) Int64N(n int64) int64 {
	if n <= 0 {
		panic("sim: Rand.Int64N with n <= 0")
	}
	hi, _ := bits.Mul64(r.pcg.Uint64(), uint64(n))
	return int64(hi)
}

// Chance reports true with probability p.
func (r *Rand) Chance(p PPM) bool {
	if p <= 0 {
		return false
	}
	if p >= 1_000_000 {
		return true
	}
	return r.IntN(1_000_000) < int(p)
}

// Jitter returns a uniform duration in [0, max], in whole microseconds when max is at
// least one (so traces read "1.054ms", not "1.054753ms"). It draws nothing when max is 0,
// so turning jitter off does not shift the stream.
func (r *Rand) Jitter(max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	if max < time.Microsecond {
		return time.Duration(r.Int64N(int64(max) + 1))
	}
	return time.Duration(r.Int64N(int64(max/time.Microsecond)+1)) * time.Microsecond
}
