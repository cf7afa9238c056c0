package riptide

import (
	"io"
	"net"
	"net/netip"
	"testing"

	"github.com/riptide-http/riptide/proxyproto"
)

// TestProxyHeaderByteByByte: a header that arrives one byte per read (a
// net.Pipe delivers each write to its own read) is assembled, and the bytes
// after it are read back first.
func TestProxyHeaderByteByByte(t *testing.T) {
	t.Parallel()
	src, dst := netip.MustParseAddrPort("[2001:db8::5]:1000"), netip.MustParseAddrPort("[2001:db8::1]:443")
	for _, hdr := range [][]byte{
		proxyproto.AppendV1(nil, src, dst),
		proxyproto.AppendV2(nil, &proxyproto.Header{Command: proxyproto.Proxy, Family: proxyproto.INET6, Source: src, Destination: dst,
			RawTLVs: proxyproto.AppendTLV(nil, proxyproto.TLVUniqueID, make([]byte, 300))}, false),
	} {
		client, server := net.Pipe()
		go func() {
			for _, b := range hdr {
				client.Write([]byte{b})
			}
			client.Write([]byte("GET /"))
			client.Close()
		}()
		p := &proxyConn{Conn: server}
		if err := p.readHeader(0); err != nil {
			t.Fatalf("%q: %v", hdr, err)
		}
		if p.RemoteAddr().String() != src.String() || p.LocalAddr().String() != dst.String() {
			t.Errorf("addresses %v %v", p.RemoteAddr(), p.LocalAddr())
		}
		if rest, _ := io.ReadAll(p); string(rest) != "GET /" {
			t.Errorf("after the header: %q", rest)
		}
		server.Close()
	}
}
