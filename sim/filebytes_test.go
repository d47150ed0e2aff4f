package sim

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// fileBytes hold what one slice would, whatever appends, extensions, writes, cuts and
// flips made them, across chunk boundaries.
func TestFileBytesActAsOneSlice(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var got fileBytes
		var want []byte
		fill := byte(1)
		some := func(n int) []byte {
			fill++
			return bytes.Repeat([]byte{fill}, n)
		}
		sizes := rapid.SampledFrom([]int{0, 1, 7, 4096, fileChunk/3 + 1, fileChunk + 5})
		for range rapid.IntRange(1, 12).Draw(t, "ops") {
			n := int64(len(want))
			switch rapid.IntRange(0, 4).Draw(t, "op") {
			case 0:
				p := some(sizes.Draw(t, "append"))
				got.append(p)
				want = append(want, p...)
			case 1:
				size := n + int64(sizes.Draw(t, "extend"))
				got.extend(size)
				want = append(want, make([]byte, size-n)...)
			case 2:
				size := rapid.Int64Range(0, n).Draw(t, "truncate")
				got.truncate(size)
				want = want[:size]
			case 3:
				off := rapid.Int64Range(0, n).Draw(t, "write at")
				p := some(sizes.Draw(t, "write"))
				got.writeAt(off, p)
				copy(want[off:], p)
			default:
				if n > 0 {
					at := rapid.Int64Range(0, n-1).Draw(t, "flip")
					got.flip(at)
					want[at] ^= 0xFF
				}
			}
			if got.len() != int64(len(want)) {
				t.Fatalf("length %d, want %d", got.len(), len(want))
			}
		}
		if !bytes.Equal(got.slice(0, got.len()), want) {
			t.Fatal("contents differ")
		}
		off := rapid.Int64Range(0, int64(len(want))).Draw(t, "read at")
		p := make([]byte, sizes.Draw(t, "read"))
		if n := got.readAt(off, p); n != min(len(p), len(want)-int(off)) || !bytes.Equal(p[:n], want[off:off+int64(n)]) {
			t.Fatalf("read %d bytes at %d: wrong count or bytes", n, off)
		}
	})
}
