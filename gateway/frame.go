package gateway

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DefaultMaxFrameBytes is Kafka's socket.request.max.bytes (100 MiB): the largest request
// frame a connection may send before the gateway closes it.
const DefaultMaxFrameBytes = 100 << 20

// ReadFrame reads one size-prefixed frame (a 4-byte big-endian length, then the body). A
// length below the smallest request header or above max is an error: the caller closes
// the connection, as Kafka's SocketServer does with an InvalidReceiveException.
func ReadFrame(r io.Reader, max int32) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < minHeaderBytes || n > max {
		return nil, fmt.Errorf("frame of %d bytes: want %d to %d (socket.request.max.bytes)", n, minHeaderBytes, max)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("frame of %d bytes truncated: %w", n, err)
	}
	return body, nil
}

// minHeaderBytes is a request header's fixed part: api key, version, correlation id, and
// the client id's length.
const minHeaderBytes = 2 + 2 + 4 + 2

// Header is a request header (v1 or v2: the client id is always there).
type Header struct {
	Key      int16
	Version  int16
	Corr     int32
	ClientID string
}

// ParseRequest decodes a frame's body into its header and request, with kmsg. It fails
// on an API key kmsg does not know, a version the gateway does not serve (Versions), and
// bytes that do not decode.
func ParseRequest(body []byte) (Header, kmsg.Request, error) {
	r := kbin.Reader{Src: body}
	h := Header{Key: r.Int16(), Version: r.Int16(), Corr: r.Int32()}
	if id := r.NullableString(); id != nil {
		h.ClientID = *id
	}
	if !r.Ok() {
		return h, nil, fmt.Errorf("request header truncated")
	}
	req := kmsg.RequestForKey(h.Key)
	if req == nil {
		return h, nil, fmt.Errorf("unknown api key %d", h.Key)
	}
	v, ok := served(h.Key)
	// ApiVersions of any version is read as v0's empty body is: the answer says which
	// versions exist (KIP-511), so a newer client is told rather than dropped.
	if h.Key != int16(kmsg.ApiVersions) && (!ok || h.Version < v.min || h.Version > v.max) {
		return h, nil, fmt.Errorf("%s v%d is not served (want v%d to v%d)", kmsg.NameForKey(h.Key), h.Version, v.min, v.max)
	}
	if h.Key == int16(kmsg.ApiVersions) && h.Version > v.max {
		req.SetVersion(0)
		return h, req, nil
	}
	req.SetVersion(h.Version)
	if req.IsFlexible() {
		kmsg.SkipTags(&r)
		if !r.Ok() {
			return h, nil, fmt.Errorf("request header tags truncated")
		}
	}
	if err := req.ReadFrom(r.Src); err != nil {
		return h, nil, fmt.Errorf("%s v%d: %w", kmsg.NameForKey(h.Key), h.Version, err)
	}
	return h, req, nil
}

// EncodeResponse writes a response frame: size, correlation id, the header's tag section
// when the response is flexible (never for ApiVersions, whose header is always v0), body.
func EncodeResponse(corr int32, resp kmsg.Response) []byte {
	buf := make([]byte, 8, 64)
	binary.BigEndian.PutUint32(buf[4:], uint32(corr))
	if resp.IsFlexible() && resp.Key() != int16(kmsg.ApiVersions) {
		buf = append(buf, 0)
	}
	buf = resp.AppendTo(buf)
	binary.BigEndian.PutUint32(buf[0:], uint32(len(buf)-4))
	return buf
}
