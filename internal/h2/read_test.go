package h2

import (
	"bytes"
	"io"
	"testing"
)

// chunkReader returns its data in reads of the given sizes, in turn.
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.data), r.sizes[r.i%len(r.sizes)])
	r.i++
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// TestH2ReadBuf checks the HTTP/2 connection's read buffer: bytes come out
// in order whatever the socket's read sizes and the reader's request sizes;
// the large buffer is taken while reads fill the small one, and given back
// once a read does not fill it and it is drained.
func TestH2ReadBuf(t *testing.T) {
	data := make([]byte, 200_000)
	for i := range data {
		data[i] = byte(i * 7 / 3)
	}
	for _, sizes := range [][]int{{1}, {9, 100}, {h2ReadSmallSize}, {h2ReadSmallSize, 50_000, 3}, {h2ReadBigSize, 7}} {
		for _, want := range []int{1, 9, 100, 4096, 20_000} {
			var b h2ReadBuf
			b.init(&chunkReader{data: data, sizes: sizes})
			var got bytes.Buffer
			p := make([]byte, want)
			for {
				n, err := b.Read(p)
				got.Write(p[:n])
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got.Bytes(), data) {
				t.Fatalf("socket reads %v, reads of %d: got %d bytes, not the data", sizes, want, got.Len())
			}
		}
	}

	// A burst that fills the small buffer takes the large one; a short
	// read, once drained, gives it back.
	r := &chunkReader{data: data, sizes: []int{h2ReadSmallSize, 40_000, 10, 10}}
	var b h2ReadBuf
	b.init(r)
	p := make([]byte, 9)
	readAll := func() {
		for {
			if _, err := b.Read(p); err != nil {
				t.Fatal(err)
			}
			if b.Buffered() == 0 {
				return
			}
		}
	}
	readAll() // the small buffer, filled
	if b.big != nil {
		t.Fatal("large buffer taken before a read filled the small one")
	}
	readAll() // 16 KiB of the 40 KB the socket offers: the large buffer, filled
	if b.big == nil {
		t.Fatal("no large buffer after a read filled the small one")
	}
	readAll() // a short read of 10 bytes, still into the large buffer
	readAll() // 10 bytes into the small buffer
	if b.big != nil {
		t.Fatal("large buffer kept after a short read was drained")
	}
	if pk := b.peek(1); pk != nil {
		t.Fatalf("peek on an empty buffer: %v", pk)
	}
}
