package gateway_test

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/gateway"
)

// writeRequest sends a request with header v1 (v2 tags when flexible).
func writeRequest(t *testing.T, c net.Conn, req kmsg.Request, corr int32) {
	t.Helper()
	b := binary.BigEndian.AppendUint16(nil, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(req.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, 0xffff) // null client id
	if req.IsFlexible() {
		b = append(b, 0)
	}
	b = req.AppendTo(b)
	if _, err := c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)); err != nil {
		t.Fatal(err)
	}
}

// readCorr reads one response frame and returns its correlation id.
func readCorr(t *testing.T, c net.Conn) int32 {
	t.Helper()
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	return int32(binary.BigEndian.Uint32(body))
}

// With one request in flight per connection, the gateway reads a connection's next
// request only once the one before is answered: a fetch held for its max wait holds the
// next request back, which the session shows as a later arrival. Answers keep the
// requests' order either way.
func TestInFlightBoundHoldsTheNextRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("opens sockets")
	}
	for _, bound := range []int{1, 4} {
		sc, _ := gateway.LoadScenario("", 1)
		srv, err := gateway.Listen(gateway.Options{Scenario: sc, Listen: "127.0.0.1:0", Speed: 1, MaxInFlight: bound})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan *gateway.Session, 1)
		go func() { s, _ := srv.Serve(ctx); done <- s }()
		c, err := net.DialTimeout("tcp", srv.Addrs()[0], 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		fetch := kmsg.NewPtrFetchRequest()
		fetch.SetVersion(11)
		fetch.MaxWaitMillis = 300
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = "t"
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.PartitionMaxBytes = 0, 1<<20
		ft.Partitions = append(ft.Partitions, fp)
		fetch.Topics = append(fetch.Topics, ft)
		writeRequest(t, c, fetch, 1)
		meta := kmsg.NewPtrMetadataRequest()
		meta.SetVersion(9)
		writeRequest(t, c, meta, 2)
		if a, b := readCorr(t, c), readCorr(t, c); a != 1 || b != 2 {
			t.Fatalf("bound %d: answers in order %d, %d; want 1, 2", bound, a, b)
		}
		c.Close()
		cancel()
		s := <-done
		if len(s.Arrivals) != 2 {
			t.Fatalf("bound %d: %d arrivals, want 2", bound, len(s.Arrivals))
		}
		gap := time.Duration(s.Arrivals[1].Time - s.Arrivals[0].Time)
		if held := gap >= 300*time.Millisecond; held != (bound == 1) {
			t.Errorf("bound %d: the metadata request arrived %s after the fetch (held back: %t, want %t)", bound, gap, held, bound == 1)
		}
	}
}

// Past the connection bound a new connection is closed at once, with a log line; the
// open one keeps working.
func TestConnectionBound(t *testing.T) {
	if testing.Short() {
		t.Skip("opens sockets")
	}
	sc, _ := gateway.LoadScenario("", 1)
	var logs safeBuffer
	srv, err := gateway.Listen(gateway.Options{Scenario: sc, Listen: "127.0.0.1:0", MaxConns: 1, Log: &logs})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	first, err := net.DialTimeout("tcp", srv.Addrs()[0], 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	first.SetDeadline(time.Now().Add(10 * time.Second))
	writeRequest(t, first, kmsg.NewPtrApiVersionsRequest(), 1) // the connection is registered once this is answered
	if readCorr(t, first) != 1 {
		t.Fatal("first connection: wrong answer")
	}
	second, err := net.DialTimeout("tcp", srv.Addrs()[1], 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	second.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := second.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("second connection read %v, want EOF (refused)", err)
	}
	writeRequest(t, first, kmsg.NewPtrApiVersionsRequest(), 2)
	if readCorr(t, first) != 2 {
		t.Fatal("first connection stopped working")
	}
	if !strings.Contains(logs.String(), "connections open (the bound)") {
		t.Errorf("no log line for the refused connection: %s", logs.String())
	}
}

// safeBuffer is a log sink the server's goroutines may write while the test reads.
type safeBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
