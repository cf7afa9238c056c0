package proxyproto

import (
	"testing"
)

// FuzzParse checks that Parse never panics, consumes at most its input,
// accepts nothing it would not accept again on the header alone, asks for
// more on any proper prefix of what it accepted, and that accepted headers
// are re-encoded to something that parses to the same addresses.
func FuzzParse(f *testing.F) {
	f.Add([]byte("PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\nGET / HTTP/1.1\r\n\r\n"))
	f.Add([]byte("PROXY TCP6 2001:db8::1 ::ffff:10.0.0.1 1 2\r\n"))
	f.Add([]byte("PROXY UNKNOWN\r\n"))
	f.Add(v2Proxy("192.0.2.1:1234", "10.1.2.3:80", AppendTLV(nil, TLVALPN, []byte("h2"))))
	f.Add(v2(0x20, 0x00, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		var h Header
		n, err := h.Parse(b, 512)
		if err != nil {
			if n != 0 {
				t.Fatalf("error %v with n=%d", err, n)
			}
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("n=%d for %d bytes", n, len(b))
		}
		want := h
		var again Header
		if m, err := again.Parse(b[:n], 512); err != nil || m != n || !equalHeader(&again, &want) {
			t.Fatalf("header alone: %d, %v", m, err)
		}
		if m, err := again.Parse(b[:n-1], 512); err != ErrNeedMore {
			t.Fatalf("proper prefix: %d, %v", m, err)
		}
		if !want.Proxied() {
			return
		}
		var enc []byte
		if want.Version == 1 {
			enc = AppendV1(nil, want.Source, want.Destination)
		} else {
			enc = AppendV2(nil, &want, false)
		}
		if m, err := again.Parse(enc, 1<<16); err != nil || m != len(enc) ||
			again.Source.Addr().Unmap() != want.Source.Addr().Unmap() || again.Destination.Port() != want.Destination.Port() {
			t.Fatalf("re-encoded %q: %d, %v, %+v", enc, m, err, again)
		}
	})
}
