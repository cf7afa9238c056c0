// Command quicgo-bare is the HTTP/3 benchmark's floor on quic-go: a QUIC
// server (quic-go's defaults, no HTTP/3 layer) that answers every request
// stream with a prebuilt HEADERS+DATA byte string. It opens no control
// stream, parses no frame and runs no handler: per connection one
// goroutine accepts a stream, reads the request to its end, writes the
// canned response and closes the stream, then takes the next (so a request
// that never ends holds up its connection: a benchmark floor, not a
// server). The request
// bytes are only searched for the :path field lines of the two extra routes
// (benchserver.BulkPath, benchserver.AllocsPath) as the harness's client
// encodes them; everything else gets the 13-byte hello. It is the
// "bare-stream floor" of http3/serve_allocs_test.go as a harness server:
// what any HTTP/3 layer on quic-go costs at least, measured in the same
// run as quicgo-h3 and riptide-h3.
//
//	quicgo-bare -addr 127.0.0.1:8443
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/quic-go/quic-go"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/h3"
)

// response is a complete response stream: HEADERS with :status 200 and
// the given content type and length, then one DATA frame holding body.
func response(contentType string, body []byte) []byte {
	sec := h3.AppendFieldSectionPrefix(nil)
	sec = h3.AppendStatus(sec, 200)
	sec = h3.AppendField(sec, "content-type", contentType, true)
	sec = h3.AppendField(sec, "content-length", strconv.Itoa(len(body)), true)
	b := h3.AppendFrameHeader(nil, h3.FrameHeaders, uint64(len(sec)))
	b = append(b, sec...)
	b = h3.AppendFrameHeader(b, h3.FrameData, uint64(len(body)))
	return append(b, body...)
}

// pathLines returns the encodings of a :path field line with value p that
// the harness's client may send (Huffman-coded or not).
func pathLines(p string) [][]byte {
	return [][]byte{
		h3.AppendField(nil, ":path", p, true),
		h3.AppendField(nil, ":path", p, false),
	}
}

var (
	hello      = response("text/plain", []byte(benchserver.Hello))
	bulk       = sync.OnceValue(func() []byte { return response("application/octet-stream", benchserver.BulkBody()) })
	bulkPath   = pathLines(benchserver.BulkPath)
	allocsPath = pathLines(benchserver.AllocsPath)
)

func contains(req []byte, lines [][]byte) bool {
	for _, l := range lines {
		if bytes.Contains(req, l) {
			return true
		}
	}
	return false
}

func main() {
	o := benchserver.ParseFlags()
	var lnp atomic.Pointer[quic.Listener]
	benchserver.MainH3(o, func(pc net.PacketConn, tlsConf *tls.Config) error {
		ln, err := quic.Listen(pc, tlsConf, &quic.Config{})
		if err != nil {
			return err
		}
		lnp.Store(ln)
		for {
			qc, err := ln.Accept(context.Background())
			if err != nil {
				return err
			}
			go serveConn(qc)
		}
	}, func() {
		if ln := lnp.Load(); ln != nil {
			ln.Close()
		}
	})
}

// serveConn answers qc's request streams one after another.
func serveConn(qc *quic.Conn) {
	buf := make([]byte, 0, 1024)
	for {
		s, err := qc.AcceptStream(context.Background())
		if err != nil {
			return
		}
		req := buf[:0]
		for {
			if len(req) == cap(req) {
				s.CancelRead(0x010c) // H3_REQUEST_CANCELLED: not a request this server takes
				break
			}
			n, err := s.Read(req[len(req):cap(req)])
			req = req[:len(req)+n]
			if err != nil {
				break
			}
		}
		switch {
		case contains(req, bulkPath):
			s.Write(bulk())
		case contains(req, allocsPath):
			b := benchserver.AppendHeapAllocs(nil)
			s.Write(response("text/plain", b))
		default:
			s.Write(hello)
		}
		s.Close()
	}
}
