//go:build clients

package main

// Real Kafka clients through mqsim serve: `make test-clients` (Debian's kcat, which is
// librdkafka). It is behind the clients build tag so that `make test` stays Go-only.

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// kcat is the kcat binary: $KCAT, else the one on the PATH.
func kcat(t *testing.T) string {
	if p := os.Getenv("KCAT"); p != "" {
		return p
	}
	p, err := exec.LookPath("kcat")
	if err != nil {
		t.Fatalf("no kcat on the PATH (apt-get install -y kcat, or set KCAT=path): %v", err)
	}
	return p
}

// freeBase finds a port p with p, p+1 and p+2 free on loopback: mqsim serve puts broker
// bN on the --listen port + N - 1.
func freeBase(t *testing.T, brokers int) int {
	t.Helper()
	for try := 0; try < 50; try++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base := l.Addr().(*net.TCPAddr).Port
		ls := []net.Listener{l}
		ok := base+brokers-1 <= 65535
		for i := 1; i < brokers && ok; i++ {
			li, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(base+i)))
			if err != nil {
				ok = false
				break
			}
			ls = append(ls, li)
		}
		for _, l := range ls {
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("found no three consecutive free loopback ports")
	return 0
}

// serveInProcess runs `mqsim serve --listen 127.0.0.1:BASE` until stop is called, which
// returns what it printed. It waits until b1 accepts connections.
func serveInProcess(t *testing.T, session string) (bootstrap string, stop func() string) {
	t.Helper()
	base := freeBase(t, 3)
	bootstrap = net.JoinHostPort("127.0.0.1", strconv.Itoa(base))
	var stdout, stderr bytes.Buffer
	root := newRoot(&stdout, &stderr)
	root.SetIn(strings.NewReader(""))
	root.SetArgs([]string{"serve", "--listen", bootstrap, "--speed", "4", "--session", session})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", bootstrap, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case err := <-done:
			t.Fatalf("mqsim serve ended: %v\n%s%s", err, stdout.String(), stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("mqsim serve is not listening at %s after 20s", bootstrap)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stopped := false
	stop = func() string {
		if !stopped {
			stopped = true
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("mqsim serve: %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Error("mqsim serve did not stop within 20s")
			}
		}
		return stdout.String() + stderr.String()
	}
	t.Cleanup(func() { stop() })
	return bootstrap, stop
}

// runKcat runs kcat with a time limit, feeding it stdin, and returns its standard output.
func runKcat(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("kcat %s: %v\nstderr:\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// sortedLines is text's non-empty lines, sorted.
func sortedLines(text string) []string {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	slices.Sort(lines)
	return lines
}

// kcat produces lines through mqsim serve (plain, then idempotent with acks=all), reads
// them all back from the beginning with -e, then again as a consumer group (-G), which
// commits (the group's next consumer reads nothing); the session then replays to the
// same hash.
func TestKcatProducesAndConsumesThroughServe(t *testing.T) {
	session := filepath.Join(t.TempDir(), "session.json")
	b, stop := serveInProcess(t, session)
	const n = 40
	var in1, in2 strings.Builder
	var want []string
	for i := range n {
		line := fmt.Sprintf("line-%03d", i)
		want = append(want, line)
		if i < n/2 {
			fmt.Fprintln(&in1, line)
		} else {
			fmt.Fprintln(&in2, line)
		}
	}
	slices.Sort(want)
	runKcat(t, in1.String(), "-P", "-b", b, "-t", "t")
	runKcat(t, in2.String(), "-P", "-b", b, "-t", "t", "-X", "enable.idempotence=true", "-X", "acks=all")

	if got := sortedLines(runKcat(t, "", "-C", "-b", b, "-t", "t", "-e", "-o", "beginning", "-q")); !slices.Equal(got, want) {
		t.Fatalf("kcat -C read %d lines %v\nwant %d %v", len(got), got, len(want), want)
	}
	if got := sortedLines(runKcat(t, "", "-b", b, "-G", "kcat-group", "-X", "auto.offset.reset=earliest", "-e", "-q", "t")); !slices.Equal(got, want) {
		t.Fatalf("kcat -G read %d lines %v\nwant %d %v", len(got), got, len(want), want)
	}
	// The group committed as it closed: the same group starts where it left off. (kcat -G
	// -o would override the committed offsets: auto.offset.reset applies only without.)
	if got := sortedLines(runKcat(t, "", "-b", b, "-G", "kcat-group", "-X", "auto.offset.reset=earliest", "-e", "-q", "t")); len(got) != 0 {
		t.Fatalf("kcat -G read %d lines again after its group committed: %v", len(got), got)
	}

	out := stop()
	var replayOut, replayErr bytes.Buffer
	root := newRoot(&replayOut, &replayErr)
	root.SetArgs([]string{"replay", session})
	if err := root.Execute(); err != nil {
		t.Fatalf("mqsim replay: %v\n%s%s\nserve printed:\n%s", err, replayOut.String(), replayErr.String(), out)
	}
}
