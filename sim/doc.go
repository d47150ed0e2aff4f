// Package sim is mqsim's deterministic simulation kernel: a virtual clock, an event queue,
// named random streams, a simulated network and disk, process faults, fault plans and the
// trace.
//
// A run is a World. The world executes one event at a time in (time, sequence) order; nodes
// are plain state machines (Start, Recv, Timer) that act only through the Env the world
// hands them. One seed decides every random choice, so a run replays exactly: the same
// seed gives the same trace, event by event, on any machine.
//
// A world may charge time for work (Costs, off by default): link bandwidth with one
// transmission at a time per directed link, disk write throughput at fsync, a bounded page
// cache per node whose misses cost read time, and CPU per message and per record received.
// A node busy with reads or CPU receives nothing until it is free and sends when it is.
// Messages say their size and record count with the optional Sized and Counted interfaces.
//
// Nothing in this package starts a goroutine, reads the wall clock, touches the OS or draws
// from a global random source; a test in this package enforces it. Wherever a map is
// ranged over and the order could reach output or a decision, keys are sorted first.
package sim
