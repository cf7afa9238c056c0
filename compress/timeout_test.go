package compress

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// stalled is what the handler of TestWriteTimeoutReleasesEncoder saw.
type stalled struct {
	err, again, flush error // the failed write, a later write, a Flush
	held              bool  // the writer still held an encoder
	state             int
}

// TestWriteTimeoutReleasesEncoder: a client that never reads cannot hold
// a compressor (issue 23 item 11): once a compressed write has made no
// progress for Config.WriteTimeout it fails with os.ErrDeadlineExceeded,
// the encoder is released at once, later writes fail without it, and the
// connection (HTTP/1.1) is closed or the stream (HTTP/2) reset. Per
// engine, protocol and encoding.
func TestWriteTimeoutReleasesEncoder(t *testing.T) {
	// Incompressible text, fresh for every write (a repeated chunk would
	// compress to nothing within zstd's and brotli's windows): the
	// compressed output is as large as the input, so the socket (or the
	// stream window) fills.
	for _, engine := range []riptide.Engine{riptide.EngineGoroutine, riptide.EngineEventLoop} {
		for _, proto := range protocols {
			for _, enc := range []string{"zstd", "br", "gzip"} {
				t.Run(engine.String()+"/"+proto.name+"/"+enc, func(t *testing.T) {
					result := make(chan stalled, 1)
					h := New(Config{WriteTimeout: 100 * time.Millisecond})(riptide.HandlerFunc(func(c *riptide.Ctx) {
						c.SetContentType("text/plain")
						var s stalled
						rng := rand.NewChaCha8([32]byte{})
						chunk := make([]byte, 64<<10)
						for i := 0; i < 1<<14 && s.err == nil; i++ { // 1 GiB at most
							rng.Read(chunk)
							_, s.err = c.Write(chunk)
						}
						w := c.BodyFilter().(*writer)
						s.held, s.state = w.cur != nil, w.state
						_, s.again = c.Write(chunk)
						s.flush = c.Flush()
						result <- s
					}))
					addr := serveEngine(t, h, engine)
					closeClient := stallingClient(t, proto.h2, addr, enc)
					defer closeClient()
					var s stalled
					select {
					case s = <-result:
					case <-time.After(60 * time.Second):
						// Only the unbounded wait this test is about gets here.
						t.Fatal("a compressed write to a client that does not read was still blocked after 60s")
					}
					if !errors.Is(s.err, os.ErrDeadlineExceeded) || s.held || s.state != failed ||
						s.again != s.err || s.flush != s.err {
						t.Fatalf("write error %v (later write %v, Flush %v), encoder held %v, state %d; want %v, released, state %d",
							s.err, s.again, s.flush, s.held, s.state, os.ErrDeadlineExceeded, failed)
					}
				})
			}
		}
	}
}

// stallingClient requests / with Accept-Encoding enc and never reads the
// response body. The returned func checks that the server gave up on the
// response once the handler returned (HTTP/1.1: closed the connection;
// HTTP/2: reset the stream) and closes the client.
func stallingClient(t *testing.T, h2 bool, addr, enc string) func() {
	if !h2 {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\nAccept-Encoding: "+enc+"\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		return func() {
			defer nc.Close()
			if t.Failed() {
				return
			}
			// The server gave up on the response: reading now drains
			// what was sent and ends (EOF or reset), never times out.
			nc.SetReadDeadline(time.Now().Add(60 * time.Second))
			if _, err := io.Copy(io.Discard, nc); errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("connection still open after the write failed")
			}
		}
	}
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p, DisableCompression: true,
		HTTP2: &http.HTTP2Config{MaxReceiveBufferPerStream: 64 << 10}}
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	req.Header.Set("Accept-Encoding", enc)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Content-Encoding") != enc {
		t.Errorf("Content-Encoding %q, want %s", resp.Header.Get("Content-Encoding"), enc)
	}
	return func() {
		defer tr.CloseIdleConnections()
		defer resp.Body.Close()
		if t.Failed() {
			return
		}
		// The stream ends with an error, never as if the body were whole.
		if _, err := io.Copy(io.Discard, resp.Body); err == nil {
			t.Errorf("the truncated compressed body ended cleanly")
		}
	}
}
