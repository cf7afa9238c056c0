package proxyproto

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
)

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

// v2 builds a version 2 header from its parts, for malformed cases.
func v2(verCmd, fam byte, body []byte) []byte {
	b := append([]byte(v2Sig), verCmd, fam)
	b = binary.BigEndian.AppendUint16(b, uint16(len(body)))
	return append(b, body...)
}

func v2Proxy(src, dst string, tlvs []byte) []byte {
	s, d := ap(src), ap(dst)
	fam := INET
	if s.Addr().Is6() {
		fam = INET6
	}
	return AppendV2(nil, &Header{Command: Proxy, Family: fam, Transport: Stream, Source: s, Destination: d, RawTLVs: tlvs}, false)
}

func TestParse(t *testing.T) {
	tlvs := AppendTLV(AppendTLV(nil, TLVALPN, []byte("h2")), TLVAuthority, []byte("example.com"))
	unix := AppendV2(nil, &Header{Command: Proxy, Family: Unix, Transport: Stream,
		SourceUnix: []byte("/run/client.sock"), DestinationUnix: []byte("/run/server.sock")}, false)
	tests := []struct {
		name  string
		in    string
		want  Header
		rest  string // bytes after the header
		check func(*testing.T, *Header)
	}{
		{name: "v1 TCP4", in: "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n", rest: "GET / HTTP/1.1\r\n",
			want: Header{Version: 1, Command: Proxy, Family: INET, Transport: Stream, Source: ap("192.0.2.1:56324"), Destination: ap("198.51.100.2:443")}},
		{name: "v1 TCP6", in: "PROXY TCP6 2001:db8::1 ::ffff:10.0.0.1 65535 0\r\n",
			want: Header{Version: 1, Command: Proxy, Family: INET6, Transport: Stream, Source: ap("[2001:db8::1]:65535"), Destination: ap("[::ffff:10.0.0.1]:0")}},
		{name: "v1 TCP6 full form", in: "PROXY TCP6 2001:0db8:0000:0000:0000:0000:0000:00ff fe80:: 1 2\r\n",
			want: Header{Version: 1, Command: Proxy, Family: INET6, Transport: Stream, Source: ap("[2001:db8::ff]:1"), Destination: ap("[fe80::]:2")}},
		{name: "v1 UNKNOWN: addresses ignored", in: "PROXY UNKNOWN\r\n", rest: "x",
			want: Header{Version: 1, Command: Local}},
		{name: "v1 UNKNOWN with trailing fields", in: "PROXY UNKNOWN ffff:f...f:ffff 1 2\r\n",
			want: Header{Version: 1, Command: Local}},
		{name: "v1 longest line (107 bytes)", in: "PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n",
			want: Header{Version: 1, Command: Proxy, Family: INET6, Transport: Stream,
				Source: ap("[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535"), Destination: ap("[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535")}},
		{name: "v2 PROXY TCP4", in: string(v2Proxy("192.0.2.1:1234", "10.1.2.3:80", nil)), rest: "PRI * HTTP/2.0",
			want: Header{Version: 2, Command: Proxy, Family: INET, Transport: Stream, Source: ap("192.0.2.1:1234"), Destination: ap("10.1.2.3:80")}},
		{name: "v2 PROXY TCP6", in: string(v2Proxy("[2001:db8::7]:9", "[::1]:8080", nil)),
			want: Header{Version: 2, Command: Proxy, Family: INET6, Transport: Stream, Source: ap("[2001:db8::7]:9"), Destination: ap("[::1]:8080")}},
		{name: "v2 PROXY unix", in: string(unix),
			check: func(t *testing.T, h *Header) {
				if h.Family != Unix || string(h.SourceUnix) != "/run/client.sock" || string(h.DestinationUnix) != "/run/server.sock" || h.Proxied() {
					t.Errorf("got %+v", h)
				}
			}},
		{name: "v2 LOCAL (health check): block ignored", in: string(v2(0x20, 0x11, make([]byte, 12))),
			want: Header{Version: 2, Command: Local}},
		{name: "v2 LOCAL without addresses", in: string(v2(0x20, 0x00, nil)),
			want: Header{Version: 2, Command: Local}},
		{name: "v2 PROXY UNSPEC", in: string(v2(0x21, 0x00, nil)),
			want: Header{Version: 2, Command: Proxy}},
		{name: "v2 TLVs", in: string(v2Proxy("192.0.2.1:1", "192.0.2.2:2", tlvs)),
			check: func(t *testing.T, h *Header) {
				if string(h.TLV(TLVALPN)) != "h2" || string(h.TLV(TLVAuthority)) != "example.com" || h.TLV(TLVUniqueID) != nil {
					t.Errorf("TLVs %q", h.RawTLVs)
				}
				var types []byte
				for typ := range h.TLVs() {
					types = append(types, typ)
				}
				if string(types) != "\x01\x02" {
					t.Errorf("TLVs() types %x", types)
				}
			}},
		{name: "v2 CRC32C TLV verified", in: string(AppendV2(nil, &Header{Command: Proxy, Family: INET, Source: ap("1.2.3.4:5"), Destination: ap("6.7.8.9:10"), RawTLVs: tlvs}, true)),
			check: func(t *testing.T, h *Header) {
				if len(h.TLV(TLVCRC32C)) != 4 || string(h.TLV(TLVAuthority)) != "example.com" {
					t.Errorf("TLVs %q", h.RawTLVs)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.in + tt.rest)
			var h Header
			n, err := h.Parse(in, 0)
			if err != nil || n != len(tt.in) {
				t.Fatalf("Parse = %d, %v; want %d, nil", n, err, len(tt.in))
			}
			if tt.check != nil {
				tt.check(t, &h)
				return
			}
			h.RawTLVs = nil
			if !equalHeader(&h, &tt.want) {
				t.Errorf("got  %+v\nwant %+v", h, tt.want)
			}
			if h.Proxied() != (tt.want.Command == Proxy && tt.want.Family != Unspec) {
				t.Errorf("Proxied() = %v", h.Proxied())
			}
		})
	}
}

func equalHeader(a, b *Header) bool {
	return a.Version == b.Version && a.Command == b.Command && a.Family == b.Family &&
		a.Transport == b.Transport && a.Source == b.Source && a.Destination == b.Destination &&
		bytes.Equal(a.SourceUnix, b.SourceUnix) && bytes.Equal(a.DestinationUnix, b.DestinationUnix)
}

func TestParseErrors(t *testing.T) {
	good := v2Proxy("192.0.2.1:1", "192.0.2.2:2", nil)
	badCRC := AppendV2(nil, &Header{Command: Proxy, Family: INET, Source: ap("1.2.3.4:5"), Destination: ap("6.7.8.9:10")}, true)
	badCRC[len(badCRC)-1] ^= 1
	tests := []struct {
		name string
		in   string
		max  int
		want error
	}{
		{"not PROXY: an HTTP request", "GET / HTTP/1.1\r\n", 0, ErrNotProxy},
		{"not PROXY: TLS ClientHello", "\x16\x03\x01\x02\x00", 0, ErrNotProxy},
		{"not PROXY: lower case", "proxy TCP4", 0, ErrNotProxy},
		{"v1 truncated signature", "PROX", 0, ErrNeedMore},
		{"v1 truncated line", "PROXY TCP4 192.0.2.1 198.51.", 0, ErrNeedMore},
		{"v1 line without CRLF past 107 bytes", "PROXY TCP4 " + string(bytes.Repeat([]byte("1"), 100)), 0, ErrTooLarge},
		{"v1 bare LF", "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n", 0, ErrBadV1},
		{"v1 CR without LF", "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\rX", 0, ErrBadV1},
		{"v1 unknown protocol", "PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n", 0, ErrBadV1},
		{"v1 missing port", "PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n", 0, ErrBadV1},
		{"v1 extra field", "PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n", 0, ErrBadV1},
		{"v1 double space", "PROXY TCP4  1.2.3.4 5.6.7.8 1 2\r\n", 0, ErrBadV1},
		{"v1 port out of range", "PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n", 0, ErrBadV1},
		{"v1 port leading zero", "PROXY TCP4 1.2.3.4 5.6.7.8 080 2\r\n", 0, ErrBadV1},
		{"v1 IPv4 octet > 255", "PROXY TCP4 1.2.3.256 5.6.7.8 1 2\r\n", 0, ErrBadV1},
		{"v1 IPv4 leading zero", "PROXY TCP4 1.2.3.04 5.6.7.8 1 2\r\n", 0, ErrBadV1},
		{"v1 IPv6 address under TCP4", "PROXY TCP4 ::1 5.6.7.8 1 2\r\n", 0, ErrBadV1},
		{"v1 IPv4 address under TCP6", "PROXY TCP6 1.2.3.4 ::1 1 2\r\n", 0, ErrBadV1},
		{"v1 IPv6 two ellipses", "PROXY TCP6 1::2::3 ::1 1 2\r\n", 0, ErrBadV1},
		{"v1 IPv6 zone", "PROXY TCP6 fe80::1%eth0 ::1 1 2\r\n", 0, ErrBadV1},
		{"v1 IPv6 nine groups", "PROXY TCP6 1:2:3:4:5:6:7:8:9 ::1 1 2\r\n", 0, ErrBadV1},
		{"v1 IPv6 ellipsis for no group", "PROXY TCP6 1:2:3:4::5:6:7:8 ::1 1 2\r\n", 0, ErrBadV1},
		{"v2 truncated signature", "\r\n\r\n\x00\r\nQU", 0, ErrNeedMore},
		{"v2 truncated fixed part", string(good[:14]), 0, ErrNeedMore},
		{"v2 truncated addresses", string(good[:20]), 0, ErrNeedMore},
		{"v2 bad signature", "\r\n\r\n\x00\r\nQUIT\r", 0, ErrNotProxy},
		{"v2 version 1 nibble", string(v2(0x11, 0x11, make([]byte, 12))), 0, ErrBadVersion},
		{"v2 command 2", string(v2(0x22, 0x11, make([]byte, 12))), 0, ErrBadCommand},
		{"v2 family 4", string(v2(0x21, 0x41, make([]byte, 12))), 0, ErrBadFamily},
		{"v2 transport 3", string(v2(0x21, 0x13, make([]byte, 12))), 0, ErrBadFamily},
		{"v2 INET block short", string(v2(0x21, 0x11, make([]byte, 11))), 0, ErrBadFamily},
		{"v2 INET6 block short", string(v2(0x21, 0x21, make([]byte, 12))), 0, ErrBadFamily},
		{"v2 TLV past the end", string(v2(0x21, 0x11, append(make([]byte, 12), 0x05, 0x00, 0x09, 'x'))), 0, ErrBadTLV},
		{"v2 TLV header cut", string(v2(0x21, 0x11, append(make([]byte, 12), 0x05, 0x00))), 0, ErrBadTLV},
		{"v2 CRC32C mismatch", string(badCRC), 0, ErrBadTLV},
		{"v2 CRC32C wrong length", string(v2(0x21, 0x11, append(make([]byte, 12), TLVCRC32C, 0, 2, 0, 0))), 0, ErrBadTLV},
		{"v2 oversized (default limit)", string(v2(0x21, 0x11, make([]byte, DefaultMaxLen))), 0, ErrTooLarge},
		{"v2 oversized (given limit), known from the fixed part", string(v2(0x21, 0x11, make([]byte, 100))[:16]), 64, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Header
			n, err := h.Parse([]byte(tt.in), tt.max)
			if !errors.Is(err, tt.want) || n != 0 {
				t.Errorf("Parse = %d, %v; want 0, %v", n, err, tt.want)
			}
		})
	}
}

// TestParsePrefixes checks the split-read contract: every proper prefix of
// a valid header asks for more, and the whole parses.
func TestParsePrefixes(t *testing.T) {
	for _, in := range [][]byte{
		[]byte("PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n"),
		[]byte("PROXY UNKNOWN\r\n"),
		v2Proxy("[2001:db8::7]:9", "[::1]:8080", AppendTLV(nil, TLVNoop, []byte("pad"))),
		v2(0x20, 0x00, nil),
	} {
		var h Header
		for k := range len(in) {
			if n, err := h.Parse(in[:k], 0); err != ErrNeedMore {
				t.Errorf("%q[:%d]: Parse = %d, %v; want ErrNeedMore", in, k, n, err)
			}
		}
		if n, err := h.Parse(in, 0); err != nil || n != len(in) {
			t.Errorf("%q: Parse = %d, %v", in, n, err)
		}
	}
}

func TestAppendV1RoundTrip(t *testing.T) {
	for _, c := range [][2]string{
		{"192.0.2.1:1", "192.0.2.2:65535"},
		{"[2001:db8::1]:80", "[::1]:443"},
		{"[::ffff:192.0.2.1]:80", "[::ffff:192.0.2.2]:81"}, // written as TCP4
	} {
		src, dst := ap(c[0]), ap(c[1])
		b := AppendV1(nil, src, dst)
		var h Header
		if n, err := h.Parse(b, 0); err != nil || n != len(b) {
			t.Fatalf("%q: %d, %v", b, n, err)
		}
		if h.Source.Addr() != src.Addr().Unmap() || h.Source.Port() != src.Port() || h.Destination.Addr() != dst.Addr().Unmap() {
			t.Errorf("%q parsed as %v %v", b, h.Source, h.Destination)
		}
	}
	if b := AppendV1(nil, ap("1.2.3.4:1"), ap("[::1]:2")); string(b) != "PROXY UNKNOWN\r\n" {
		t.Errorf("mixed families: %q", b)
	}
}

func TestParseAllocs(t *testing.T) {
	v1 := []byte("PROXY TCP6 2001:db8::1 ::ffff:10.0.0.1 65535 0\r\nGET")
	v2b := AppendV2(nil, &Header{Command: Proxy, Family: INET6, Source: ap("[2001:db8::1]:1"), Destination: ap("[::1]:2"),
		RawTLVs: AppendTLV(nil, TLVAuthority, []byte("example.com"))}, true)
	var h Header
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := h.Parse(v1, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Parse(v2b, 0); err != nil || h.TLV(TLVAuthority) == nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Parse allocates %v times, want 0", allocs)
	}
}
