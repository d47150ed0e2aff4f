// Package gateway lets real Kafka clients talk to a simulated cluster: each simulated
// broker gets a loopback port, requests are decoded with franz-go's kmsg, handed to one
// gateway node inside the world ("gw") that translates them into mqsim's messages for
// the broker the client connected to, and the brokers' typed answers are translated back
// into Kafka responses with Kafka's error codes.
//
// The world stays single-threaded: one goroutine owns it and steps it while virtual
// time follows wall time (times a speed). Connection goroutines only read frames and
// write responses; each decoded request is handed to the world goroutine through a
// channel and injected into the gateway node at the current virtual time. Every session
// is recorded (each request's connection, broker, arrival step and time, and bytes), so
// Replay rebuilds the same world without any client and reaches the same trace hash.
//
// The gateway node also records the clients' operations as seen on the wire (history.go)
// into the cluster's history, so a session ends with the one verdict of every run
// (World.Verdict, runner.Runner.Judge), and a replay reaches the same verdict. A session
// replays in the TUI (tui.RecordSession); Options.Build and Options.Advanced let the TUI
// build the world and watch it live (mqsim serve --tui).
//
// It sits outside sim/ and model/ because it owns sockets, goroutines and the wall clock;
// the gateway node itself (node.go) is a plain state machine like every other node.
package gateway
