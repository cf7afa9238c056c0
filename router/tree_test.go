package router

import (
	"bytes"
	"testing"
)

// TestSegmentEnd checks the word-at-a-time search for the end of a
// segment against a plain loop: a '/' at every position of paths up to
// three words long, after bytes close to '/' (which a careless zero-byte
// test mistakes for it), and no '/' at all.
func TestSegmentEnd(t *testing.T) {
	for n := 0; n <= 24; n++ {
		for _, fill := range []byte{'a', '.', '0', 0x2f ^ 0x80, 0x2f ^ 0x01, 0xff} {
			p := bytes.Repeat([]byte{fill}, n)
			if got := segmentEnd(p); got != n {
				t.Fatalf("segmentEnd(%q) = %d, want %d", p, got, n)
			}
			for i := 0; i < n; i++ {
				p := bytes.Repeat([]byte{fill}, n)
				p[i] = '/'
				if i+1 < n {
					p[n-1] = '/' // a later slash does not count
				}
				if got := segmentEnd(p); got != i {
					t.Fatalf("segmentEnd(%q) = %d, want %d", p, got, i)
				}
			}
		}
	}
}
