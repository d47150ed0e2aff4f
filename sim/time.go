package sim

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Time is a point in virtual time: nanoseconds since the start of the run.
type Time int64

// MaxTime is the latest virtual time: the clock is an int64 of nanoseconds (about 292
// years). Add saturates at it rather than wrapping to a time before the run began.
const MaxTime = Time(math.MaxInt64)

// MaxDuration is the longest duration a scenario, setting or fault plan may give: one
// year of virtual time. A run adds many durations to its clock (timeouts on top of
// timeouts), and the clock must never overflow; a year is far beyond anything the
// simulated systems wait for, and far beyond what a run can simulate in steps.
const MaxDuration = 365 * 24 * time.Hour

// MinTimerPeriod is the shortest period allowed for a timer that re-arms itself
// (heartbeats, auto-commit, flush) and the shortest request timeout: anything shorter
// fires many times before a message crosses a link (latency is in milliseconds), so a
// run spends all its steps on the timer and its virtual clock barely moves.
const MinTimerPeriod = time.Millisecond

// CheckTimerPeriod refuses a period under MinTimerPeriod for the setting named
// setting, saying why; nil when d is long enough.
func CheckTimerPeriod(setting string, d time.Duration) error {
	if d >= MinTimerPeriod {
		return nil
	}
	return fmt.Errorf("%s=%s: want at least %s (a shorter period fires many times before any message crosses a link: the run would spend its steps on the timer)",
		setting, d, MinTimerPeriod)
}

// Add returns t moved forward by d, at most to MaxTime.
func (t Time) Add(d time.Duration) Time {
	if d > 0 && t > MaxTime-Time(d) {
		return MaxTime
	}
	return t + Time(d)
}

// Sub returns the duration from u to t.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }

// String renders t the way durations are written in scenario files ("1.204s", "15ms", "0s").
func (t Time) String() string { return FormatDuration(time.Duration(t)) }

// FormatDuration renders d in the form ParseDuration reads.
func FormatDuration(d time.Duration) string { return d.String() }

// ParseDuration reads a non-negative duration such as "250ms", "1.5s", "2m" or "0". A bare
// number other than 0 is refused: a unit is always required, so "100" cannot be read as
// 100ns by mistake.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return 0, fmt.Errorf("duration %q needs a unit (ns, us, ms, s, m, h), e.g. %sms", s, s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad duration %q: want a number with a unit, e.g. 250ms or 1.5s", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	if d > MaxDuration {
		return 0, fmt.Errorf("duration %q is too long: the largest allowed is %s (one year of virtual time, which is int64 nanoseconds)", s, FormatDuration(MaxDuration))
	}
	return d, nil
}
