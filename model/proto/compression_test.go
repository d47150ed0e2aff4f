package proto

import (
	"testing"
	"time"

	"mqsim/model/wal"
)

func TestCodecSizesAndTimes(t *testing.T) {
	zstd, err := CodecNamed("zstd")
	if err != nil {
		t.Fatal(err)
	}
	if got := zstd.Compressed(2887); got != 1000 {
		t.Errorf("zstd compresses 2887 bytes to %d, want 1000 (ratio 2.887)", got)
	}
	if got := zstd.Compressed(1); got != 1 {
		t.Errorf("zstd compresses 1 byte to %d, want 1 (rounded up, never free)", got)
	}
	if got := Codecs[0].Compressed(500); got != 500 {
		t.Errorf("none: %d, want 500", got)
	}
	gzip, _ := CodecNamed("gzip")
	if got := gzip.CompressTime(95_000); got != time.Millisecond {
		t.Errorf("gzip compresses 95 KB in %s, want 1ms (95 MB/s)", got)
	}
	if _, err := CodecNamed("brotli"); err == nil {
		t.Error("brotli: want an error naming the codecs")
	}
	for i, c := range Codecs {
		if int(c.ID) != i {
			t.Errorf("%s has id %d at position %d: Codecs is indexed by Kafka's id", c.Name, c.ID, i)
		}
	}
}

func TestCompressedBatchIsSizedCompressedAndSurvivesEncoding(t *testing.T) {
	b := wal.Batch{Records: []wal.Record{{Value: make([]byte, 2880)}}} // 7 + 2880 bytes of records
	plain := BatchWireSize(&b)
	if plain != BatchOverhead+RecordOverhead+2880 {
		t.Fatalf("plain batch: %d bytes", plain)
	}
	b.SetCodec(4) // zstd
	if got, want := BatchWireSize(&b), BatchOverhead+1000; got != want {
		t.Errorf("zstd batch: %d bytes, want %d (header uncompressed, 2887 bytes of records at 2.887)", got, want)
	}
	enc, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := wal.DecodeBatch(enc)
	if err != nil || back.Codec() != 4 {
		t.Errorf("decoded codec %d (%v), want 4: the codec is a batch attribute, kept in the log", back.Codec(), err)
	}
	req := ProduceRequest{Batch: b}
	if got := req.ExtraCPU(); got != CodecOf(&b).DecompressTime(2887) || got <= 0 {
		t.Errorf("the leader's decompression: %s", got)
	}
}
