package wal

import (
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"mqsim/sim"
)

func sampleBatch() Batch {
	return Batch{
		BaseOffset: 42, LeaderEpoch: 7, ProducerID: 1001, ProducerEpoch: 3, BaseSequence: 17,
		Timestamp: sim.Time(1_500_000_000), Flags: FlagTransactional,
		Records: []Record{
			{Key: []byte("k1"), Value: []byte("v1")},
			{Key: nil, Value: []byte{}},
			{Key: []byte{}, Value: nil, Headers: []Header{{Key: "a", Value: []byte("1")}, {Key: "a", Value: nil}, {Key: "b", Value: []byte{}}}},
		},
	}
}

func TestBatchRoundTrip(t *testing.T) {
	b := sampleBatch()
	enc, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) != b.EncodedSize() {
		t.Fatalf("encoded %d bytes, EncodedSize says %d", len(enc), b.EncodedSize())
	}
	got, n, err := DecodeBatch(enc)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(enc) {
		t.Fatalf("decode consumed %d of %d bytes", n, len(enc))
	}
	if !sameBatch(got, b) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, b)
	}
	// Decoding ignores what follows the batch.
	if _, n2, err := DecodeBatch(append(enc, 1, 2, 3)); err != nil || n2 != n {
		t.Fatalf("trailing bytes: n=%d err=%v", n2, err)
	}
}

// Decoded slices are capped: appending to one record's key must not overwrite the next
// field.
func TestDecodeSlicesAreCapped(t *testing.T) {
	b := sampleBatch()
	enc, _ := b.Encode()
	got, _, err := DecodeBatch(enc)
	if err != nil {
		t.Fatal(err)
	}
	_ = append(got.Records[0].Key, 'X', 'X', 'X')
	if string(got.Records[0].Value) != "v1" {
		t.Fatalf("append to key clobbered value: %q", got.Records[0].Value)
	}
}

func TestCRCDetectsEveryFlippedByte(t *testing.T) {
	b := sampleBatch()
	enc, _ := b.Encode()
	for i := range enc {
		bad := append([]byte(nil), enc...)
		bad[i] ^= 0x01
		_, _, err := DecodeBatch(bad)
		if err == nil {
			t.Fatalf("flipped bit in byte %d not detected", i)
		}
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("byte %d: error %v is not a *DecodeError", i, err)
		}
		// Outside the length field, the checksum catches every flip (a flip in the CRC
		// field itself is a mismatch too). A flipped length reads as torn or malformed.
		if i >= posCRC && !errors.Is(err, ErrChecksum) {
			t.Fatalf("byte %d: want ErrChecksum, got %v", i, err)
		}
	}
}

func TestDecodeTruncatedIsTorn(t *testing.T) {
	b := sampleBatch()
	enc, _ := b.Encode()
	for n := 0; n < len(enc); n++ {
		_, _, err := DecodeBatch(enc[:n])
		if !errors.Is(err, ErrTruncated) {
			t.Fatalf("%d of %d bytes: want ErrTruncated, got %v", n, len(enc), err)
		}
	}
}

func TestDecodeErrorsSayWhatWasWrong(t *testing.T) {
	b := sampleBatch()
	enc, _ := b.Encode()
	bad := append([]byte(nil), enc...)
	bad[len(bad)-1] ^= 0xFF
	_, _, err := DecodeBatch(bad)
	for _, want := range []string{"crc", "checksum mismatch", "stored", "computed"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not mention %q", err, want)
		}
	}
	_, _, err = DecodeBatch(enc[:20])
	if err == nil || !strings.Contains(err.Error(), "only 20 bytes left") {
		t.Fatalf("torn error %q does not say how much is left", err)
	}
}

// A batch whose checksum matches but whose records are nonsense is malformed, not a panic.
func TestDecodeMalformedWithValidCRC(t *testing.T) {
	b := Batch{Records: []Record{{Key: []byte("abc")}}}
	enc, _ := b.Encode()
	// Claim two records while only one is encoded, then fix the CRC.
	enc[posCount+3] = 2
	reseal := func(p []byte) {
		sum := crcOf(p[posMagic:])
		p[posCRC], p[posCRC+1], p[posCRC+2], p[posCRC+3] = byte(sum>>24), byte(sum>>16), byte(sum>>8), byte(sum)
	}
	reseal(enc)
	if _, _, err := DecodeBatch(enc); !errors.Is(err, ErrMalformed) {
		t.Fatalf("want ErrMalformed, got %v", err)
	}
	// Bad magic.
	enc2, _ := b.Encode()
	enc2[posMagic] = 9
	reseal(enc2)
	if _, _, err := DecodeBatch(enc2); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "magic") {
		t.Fatalf("want malformed magic, got %v", err)
	}
}

func TestBatchValidate(t *testing.T) {
	cases := map[string]Batch{
		"no records":       {},
		"negative offset":  {BaseOffset: -1, Records: []Record{{}}},
		"unknown flags":    {Flags: 0x80, Records: []Record{{}}},
		"unsorted headers": {Records: []Record{{Headers: []Header{{Key: "b"}, {Key: "a"}}}}},
	}
	for name, b := range cases {
		if _, err := b.Encode(); err == nil {
			t.Errorf("%s: encoded without error", name)
		}
	}
	hs := []Header{{Key: "b", Value: []byte("1")}, {Key: "a"}, {Key: "b", Value: []byte("2")}}
	SortHeaders(hs)
	if hs[0].Key != "a" || string(hs[1].Value) != "1" || string(hs[2].Value) != "2" {
		t.Fatalf("SortHeaders not stable by key: %+v", hs)
	}
}

func genBytes(t *rapid.T, label string) []byte {
	if rapid.IntRange(0, 5).Draw(t, label+"-nil") == 0 {
		return nil
	}
	return rapid.SliceOfN(rapid.Byte(), 0, 40).Draw(t, label)
}

func genRecord(t *rapid.T) Record {
	r := Record{Key: genBytes(t, "key"), Value: genBytes(t, "value")}
	n := rapid.IntRange(0, 3).Draw(t, "headers")
	for i := 0; i < n; i++ {
		r.Headers = append(r.Headers, Header{Key: rapid.StringN(0, 8, -1).Draw(t, "hkey"), Value: genBytes(t, "hval")})
	}
	SortHeaders(r.Headers)
	return r
}

func TestBatchRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := Batch{
			BaseOffset:    rapid.Int64Range(0, 1<<40).Draw(t, "base"),
			LeaderEpoch:   rapid.Int32().Draw(t, "epoch"),
			ProducerID:    rapid.Int64().Draw(t, "pid"),
			ProducerEpoch: rapid.Int16().Draw(t, "pepoch"),
			BaseSequence:  rapid.Int32().Draw(t, "seq"),
			Timestamp:     sim.Time(rapid.Int64().Draw(t, "ts")),
			Flags:         BatchFlags(rapid.IntRange(0, 3).Draw(t, "flags")),
		}
		n := rapid.IntRange(1, 6).Draw(t, "records")
		for i := 0; i < n; i++ {
			b.Records = append(b.Records, genRecord(t))
		}
		enc, err := b.Encode()
		if err != nil {
			t.Fatal(err)
		}
		got, k, err := DecodeBatch(enc)
		if err != nil || k != len(enc) || !sameBatch(got, b) {
			t.Fatalf("round trip failed: err=%v k=%d len=%d\n got %+v\nwant %+v", err, k, len(enc), got, b)
		}
		// Any single flipped byte is detected.
		i := rapid.IntRange(0, len(enc)-1).Draw(t, "flip")
		enc[i] ^= byte(rapid.IntRange(1, 255).Draw(t, "mask"))
		if _, _, err := DecodeBatch(enc); err == nil {
			t.Fatalf("flipped byte %d not detected", i)
		}
	})
}
