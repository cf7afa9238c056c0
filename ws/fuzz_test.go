package ws

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// FuzzParseFrame: any bytes parse without panic; a parsed header writes back
// to the same bytes when its length used the shortest form, and the frame
// rules never panic on it.
func FuzzParseFrame(f *testing.F) {
	f.Add([]byte{0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58})
	f.Add([]byte{0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, n, err := ParseHeader(b)
		if err != nil || n == 0 {
			return
		}
		if n != h.Len() && h.Length > 125 {
			// A longer length form than needed: legal to read, written shorter.
			return
		}
		if got := AppendHeader(nil, h); n == h.Len() && !bytes.Equal(got, b[:n]) {
			t.Fatalf("round trip % x -> %+v -> % x", b[:n], h, got)
		}
		r := Reader{Deflate: b[0]&1 == 0, MaxFrame: 1 << 20, MaxMessage: 1 << 20}
		if err := r.Frame(&h); err == nil && !h.Op.IsControl() {
			p := append([]byte(nil), b[n:]...)
			Mask(h.Key, 0, p)
			r.Payload(p)
			r.End()
		}
	})
}

// FuzzInflate: arbitrary compressed data never inflates past the limit
// (plus the one byte that shows the overrun) and never panics; data the
// compressor wrote round-trips.
func FuzzInflate(f *testing.F) {
	f.Add([]byte{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}, false)
	f.Add([]byte("hello hello hello hello"), true)
	f.Fuzz(func(t *testing.T, b []byte, compress bool) {
		const limit = 4096
		var in Inflater
		if compress {
			var c Compressor
			z, err := c.Compress(nil, b)
			if err != nil {
				t.Fatal(err)
			}
			out, err := in.Inflate(nil, z, 0)
			if err != nil || !bytes.Equal(out, b) {
				t.Fatalf("round trip: %d bytes, %v", len(out), err)
			}
			return
		}
		out, err := in.Inflate(nil, b, limit)
		if len(out) > limit+1 {
			t.Fatalf("inflated %d bytes past limit %d (err %v)", len(out), limit, err)
		}
	})
}

// FuzzUTF8: the incremental check agrees with utf8.Valid at any split.
func FuzzUTF8(f *testing.F) {
	f.Add([]byte("κόσμε\xed\xa0\x80"), 3)
	f.Fuzz(func(t *testing.T, b []byte, split int) {
		if split < 0 || split > len(b) {
			split = len(b) / 2
		}
		var v UTF8
		got := v.Write(b[:split]) && v.Write(b[split:]) && v.Done()
		if got != utf8.Valid(b) {
			t.Fatalf("% x split %d: %v, utf8.Valid %v", b, split, got, !got)
		}
	})
}
