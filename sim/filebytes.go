package sim

// fileBytes are a file's contents in chunks that never move once full: appending
// never copies what the file already holds. A log segment grows by many small
// appends; kept as one slice, it was copied whole every time the slice grew, a stall
// of the world as long as the copy once a long session's segment is large. Every chunk but the last is exactly
// fileChunk bytes long; the first grows as a slice does, so a small file stays small.
type fileBytes struct {
	chunks [][]byte
	n      int64
}

const fileChunk = 1 << 20

func (b *fileBytes) len() int64 { return b.n }

// append adds p at the end.
func (b *fileBytes) append(p []byte) {
	for len(p) > 0 {
		k := len(b.chunks) - 1
		if k < 0 || len(b.chunks[k]) == fileChunk {
			var c []byte
			if k >= 0 { // a file that filled a chunk is a big one: the next is taken whole
				c = make([]byte, 0, fileChunk)
			}
			b.chunks = append(b.chunks, c)
			k++
		}
		m := min(len(p), fileChunk-len(b.chunks[k]))
		b.chunks[k] = append(b.chunks[k], p[:m]...)
		p = p[m:]
		b.n += int64(m)
	}
}

// extend adds zeros up to size bytes.
func (b *fileBytes) extend(size int64) {
	var zeros [4096]byte
	for b.n < size {
		b.append(zeros[:min(int64(len(zeros)), size-b.n)])
	}
}

// truncate cuts the contents to size bytes (at most the length).
func (b *fileBytes) truncate(size int64) {
	if size >= b.n {
		return
	}
	k := int(size / fileChunk)
	if r := size % fileChunk; r > 0 {
		b.chunks[k] = b.chunks[k][:r]
		k++
	}
	clear(b.chunks[k:]) // let the cut chunks go
	b.chunks = b.chunks[:k]
	b.n = size
}

// readAt copies the bytes from off into p and returns how many (fewer at the end).
func (b *fileBytes) readAt(off int64, p []byte) int {
	n := 0
	for n < len(p) && off < b.n {
		m := copy(p[n:], b.chunks[off/fileChunk][off%fileChunk:])
		n += m
		off += int64(m)
	}
	return n
}

// writeAt overwrites the bytes from off with p, as far as the contents go.
func (b *fileBytes) writeAt(off int64, p []byte) {
	for len(p) > 0 && off < b.n {
		m := copy(b.chunks[off/fileChunk][off%fileChunk:], p)
		p = p[m:]
		off += int64(m)
	}
}

// slice returns a copy of [off, end).
func (b *fileBytes) slice(off, end int64) []byte {
	p := make([]byte, end-off)
	b.readAt(off, p)
	return p
}

// flip inverts every bit of the byte at at.
func (b *fileBytes) flip(at int64) { b.chunks[at/fileChunk][at%fileChunk] ^= 0xFF }
