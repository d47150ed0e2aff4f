package wal

import "fmt"

// invariant panics: an internal invariant broke, which is a bug in this package, never
// bad input (that is an error) and never bad bytes on disk (those are recovered from).
// Callers test the condition themselves (if broken { invariant(...) }) so that the
// arguments are only boxed on the failing path.
func invariant(format string, args ...any) {
	panic("wal: invariant: " + fmt.Sprintf(format, args...))
}
