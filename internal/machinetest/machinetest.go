// Package machinetest runs the state-machine interaction tests of the model packages, in
// the style of etcd-io/raft's testdata: a file of commands (github.com/cockroachdb/datadriven
// format) drives one state machine on its own and each command's output is what the
// machine did. A failing catalogue scenario then has a smaller place to look first.
//
// Each package's harness is a Runner made fresh for every file. Run checks every file of a
// directory (go test -rewrite rewrites their expected output); Diverging shows that a
// file would catch a planted mistake: it runs the file against a changed machine and
// returns where the output differs from what the file expects.
package machinetest

import (
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// Runner executes one command of a file and returns its output.
type Runner func(t testing.TB, d *datadriven.TestData) string

// Run runs every file under dir, each with a Runner of its own.
func Run(t *testing.T, dir string, newRunner func() Runner) {
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		datadriven.RunTestAny(t, path, newRunner())
	})
}

// Diverging runs the file at path with run and returns the positions (file:line) of the
// commands whose output differs from the file's. It never fails on a difference: the
// caller asserts that the planted mistake was seen, and where.
func Diverging(t *testing.T, path string, run Runner) []string {
	var at []string
	datadriven.RunTestAny(t, path, func(t testing.TB, d *datadriven.TestData) string {
		got := run(t, d)
		if got != "" && !strings.HasSuffix(got, "\n") {
			got += "\n"
		}
		if got != d.Expected {
			at = append(at, d.Pos)
		}
		return d.Expected
	})
	return at
}

// String is the value of key=VALUE, or def when the command has no such argument.
func String(t testing.TB, d *datadriven.TestData, key, def string) string {
	v := def
	d.MaybeScanArgs(t, key, &v)
	return v
}

// Int is the value of key=N, or def.
func Int(t testing.TB, d *datadriven.TestData, key string, def int) int {
	v := def
	d.MaybeScanArgs(t, key, &v)
	return v
}

// Duration is the value of key=DURATION (5s, 150ms), or def.
func Duration(t testing.TB, d *datadriven.TestData, key string, def time.Duration) time.Duration {
	if !d.HasArg(key) {
		return def
	}
	v, err := time.ParseDuration(String(t, d, key, ""))
	if err != nil {
		d.Fatalf(t, "%s=%s: want a duration such as 5s or 150ms", key, String(t, d, key, ""))
	}
	return v
}
