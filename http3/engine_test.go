package http3

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/quic-go/quic-go"
	qhttp3 "github.com/quic-go/quic-go/http3"
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/h3srv"
)

// engineQUICConfig is quicConfig for the engine configured by cfg (nil:
// the defaults), with quic-go's default receive windows.
func engineQUICConfig(cfg *h3srv.Config) *quic.Config {
	c := cfg.Normalized()
	return quicConfig(riptide.QUICLimits{
		MaxStreams:       c.MaxStreams,
		MaxUniStreams:    c.MaxUniStreams,
		IdleTimeout:      c.IdleTimeout,
		HandshakeTimeout: c.HandshakeTimeout,
		Allow0RTT:        c.Allow0RTT,
	})
}

// serveListener serves every connection ln accepts with the core's engine
// directly (no riptide.Server) until ln is closed or ctx is done, then
// waits for the connections' Serve to return. The listener must have been
// made with engineQUICConfig(cfg).
func serveListener(ctx context.Context, ln *quic.Listener, cfg *h3srv.Config, h h3srv.Handler) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	sh := h3srv.NewShared(cfg)
	for {
		qc, err := ln.Accept(ctx)
		if err != nil {
			return err
		}
		wg.Go(func() { h3srv.NewConnShared(conn{qc}, sh, h).Serve() })
	}
}

// startEngine serves h with the core's engine on a loopback QUIC listener
// configured by engineQUICConfig(cfg) and returns its address.
func startEngine(t *testing.T, cfg *h3srv.Config, h h3srv.Handler) string {
	t.Helper()
	ln, err := quic.ListenAddr("127.0.0.1:0", testTLS(t), engineQUICConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		serveListener(ctx, ln, cfg, h)
	}()
	t.Cleanup(func() {
		cancel()
		ln.Close()
		<-done
	})
	return ln.Addr().String()
}

// h3Client returns an HTTP client on quic-go's HTTP/3 transport.
func h3Client(t testing.TB) *http.Client {
	tr := &qhttp3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h3"}}}
	t.Cleanup(func() { tr.Close() })
	return &http.Client{Transport: tr}
}

// testHandler serves /hello and /echo (the body, and the request's
// trailers as response trailers), and counts the requests it saw over a
// QUIC connection that negotiated h3.
type testHandler struct{ h3 atomic.Int32 }

func (th *testHandler) ServeStream(s *h3srv.Stream) {
	if s.Conn().QUIC().State().TLS.NegotiatedProtocol == "h3" {
		th.h3.Add(1)
	}
	req := s.Request()
	switch string(req.Path) {
	case "/hello":
		s.WriteHeaders(200, []h1.Header{{Name: []byte("content-type"), Value: []byte("text/plain")}, {Name: []byte("content-length"), Value: []byte("13")}})
		s.WriteData([]byte("Hello, World!"))
	case "/echo":
		body, err := io.ReadAll(s)
		if err != nil {
			return
		}
		s.WriteHeaders(200, []h1.Header{{Name: []byte("content-length"), Value: strconv.AppendInt(nil, int64(len(body)), 10)}, {Name: []byte("x-method"), Value: req.Method}})
		s.WriteData(body)
		if tr := s.Trailers(); len(tr) > 0 {
			out := make([]h1.Header, len(tr))
			for i, f := range tr {
				out[i] = h1.Header{Name: f.Name, Value: f.Value}
			}
			s.WriteTrailers(out)
		}
	default:
		s.WriteHeaders(404, nil)
	}
}

// TestQuicGoClient: quic-go's HTTP/3 client against the engine over
// loopback QUIC: GET, a 200 KB POST echoed, trailers both ways, and 50
// concurrent streams on one connection; each request was served over a
// connection that negotiated h3, and each response is HTTP/3 to the client.
func TestQuicGoClient(t *testing.T) {
	th := &testHandler{}
	addr := startEngine(t, nil, th)
	c := h3Client(t)
	base := "https://" + addr
	requests := int32(0)
	check := func(resp *http.Response, err error, status int) []byte {
		t.Helper()
		requests++
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ProtoMajor != 3 || resp.StatusCode != status {
			t.Fatalf("%s, status %d; want HTTP/3 and %d", resp.Proto, resp.StatusCode, status)
		}
		return body
	}

	resp, err := c.Get(base + "/hello")
	if body := check(resp, err, 200); string(body) != "Hello, World!" || resp.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("GET: %q %v", body, resp.Header)
	}

	big := bytes.Repeat([]byte("riptide!"), 200_000/8)
	resp, err = c.Post(base+"/echo", "application/octet-stream", bytes.NewReader(big))
	if body := check(resp, err, 200); !bytes.Equal(body, big) || resp.Header.Get("X-Method") != "POST" {
		t.Errorf("POST echo: %d bytes back, equal %v", len(body), bytes.Equal(body, big))
	}

	req, _ := http.NewRequest("POST", base+"/echo", io.NopCloser(strings.NewReader("with trailers")))
	req.Trailer = http.Header{"X-Checksum": {"abc123"}}
	resp, err = c.Do(req)
	if body := check(resp, err, 200); string(body) != "with trailers" || resp.Trailer.Get("X-Checksum") != "abc123" {
		t.Errorf("trailers: body %q, trailer %v", body, resp.Trailer)
	}

	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := bytes.Repeat([]byte{byte('a' + i%26)}, 100*i)
			resp, err := c.Post(base+"/echo", "text/plain", bytes.NewReader(body))
			if err != nil {
				failed.Add(1)
				t.Error(err)
				return
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.ProtoMajor != 3 || !bytes.Equal(got, body) {
				failed.Add(1)
				t.Errorf("stream %d: %s, %d bytes", i, resp.Proto, len(got))
			}
		}()
	}
	wg.Wait()
	requests += 50
	if got := th.h3.Load(); got != requests {
		t.Errorf("engine served %d requests over h3, client made %d", got, requests)
	}
}
