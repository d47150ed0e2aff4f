package gateway

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"mqsim/model/proto"
)

// frame prefixes a body with its size.
func frame(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// requestBody encodes a request as a client does: header v1 (v2 tags when flexible), body.
func requestBody(req kmsg.Request, corr int32) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(req.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(req.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, 3)
	b = append(b, "cli"...)
	if req.IsFlexible() {
		b = append(b, 0)
	}
	return req.AppendTo(b)
}

func TestReadFrameBounds(t *testing.T) {
	body := requestBody(kmsg.NewPtrApiVersionsRequest(), 7)
	got, err := ReadFrame(bytes.NewReader(frame(body)), 1<<20)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("ReadFrame = %x, %v; want %x", got, err, body)
	}
	if _, err := ReadFrame(bytes.NewReader(frame(body)), int32(len(body)-1)); err == nil || !strings.Contains(err.Error(), "socket.request.max.bytes") {
		t.Errorf("a frame over the bound: err %v, want one naming socket.request.max.bytes", err)
	}
	truncated := frame(body)[:len(body)]
	if _, err := ReadFrame(bytes.NewReader(truncated), 1<<20); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a truncated frame: err %v, want unexpected EOF", err)
	}
	if _, err := ReadFrame(bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff}), 1<<20); err == nil {
		t.Error("a negative size was accepted")
	}
}

func TestParseRequestRefusesWhatIsNotServed(t *testing.T) {
	p := kmsg.NewPtrProduceRequest()
	p.SetVersion(2) // message sets before record batches: not served
	if _, _, err := ParseRequest(requestBody(p, 1)); err == nil || !strings.Contains(err.Error(), "not served") {
		t.Errorf("Produce v2: err %v, want not served", err)
	}
	d := kmsg.NewPtrDescribeGroupsRequest()
	if _, _, err := ParseRequest(requestBody(d, 1)); err == nil {
		t.Error("DescribeGroups is not in ApiVersions but was accepted")
	}
	// A newer ApiVersions than served is read as v0, so that the answer can say so.
	a := kmsg.NewPtrApiVersionsRequest()
	a.SetVersion(servedVersions[kmsg.ApiVersions].max + 1)
	h, req, err := ParseRequest(requestBody(a, 9))
	if err != nil || req.GetVersion() != 0 || h.Corr != 9 {
		t.Errorf("newer ApiVersions: version %v corr %d err %v; want v0, 9, nil", req, h.Corr, err)
	}
}

func TestErrorCodesAreKafkas(t *testing.T) {
	for e, want := range map[proto.Error]int16{proto.None: 0, proto.NotLeaderOrFollower: 6, proto.NotEnoughReplicas: 19,
		proto.FencedLeaderEpoch: 74, proto.NotCoordinator: 16, proto.RebalanceInProgress: 27, proto.OutOfOrderSequence: 45,
		proto.Error("NO_SUCH_NAME"): -1} {
		if got := errorCode(e); got != want {
			t.Errorf("errorCode(%s) = %d, want %d", e, got, want)
		}
	}
}

// A produced batch and its fetched form carry the same records, and the fetched form
// decodes with kmsg and a valid CRC.
func TestBatchRoundTrip(t *testing.T) {
	kb := kmsg.RecordBatch{Magic: 2, ProducerID: 5, ProducerEpoch: 1, FirstSequence: 3, NumRecords: 2, LastOffsetDelta: 1}
	for i, v := range []string{"a", "bc"} {
		r := kmsg.Record{OffsetDelta: int32(i), Key: []byte("k"), Value: []byte(v), Headers: []kmsg.Header{{Key: "z", Value: []byte("1")}, {Key: "a"}}}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		kb.Records = r.AppendTo(kb.Records)
	}
	kb.Length = int32(len(kb.AppendTo(nil)) - 12)
	b, err := decodeBatch(kb.AppendTo(nil))
	if err != nil {
		t.Fatal(err)
	}
	if b.ProducerID != 5 || b.BaseSequence != 3 || len(b.Records) != 2 || string(b.Records[1].Value) != "bc" || b.Records[0].Headers[0].Key != "a" {
		t.Fatalf("decoded %+v", b)
	}
	b.BaseOffset = 40
	out := appendBatch(nil, b)
	var back kmsg.RecordBatch
	if err := back.ReadFrom(out); err != nil {
		t.Fatal(err)
	}
	if back.FirstOffset != 40 || back.NumRecords != 2 || back.LastOffsetDelta != 1 {
		t.Errorf("fetched batch %+v", back)
	}
	if _, err := decodeBatch(out); err != nil {
		t.Errorf("the fetched form does not decode back: %v", err)
	}
	out[len(out)-1] ^= 1
	if crc := crc32Of(out); crc == back.CRC {
		t.Error("the CRC does not cover the records")
	}
}

// Batches compressed as franz-go's producer compresses them decode to the same records.
func TestCompressedBatchesDecode(t *testing.T) {
	var records []byte
	for i, v := range []string{"one", "two", "three"} {
		r := kmsg.Record{OffsetDelta: int32(i), Value: []byte(strings.Repeat(v, 20))}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		records = r.AppendTo(records)
	}
	for _, codec := range []kgo.CompressionCodec{kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()} {
		comp, err := kgo.DefaultCompressor(codec)
		if err != nil {
			t.Fatal(err)
		}
		packed, typ := comp.Compress(new(bytes.Buffer), records)
		kb := kmsg.RecordBatch{Magic: 2, NumRecords: 3, LastOffsetDelta: 2, Attributes: int16(typ), Records: packed, ProducerID: -1}
		kb.Length = int32(len(kb.AppendTo(nil)) - 12)
		b, err := decodeBatch(kb.AppendTo(nil))
		if err != nil {
			t.Errorf("codec %d: %v", typ, err)
			continue
		}
		if typ == 0 || len(b.Records) != 3 || string(b.Records[2].Value) != strings.Repeat("three", 20) {
			t.Errorf("codec %d: decoded %d records", typ, len(b.Records))
		}
	}
}

func crc32Of(batch []byte) int32 {
	var kb kmsg.RecordBatch
	kb.ReadFrom(batch)
	kb.CRC = 0
	enc := kb.AppendTo(nil)
	return int32(crc32Checksum(enc[21:]))
}

// The frame reader and request parser never panic, whatever the bytes: a bad frame is an
// error that closes one connection.
func FuzzReadAndParseFrame(f *testing.F) {
	f.Add(frame(requestBody(kmsg.NewPtrApiVersionsRequest(), 1)))
	f.Add(frame(requestBody(kmsg.NewPtrMetadataRequest(), 2)))
	p := kmsg.NewPtrProduceRequest()
	p.SetVersion(9)
	f.Add(frame(requestBody(p, 3)))
	f.Add([]byte{0, 0, 0, 4, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := ReadFrame(bytes.NewReader(data), 1<<16)
		if err != nil {
			return
		}
		_, req, err := ParseRequest(body)
		if err != nil {
			return
		}
		if pr, ok := req.(*kmsg.ProduceRequest); ok {
			for _, t := range pr.Topics {
				for _, p := range t.Partitions {
					decodeBatch(p.Records)
				}
			}
		}
	})
}
