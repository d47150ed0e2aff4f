package runner

import (
	"context"
	"errors"
	"math"

	"mqsim/sim"
)

// ErrInterrupted is the error of a command stopped because the runner's context was
// done (Watch): the run holds what happened before.
var ErrInterrupted = errors.New("interrupted")

// CommandSteps bounds the events one command may run (run, stabilize, and every command
// that waits for an answer), unless Options.MaxCommandSteps says otherwise: a command
// that reaches it fails with "did not settle within ... steps" instead of running for
// hours. The catalogue's longest command runs a few thousand events.
const CommandSteps = 50_000_000

// commandSteps is the run's bound on the events of one command.
func (r *Runner) commandSteps() uint64 {
	if r.opts.MaxCommandSteps > 0 {
		return r.opts.MaxCommandSteps
	}
	return CommandSteps
}

// watchEvery is how many events a wait runs between two looks at the context and two
// progress reports.
const watchEvery = 1 << 14

// Watch makes the runner's waits stop with ErrInterrupted once ctx is done, and call
// progress (if not nil) with the world's step count and clock every few thousand events.
// Neither changes what a run does: they only look at it between events.
func (r *Runner) Watch(ctx context.Context, progress func(steps uint64, now sim.Time)) {
	r.ctx, r.progress = ctx, progress
}

// wait runs the world until done (checked before each step) reports true or nothing is
// pending, within maxSteps events (and what is left of the command's bound, commandSteps)
// and no event after until. It reports
// whether done became true; hitting a bound is a *sim.NotSettledError naming what, and a
// done context (Watch) is ErrInterrupted. It steps exactly as World.RunUntil does.
func (r *Runner) wait(what string, done func(*sim.World) bool, maxSteps uint64, until sim.Time) (bool, error) {
	w := r.World()
	left := uint64(0)
	if used := w.Steps() - r.cmdStart; used < r.commandSteps() {
		left = r.commandSteps() - used
	}
	b := sim.Bound{Steps: min(maxSteps, left), Until: until}
	start := w.Steps()
	for {
		ran := w.Steps() - start
		slice := min(b.Steps-ran, watchEvery)
		ok, err := w.Settle(what, done, sim.Bound{Steps: slice, Until: until})
		if ok || err == nil {
			return ok, nil
		}
		var ns *sim.NotSettledError
		if errors.As(err, &ns) && (ns.ByTime || ran+slice >= b.Steps) {
			return false, &sim.NotSettledError{What: what, Bound: b, Steps: w.Steps() - start, Now: w.Now(), ByTime: ns.ByTime}
		}
		if r.progress != nil {
			r.progress(w.Steps(), w.Now())
		}
		if r.ctx != nil && r.ctx.Err() != nil {
			return false, ErrInterrupted
		}
	}
}

// runUntilTime executes every event at or before t, then sets the clock to t, as
// World.RunUntilTime does, within the command's bound.
func (r *Runner) runUntilTime(what string, t sim.Time) error {
	w := r.World()
	if _, err := r.wait(what, func(w *sim.World) bool { next, ok := w.NextAt(); return !ok || next > t }, math.MaxUint64, sim.MaxTime); err != nil {
		return err
	}
	w.RunUntilTime(t)
	return nil
}
