package http3

import (
	"bytes"
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
)

// floorQUICConfig is the QUIC configuration of a Server's HTTP/3
// listener with the default limits, with quic-go's default receive
// windows: what the quic-go bare-stream floor of the allocation tests
// serves with.
func floorQUICConfig(t *testing.T) *quic.Config {
	t.Helper()
	l, err := (&riptide.Server{}).ListenQUIC(riptide.QUICOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	lim := l.Limits()
	lim.StreamReceiveWindow, lim.ConnReceiveWindow = 0, 0
	return quicConfig(lim)
}

// h3Client returns an HTTP client on quic-go's HTTP/3 transport.
func h3Client(t testing.TB) *http.Client {
	tr := &qhttp3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h3"}}}
	t.Cleanup(func() { tr.Close() })
	return &http.Client{Transport: tr}
}

// quicGoClientRoutes serves /hello and /echo (the body, and the request's
// trailers as response trailers) through the compat door, and counts the
// requests it saw over a QUIC connection that negotiated h3.
func quicGoClientRoutes(h3Requests *atomic.Int32) riptide.Handler {
	return riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil && r.TLS.NegotiatedProtocol == "h3" {
			h3Requests.Add(1)
		}
		switch r.URL.Path {
		case "/hello":
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Length", "13")
			w.Write(hello)
		case "/echo":
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			for name := range r.Trailer {
				w.Header().Add("Trailer", name)
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Header().Set("X-Method", r.Method)
			w.Write(body)
			for name, vs := range r.Trailer {
				w.Header()[name] = vs
			}
		default:
			w.WriteHeader(404)
		}
	}))
}

// TestQuicGoClient: quic-go's HTTP/3 client against Serve over loopback
// QUIC: GET, a 200 KB POST echoed, trailers both ways, and 50 concurrent
// streams on one connection; each request was served over a connection
// that negotiated h3, and each response is HTTP/3 to the client. (The
// engine alone, on an in-memory QUIC: internal/h3srv's TestGet,
// TestPostEcho, TestTrailers, TestConcurrentStreams.)
func TestQuicGoClient(t *testing.T) {
	var h3Requests atomic.Int32
	addr, _ := startServe(t, &riptide.Server{Handler: quicGoClientRoutes(&h3Requests)}, nil)
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
	if got := h3Requests.Load(); got != requests {
		t.Errorf("Serve served %d requests over h3, client made %d", got, requests)
	}
}
