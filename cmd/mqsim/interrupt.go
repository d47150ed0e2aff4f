package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"mqsim/sim"
)

// interruptible is a context that SIGINT (Ctrl-C) and SIGTERM both cancel: a long command
// stops with what it has, whichever way it was asked to. Only the first signal is
// caught: a second one ends the process at once, as if nothing caught it.
func interruptible(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// exitInterrupted is the exit status of a command stopped by a signal (128 + SIGINT).
const exitInterrupted = 130

// isTerminal reports whether w is a terminal (progress is drawn only there).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// runProgress draws how far a long run has got on one line of a terminal, at most ten
// times a second, and nothing elsewhere.
type runProgress struct {
	w    io.Writer
	on   bool
	last time.Time
	drew bool
}

func newRunProgress(w io.Writer) *runProgress { return &runProgress{w: w, on: isTerminal(w)} }

func (p *runProgress) update(steps uint64, now sim.Time) {
	if !p.on || time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last, p.drew = time.Now(), true
	fmt.Fprintf(p.w, "\r%d events, t=%s (ctrl-c stops)   ", steps, now)
}

// done clears the progress line.
func (p *runProgress) done() {
	if p.drew {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", 60)+"\r")
	}
}
