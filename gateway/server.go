package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"mqsim/sim"
)

// Options shape a served session.
type Options struct {
	Scenario Scenario
	// Listen is the first broker's address; broker bN listens on its port + N - 1. Port 0
	// gives every broker a free port (tests).
	Listen string
	// Speed is virtual seconds per wall second (1: real time).
	Speed float64
	// MaxFrameBytes bounds a request frame (socket.request.max.bytes).
	MaxFrameBytes int32
	// MaxConns bounds the open connections, over all brokers; MaxInFlight the requests a
	// connection may have unanswered (the gateway stops reading it until one is answered).
	MaxConns    int
	MaxInFlight int
	// SessionPath, when set, is where the session is saved: every second while it grows,
	// and when it ends.
	SessionPath string
	// Log receives one line per connection event (refused, malformed frame, closed).
	Log io.Writer
	// Build, when set, builds the world instead of Build (the live TUI runs the
	// scenario's steps watched, then Attach).
	Build func(sc Scenario, listen func(brokers int) ([]Addr, error)) (*World, error)
	// Advanced, when set, is called on the world goroutine each time the world moved (ran
	// to the wall clock, took a request or a command): a watcher reads the world there,
	// and nowhere else.
	Advanced func(w *World)
}

// Defaults for Options' bounds.
const (
	DefaultListen      = "127.0.0.1:9092"
	DefaultMaxConns    = 256
	DefaultMaxInFlight = 16
)

func (o *Options) defaults() {
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	if o.Speed <= 0 {
		o.Speed = 1
	}
	if o.MaxFrameBytes <= 0 {
		o.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
}

// IsLoopback reports whether a listen address's host is a loopback address (or
// localhost); anything else exposes the simulated cluster to the network.
func IsLoopback(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server is a running session: listeners, connections, and the goroutine that owns the
// world.
type Server struct {
	opts      Options
	world     *World
	listeners []net.Listener
	addrs     []Addr
	log       *log.Logger
	arrivals  chan arrival
	commands  chan command
	// down are the brokers (by Kafka node id - 1) that are not up: their connections are
	// closed and new ones refused, as a dead broker's would be.
	down    []atomic.Bool
	session Session
	dirty   bool

	mu     sync.Mutex
	conns  map[int]*conn
	nextID int
	wg     sync.WaitGroup
}

// command is a scenario command for the world goroutine, and where its output goes.
type command struct {
	text  string
	reply chan commandResult
}

type commandResult struct {
	out string
	err error
}

// Exec applies a scenario command (crash b1, restart b1, partition b1 | b2 b3 ...) to the
// world at the current virtual time, while clients run; the session records it, so a
// replay applies it at the same step. It waits for the world goroutine (Serve must run).
func (s *Server) Exec(ctx context.Context, text string) (string, error) {
	c := command{text: text, reply: make(chan commandResult, 1)}
	select {
	case s.commands <- c:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	select {
	case r := <-c.reply:
		return r.out, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// arrival is a request read from a connection, on its way to the world goroutine.
type arrival struct {
	conn  *conn
	frame []byte
	req   Request // parsed on the connection's goroutine (parseFrame)
}

// Listen builds the scenario's world and opens one listener per broker. Serve then runs
// the session.
func Listen(opts Options) (*Server, error) {
	opts.defaults()
	s := &Server{opts: opts, log: log.New(opts.Log, "gateway: ", 0), arrivals: make(chan arrival),
		commands: make(chan command), conns: map[int]*conn{}}
	build := opts.Build
	if build == nil {
		build = Build
	}
	w, err := build(opts.Scenario, s.listen)
	if err != nil {
		s.closeListeners()
		return nil, err
	}
	s.world = w
	s.down = make([]atomic.Bool, w.Brokers)
	s.session = Session{Version: SessionVersion, Scenario: opts.Scenario, Addrs: s.addrs}
	return s, nil
}

// listen opens a listener for each of n brokers.
func (s *Server) listen(n int) ([]Addr, error) {
	host, portText, err := net.SplitHostPort(s.opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: want HOST:PORT, e.g. %s", s.opts.Listen, DefaultListen)
	}
	base, err := strconv.Atoi(portText)
	if err != nil || base < 0 || base+n-1 > 65535 {
		return nil, fmt.Errorf("--listen %q: want a port from 0 to %d for %d brokers", s.opts.Listen, 65535-n+1, n)
	}
	for i := 0; i < n; i++ {
		port := 0
		if base > 0 {
			port = base + i
		}
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			s.closeListeners()
			return nil, fmt.Errorf("broker b%d: %w", i+1, err)
		}
		s.listeners = append(s.listeners, l)
		tcp := l.Addr().(*net.TCPAddr)
		s.addrs = append(s.addrs, Addr{Host: host, Port: int32(tcp.Port)})
	}
	return s.addrs, nil
}

func (s *Server) closeListeners() {
	for _, l := range s.listeners {
		l.Close()
	}
}

// Addrs are the brokers' addresses, b1 first.
func (s *Server) Addrs() []string {
	var out []string
	for _, a := range s.addrs {
		out = append(out, net.JoinHostPort(a.Host, strconv.Itoa(int(a.Port))))
	}
	return out
}

// World is the session's world. Only the goroutine running Serve may touch it while it
// runs.
func (s *Server) World() *World { return s.world }

// Serve accepts clients and runs the world until ctx is done, then closes every
// connection, saves the session, and returns it.
func (s *Server) Serve(ctx context.Context) (*Session, error) {
	for i, l := range s.listeners {
		s.wg.Add(1)
		go s.accept(l, int32(i+1))
	}
	err := s.run(ctx)
	s.closeListeners()
	s.mu.Lock()
	for _, c := range s.conns {
		c.close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.session.EndStep, s.session.EndTime, s.session.Hash = s.world.W.Steps(), s.world.W.Now(), s.world.Hash()
	if s.opts.SessionPath != "" {
		if serr := s.session.Save(s.opts.SessionPath); serr != nil && err == nil {
			err = serr
		}
	}
	return &s.session, err
}

// PacingLead is how far ahead of wall time (times the speed) the world may run: it runs
// every event due within it at once instead of sleeping until the event is due. A Go
// timer shorter than about a millisecond fires up to a millisecond late (measured: a
// third of a millisecond on average, on a loaded machine), and a produce with acks=all
// crosses the simulated network four times, so sleeping for each hop made a session's
// throughput a matter of timer granularity. What the world does is unchanged (the same
// events, at the same virtual times, in the same order); only the wall time at which it
// does them moves earlier, by at most PacingLead.
const PacingLead = time.Millisecond

// run is the world goroutine: virtual time follows wall time times the speed; each
// request is injected at the current virtual time and recorded; replies go out to their
// connections after every advance.
func (s *Server) run(ctx context.Context) error {
	w := s.world
	start, v0 := time.Now(), w.W.Now()
	vnow := func() sim.Time {
		return v0.Add(time.Duration(float64(time.Since(start)) * s.opts.Speed))
	}
	lead := time.Duration(float64(PacingLead) * s.opts.Speed)
	warned := false
	advance := func() {
		if w.runDue(vnow, lead) && !warned {
			warned = true
			s.log.Printf("the world runs behind wall time: --speed %g asks for more events a second than it can run; requests are still served, at the world's time", s.opts.Speed)
		}
		s.dispatch(w.Node.TakeReplies())
		s.closeDeadBrokers()
		s.advanced()
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	save := time.NewTicker(time.Second)
	defer save.Stop()
	for {
		wait := 20 * time.Millisecond
		if next, ok := w.W.NextAt(); ok {
			if d := time.Duration(float64(next-vnow())/s.opts.Speed) - PacingLead; d < wait {
				wait = max(d, 0)
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			advance()
			return nil
		case a := <-s.arrivals:
			advance()
			s.session.Arrivals = append(s.session.Arrivals, Arrival{Conn: a.conn.id, Broker: a.conn.broker,
				Step: w.W.Steps(), Time: w.W.Now(), Frame: a.frame})
			s.dirty = true
			w.injectParsed(a.conn.id, a.conn.broker, a.req)
			advance() // the request now, not after a zero timer's round trip
		case c := <-s.commands:
			advance()
			step, now := w.W.Steps(), w.W.Now()
			out, err := w.exec(c.text)
			if err == nil {
				s.session.Arrivals = append(s.session.Arrivals, Arrival{Step: step, Time: now, Command: c.text})
				s.dirty = true
			}
			c.reply <- commandResult{out, err}
			s.dispatch(w.Node.TakeReplies())
			s.closeDeadBrokers()
			s.advanced()
		case <-save.C:
			if s.dirty && s.opts.SessionPath != "" {
				s.session.EndStep, s.session.EndTime = w.W.Steps(), w.W.Now()
				if err := s.session.Save(s.opts.SessionPath); err != nil {
					s.log.Print(err)
				}
				s.dirty = false
			}
		case <-timer.C:
			advance()
		}
	}
}

// advanced tells Options.Advanced that the world moved.
func (s *Server) advanced() {
	if s.opts.Advanced != nil {
		s.opts.Advanced(s.world)
	}
}

// closeDeadBrokers closes the connections of brokers that are down (crashed or killed: a
// real broker's sockets close with its process), and marks them so that new connections
// are refused until they are up again. A paused broker keeps its connections open and
// silent, as a stopped process's sockets stay open.
func (s *Server) closeDeadBrokers() {
	w := s.world
	for i, b := range w.Node.brokers {
		down := w.W.Status(b) == sim.Down
		if s.down[i].Swap(down) == down || !down {
			continue
		}
		s.mu.Lock()
		for _, c := range s.conns {
			if c.broker == int32(i+1) {
				s.log.Printf("connection %d to b%d: closing: the broker is %s", c.id, c.broker, w.W.Status(b))
				c.close()
			}
		}
		s.mu.Unlock()
	}
}

// dispatch hands replies to their connections' writers.
func (s *Server) dispatch(replies []Reply) {
	for _, r := range replies {
		s.mu.Lock()
		c := s.conns[r.Conn]
		s.mu.Unlock()
		if c == nil {
			continue // the client went away
		}
		select {
		case c.out <- r:
		case <-c.closed:
		}
	}
}

// accept takes a broker's connections, up to MaxConns over all brokers.
func (s *Server) accept(l net.Listener, broker int32) {
	defer s.wg.Done()
	for {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		if s.down[broker-1].Load() {
			nc.Close() // a dead broker refuses connections
			continue
		}
		s.mu.Lock()
		if len(s.conns) >= s.opts.MaxConns {
			s.mu.Unlock()
			s.log.Printf("b%d: refusing %s: %d connections open (the bound)", broker, nc.RemoteAddr(), s.opts.MaxConns)
			nc.Close()
			continue
		}
		s.nextID++
		c := &conn{id: s.nextID, broker: broker, nc: nc, out: make(chan Reply, s.opts.MaxInFlight),
			order: make(chan int32, s.opts.MaxInFlight), slots: make(chan struct{}, s.opts.MaxInFlight), closed: make(chan struct{})}
		s.conns[c.id] = c
		s.mu.Unlock()
		s.wg.Add(2)
		go s.read(c)
		go s.write(c)
	}
}

// conn is one client connection to one broker.
type conn struct {
	id     int
	broker int32
	nc     net.Conn
	out    chan Reply    // replies from the world, in any order
	order  chan int32    // correlation ids in request order, for the writer
	slots  chan struct{} // one per request in flight
	closed chan struct{}
	once   sync.Once
}

func (c *conn) close() {
	c.once.Do(func() {
		close(c.closed)
		c.nc.Close()
	})
}

// read reads frames, checks each decodes, and hands it to the world, at most
// MaxInFlight unanswered at a time. A malformed or oversized frame closes this
// connection only.
func (s *Server) read(c *conn) {
	defer s.wg.Done()
	defer s.forget(c)
	for {
		frame, err := ReadFrame(c.nc, s.opts.MaxFrameBytes)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.log.Printf("connection %d to b%d: closing: %v", c.id, c.broker, err)
			}
			return
		}
		req, err := parseFrame(frame)
		if err != nil {
			s.log.Printf("connection %d to b%d: closing: %v", c.id, c.broker, err)
			return
		}
		h := req.Header
		select {
		case c.slots <- struct{}{}:
		case <-c.closed:
			return
		}
		c.order <- h.Corr // never blocks: at most MaxInFlight are queued, one per slot
		select {
		case s.arrivals <- arrival{conn: c, frame: frame, req: req}:
		case <-c.closed:
			return
		}
	}
}

// forget closes a connection and removes it from the table.
func (s *Server) forget(c *conn) {
	c.close()
	s.mu.Lock()
	delete(s.conns, c.id)
	s.mu.Unlock()
}

// write sends replies in request order (Kafka answers a connection's requests in the
// order they came; clients match them so), holding a reply until those before it went.
func (s *Server) write(c *conn) {
	defer s.wg.Done()
	defer s.forget(c)
	var queue []int32
	ready := map[int32]Reply{}
	for {
		select {
		case <-c.closed:
			return
		case corr := <-c.order:
			queue = append(queue, corr)
		case r := <-c.out:
			if r.Close {
				s.log.Printf("connection %d to b%d: closing: %s", c.id, c.broker, r.Reason)
				return
			}
			ready[r.Corr] = r
		}
		for len(queue) > 0 {
			r, ok := ready[queue[0]]
			if !ok {
				break
			}
			delete(ready, queue[0])
			queue = queue[1:]
			if r.Frame != nil {
				if _, err := c.nc.Write(r.Frame); err != nil {
					return
				}
			}
			<-c.slots
		}
	}
}
