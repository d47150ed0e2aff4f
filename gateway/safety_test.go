package gateway_test

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/gateway"
)

// A malformed frame closes its own connection with a log line; another client on the
// same broker is served as before. A newer ApiVersions is answered v0 with
// UNSUPPORTED_VERSION and the versions served.
func TestMalformedFrameClosesOnlyItsConnection(t *testing.T) {
	if testing.Short() {
		t.Skip("opens sockets")
	}
	srv, stop, logs := serve(t, 4)
	defer stop()
	bad, err := net.DialTimeout("tcp", srv.Addrs()[0], 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	bad.SetDeadline(time.Now().Add(5 * time.Second))
	// A frame of 12 bytes whose api key is 999 (no such request).
	bad.Write([]byte{0, 0, 0, 12, 0x03, 0xe7, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0, 0})
	if _, err := bad.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("the malformed connection read %v, want EOF (closed)", err)
	}

	raw, err := net.DialTimeout("tcp", srv.Addrs()[0], 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(5 * time.Second))
	// ApiVersions v9, header v1: key 18, version 9, corr 5, client id null, no body.
	raw.Write([]byte{0, 0, 0, 10, 0, 18, 0, 9, 0, 0, 0, 5, 0xff, 0xff})
	var size [4]byte
	if _, err := io.ReadFull(raw, size[:]); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(raw, body); err != nil {
		t.Fatal(err)
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.SetVersion(0)
	if err := resp.ReadFrom(body[4:]); err != nil || binary.BigEndian.Uint32(body) != 5 {
		t.Fatalf("ApiVersions answer: corr %d, %v", binary.BigEndian.Uint32(body), err)
	}
	if resp.ErrorCode != kerr.UnsupportedVersion.Code || len(resp.ApiKeys) != 1 || resp.ApiKeys[0].ApiKey != int16(kmsg.ApiVersions) || resp.ApiKeys[0].MaxVersion != 3 {
		t.Fatalf("ApiVersions v9 answered error %d with keys %+v, want %d and ApiVersions' own range (KIP-511)", resp.ErrorCode, resp.ApiKeys, kerr.UnsupportedVersion.Code)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.Addrs()[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil || len(meta.Brokers) != 3 {
		t.Fatalf("metadata after the bad connection: %v, %d brokers", err, len(meta.Brokers))
	}
	cl.Close()
	s := stop()
	if !strings.Contains(logs.String(), "unknown api key 999") {
		t.Errorf("no log line names the malformed frame; log:\n%s", logs)
	}
	if w, err := gateway.Replay(s); err != nil || w.Hash() != s.Hash {
		t.Errorf("replay: %v", err)
	}
}
