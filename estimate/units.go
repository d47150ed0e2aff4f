package estimate

import (
	"fmt"
	"strconv"
	"strings"
)

// The parsers below read the values a learner types. Each is strict: a number made of
// digits with at most one decimal point (no sign, no exponent, no Inf or NaN), then
// exactly one unit it knows. Units of bytes are decimal (KB = 1000 B) or binary
// (KiB = 1024 B) as their names say; counts and bits are decimal.

// splitNumber cuts s into its leading number and the unit after it.
func splitNumber(s string) (num float64, unit string, ok bool) {
	end, dots := 0, 0
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] == '.') {
		if s[end] == '.' {
			dots++
		}
		end++
	}
	if end == 0 || dots > 1 || s[0] == '.' || s[end-1] == '.' {
		return 0, "", false
	}
	v, err := strconv.ParseFloat(s[:end], 64)
	if err != nil {
		return 0, "", false
	}
	return v, s[end:], true
}

var countUnits = map[string]float64{"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}

var byteUnits = map[string]float64{
	"B":  1,
	"KB": 1e3, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50,
}

var bitUnits = map[string]float64{"bit": 1, "kbit": 1e3, "Kbit": 1e3, "Mbit": 1e6, "Gbit": 1e9, "Tbit": 1e12}

var durationUnits = map[string]float64{"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}

// valueError is a bad flag value: the flag, what was typed, what went wrong and what is
// expected.
func valueError(flag, value, problem, want string) error {
	return fmt.Errorf("--%s %q: %s; want %s", flag, value, problem, want)
}

// quantity parses typed as a number followed by one of units, then suffix (such as
// "/s"), and checks that the product is more than zero.
func quantity(flag, typed, suffix string, units map[string]float64, want string) (float64, error) {
	amount, ok := strings.CutSuffix(typed, suffix)
	if !ok {
		return 0, valueError(flag, typed, "no "+suffix+" at the end", want)
	}
	if strings.HasPrefix(amount, "-") {
		return 0, valueError(flag, typed, "negative", want)
	}
	num, unit, ok := splitNumber(amount)
	if !ok {
		return 0, valueError(flag, typed, "no number at the start", want)
	}
	scale, known := units[unit]
	switch {
	case !known && unit == "":
		return 0, valueError(flag, typed, "no unit", want)
	case !known:
		return 0, valueError(flag, typed, fmt.Sprintf("unknown unit %q", unit+suffix), want)
	}
	if num == 0 {
		return 0, valueError(flag, typed, "zero", want)
	}
	return num * scale, nil
}

// ParseRate reads messages per second: "1M/s", "500k/s", "2000/s".
func ParseRate(flag, s string) (float64, error) {
	return quantity(flag, s, "/s", countUnits, "messages per second, like 1M/s, 500k/s or 2000/s (k, M, G = 10^3, 10^6, 10^9)")
}

// ParseSize reads bytes: "1KB" (1000 B), "1KiB" (1024 B), "10TB". A size is a whole
// number of bytes.
func ParseSize(flag, s string) (float64, error) {
	const want = "a size like 1KB, 512B or 1KiB (KB, MB, GB, TB, PB = 10^3, 10^6 ... bytes; KiB, MiB, GiB, TiB, PiB = 2^10, 2^20 ... bytes)"
	v, err := quantity(flag, s, "", byteUnits, want)
	if err == nil && v != float64(int64(v)) {
		err = valueError(flag, s, "not a whole number of bytes", want)
	}
	return v, err
}

// byteRateUnits are the units of a byte rate: bytes, and bits counted as bytes.
var byteRateUnits = func() map[string]float64 {
	m := map[string]float64{}
	for u, v := range byteUnits {
		m[u] = v
	}
	for u, v := range bitUnits {
		m[u] = v / 8
	}
	return m
}()

// ParseByteRate reads bytes per second ("600MB/s", "1GiB/s") or bits per second
// ("10Gbit/s", counted as bytes: divided by 8).
func ParseByteRate(flag, s string) (float64, error) {
	return quantity(flag, s, "/s", byteRateUnits, "a rate like 600MB/s or 1GiB/s (bytes per second) or 10Gbit/s (bits per second)")
}

// ParseDuration reads seconds: "7d", "12h", "30m" (minutes), "90s", "2w".
func ParseDuration(flag, s string) (float64, error) {
	return quantity(flag, s, "", durationUnits, "a duration like 7d, 12h, 30m or 90s (s, m = minutes, h, d, w)")
}

// ParseCount reads a whole number, at least 1.
func ParseCount(flag, s string) (int, error) {
	const want = "a whole number, at least 1"
	n, err := strconv.Atoi(s)
	switch {
	case err != nil:
		return 0, valueError(flag, s, "not a whole number", want)
	case n < 0:
		return 0, valueError(flag, s, "negative", want)
	case n == 0:
		return 0, valueError(flag, s, "zero", want)
	}
	return n, nil
}
