package http3

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"runtime"
	"slices"
	"testing"

	"github.com/quic-go/quic-go"
	qhttp3 "github.com/quic-go/quic-go/http3"
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/h3"
)

// rawClient makes requests on one QUIC connection with pre-encoded
// HEADERS, reading each response into a reused buffer: as cheap a client
// as quic-go allows, so that what differs between two servers stands out.
type rawClient struct {
	qc  *quic.Conn
	req []byte
	buf []byte
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	qc, err := quic.DialAddr(t.Context(), addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h3"}}, &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qc.CloseWithError(0, "") })
	return &rawClient{qc: qc, req: dialRawRequest(), buf: make([]byte, 4096)}
}

// dialRawRequest returns the HEADERS frame of a GET /hello.
func dialRawRequest() []byte {
	sec := h3.AppendFieldSectionPrefix(nil)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "localhost"}, {":path", "/hello"}, {"user-agent", "alloc-test"}} {
		sec = h3.AppendField(sec, f[0], f[1], true)
	}
	return append(h3.AppendFrameHeader(nil, h3.FrameHeaders, uint64(len(sec))), sec...)
}

// do makes one request and returns the response's bytes (valid until the
// next call).
func (c *rawClient) do(t *testing.T) []byte {
	s, err := c.qc.OpenStreamSync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(c.req); err != nil {
		t.Fatal(err)
	}
	s.Close()
	n := 0
	for {
		k, err := s.Read(c.buf[n:])
		n += k
		if errors.Is(err, io.EOF) {
			return c.buf[:n]
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// serveFloor serves ln's connections with quic-go's bare streams: each
// stream's request read to its end and resp written, in the accept loop —
// what any HTTP/3 layer on quic-go costs at least.
func serveFloor(ln *quic.Listener, resp []byte) {
	for {
		qc, err := ln.Accept(context.Background())
		if err != nil {
			return
		}
		go func() {
			var buf [512]byte
			for {
				s, err := qc.AcceptStream(context.Background())
				if err != nil {
					return
				}
				for {
					if _, err := s.Read(buf[:]); err != nil {
						break
					}
				}
				s.Write(resp)
				s.Close()
				s.ReleaseStreamCredit()
			}
		}()
	}
}

// TestServerAllocsVsFloor measures allocations per request over loopback
// QUIC, client and server in this process: Serve with a native hello
// handler (the engine and the Ctx above it), and quic-go's bare-stream
// floor (a do-nothing stream handler writing the same response bytes)
// with the same client, in interleaved rounds. The client's allocations
// are the same in both, so the difference is what Serve costs over the
// floor; the target is at most 2. (The engine alone allocates
// nothing per request: internal/h3srv's TestEngineAllocs.)
func TestServerAllocsVsFloor(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts in -short mode or under the race detector are not pinned")
	}
	addr, _ := startServe(t, &riptide.Server{Handler: nativeHello}, nil)
	engine := dialRaw(t, addr)
	resp := slices.Clone(engine.do(t))

	ln, err := quic.ListenAddr("127.0.0.1:0", testTLS(t), floorQUICConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go serveFloor(ln, resp)
	floor := dialRaw(t, ln.Addr().String())
	if got := floor.do(t); string(got) != string(resp) {
		t.Fatalf("floor answered % x, engine % x", got, resp)
	}

	// quic-go's own HTTP/3 server with a hello http.Handler, for the
	// record (not asserted).
	qln, err := quic.ListenAddr("127.0.0.1:0", testTLS(t), &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	qs := &qhttp3.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", "13")
		w.Write(hello)
	})}
	go qs.ServeListener(qln)
	defer qs.Close()
	quicgo := dialRaw(t, qln.Addr().String())
	if got := quicgo.do(t); !bytes.Contains(got, hello) {
		t.Fatalf("quic-go's server answered % x", got)
	}

	const rounds, n = 7, 300
	measure := func(c *rawClient) float64 {
		for range 20 {
			c.do(t)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			c.do(t)
		}
		runtime.ReadMemStats(&after)
		return float64(after.Mallocs-before.Mallocs) / n
	}
	var fs, es, qs3 []float64
	for range rounds {
		fs = append(fs, measure(floor))
		es = append(es, measure(engine))
		qs3 = append(qs3, measure(quicgo))
	}
	slices.Sort(fs)
	slices.Sort(es)
	slices.Sort(qs3)
	f, e, q := fs[rounds/2], es[rounds/2], qs3[rounds/2]
	t.Logf("allocs per request, client and server, medians of %d rounds of %d: quic-go bare-stream floor %.2f, Serve (native Ctx) %.2f (over the floor %.2f), quic-go http3.Server %.2f (over the floor %.2f)", rounds, n, f, e, e-f, q, q-f)
	t.Logf("rounds: floor %.2f, Serve %.2f, quic-go http3.Server %.2f", fs, es, qs3)
	if e > f+2 {
		t.Errorf("Serve (native Ctx) %.2f allocs per request, floor %.2f: more than floor + 2", e, f)
	}
}

var hello = []byte("Hello, World!")
