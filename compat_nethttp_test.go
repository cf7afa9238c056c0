package riptide

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// h2cTestClient speaks HTTP/2 with prior knowledge (h2c) only.
func h2cTestClient(t *testing.T) *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

// postUnknownLength POSTs body with no declared length (chunked on
// HTTP/1.1, DATA frames on HTTP/2) and returns the response body.
func postUnknownLength(t *testing.T, c *http.Client, url, body string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", url, io.MultiReader(strings.NewReader(body)))
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// A read past MaxRequestBodySize fails, on both
// protocols, with an error that errors.As finds as *http.MaxBytesError.
func TestCompatBodyLimitIsMaxBytesError(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		var mbe *http.MaxBytesError
		ok := errors.As(err, &mbe)
		fmt.Fprintf(w, "%t", ok && mbe.Limit == 10)
	})
	srv := &Server{Handler: FromHTTP(h), MaxRequestBodySize: 10, HTTP2: &HTTP2Config{H2C: true}}
	_, addr := startServer(t, srv, nil)
	body := strings.Repeat("x", 100)
	if got := postUnknownLength(t, http.DefaultClient, "http://"+addr+"/", body); got != "true" {
		t.Errorf("HTTP/1.1: errors.As(err, *http.MaxBytesError) with Limit 10: %q", got)
	}
	if got := postUnknownLength(t, h2cTestClient(t), "http://"+addr+"/", body); got != "true" {
		t.Errorf("HTTP/2: errors.As(err, *http.MaxBytesError) with Limit 10: %q", got)
	}
}

// The request Context holds a *http.Server under
// http.ServerContextKey, the same one for every request and protocol of a
// Server, with the Server's timeouts.
func TestCompatServerContextKey(t *testing.T) {
	var mu sync.Mutex
	seen := map[*http.Server]bool{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hs, ok := r.Context().Value(http.ServerContextKey).(*http.Server)
		if !ok {
			io.WriteString(w, "no *http.Server")
			return
		}
		mu.Lock()
		seen[hs] = true
		mu.Unlock()
		fmt.Fprintf(w, "%v %v %v %d", hs.ReadHeaderTimeout, hs.WriteTimeout, hs.IdleTimeout, hs.MaxHeaderBytes)
	})
	srv := &Server{Handler: FromHTTP(h), ReadHeaderTimeout: 3 * time.Second, WriteTimeout: 7 * time.Second,
		IdleTimeout: 11 * time.Second, MaxHeaderBytes: 8000, HTTP2: &HTTP2Config{H2C: true}}
	_, addr := startServer(t, srv, nil)
	const want = "3s 7s 11s 8000"
	for _, c := range []*http.Client{http.DefaultClient, h2cTestClient(t)} {
		for range 2 {
			res, err := c.Get("http://" + addr + "/")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if string(b) != want {
				t.Errorf("%s: %q, want %q", res.Proto, b, want)
			}
		}
	}
	if len(seen) != 1 {
		t.Errorf("%d different *http.Server values, want one per Server", len(seen))
	}
}

// Plain HTTP sent to a TLS port gets net/http's 400 and
// a log line, not a silent close.
func TestTLSPlainHTTPAnswered400(t *testing.T) {
	t.Parallel()
	certSrv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(certSrv.Close)
	var logBuf syncBuffer
	srv := &Server{Handler: FromHTTP(http.NotFoundHandler()), Logger: slog.New(slog.NewTextHandler(&logBuf, nil))}
	srv.TLSConfig = certSrv.TLS.Clone()
	ts := serveTest(t, srv, testServeOptions{TLS: true})
	nc, err := net.Dial("tcp", ts.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	got, _ := io.ReadAll(nc)
	if string(got) != plainHTTPAnswer {
		t.Errorf("plain HTTP to the TLS port got %q, want %q", got, plainHTTPAnswer)
	}
	if !strings.Contains(logBuf.String(), "client sent an HTTP request to an HTTPS server") {
		t.Errorf("not logged: %q", logBuf.String())
	}
}

// A request refused before any handler runs gets a
// canned 400, without a body when it asked for HEAD.
func TestCanned400ToHEADHasNoBody(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, nil, func(c *Ctx) { c.WriteString("ok") })
	for _, target := range []string{"/a%zz", "/caf\xc3\xa9\x7f"} {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(nc, "HEAD "+target+" HTTP/1.1\r\nHost: x\r\n\r\n")
		got, _ := io.ReadAll(nc)
		nc.Close()
		if !bytes.HasPrefix(got, []byte("HTTP/1.1 400 ")) || !bytes.HasSuffix(got, []byte("\r\n\r\n")) {
			t.Errorf("HEAD %q: %q, want a 400 head and no body", target, got)
		}
	}
}

// Over HTTP/2 a Content-Length the handler set is sent
// only when net/http's HTTP/2 server would accept it (strconv.ParseUint),
// and never beside the one riptide computes: one field, the body's length.
func TestH2CompatInvalidContentLengthDropped(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", r.URL.Query().Get("cl"))
		io.WriteString(w, "hello")
	})
	for _, p := range parityH2Protos(t) {
		addr := p.serve(t, h, false)
		c := p.client(t)
		for _, cl := range []string{"+5", " 5 ", "0x5", "-5"} {
			res, err := c.Get(p.scheme + "://" + addr + "/?cl=" + url.QueryEscape(cl))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if got := res.Header["Content-Length"]; len(got) != 1 || got[0] != "5" || string(b) != "hello" {
				t.Errorf("%s, handler's Content-Length %q: fields %q, body %q; want one \"5\"", p.name, cl, got, b)
			}
		}
	}
}
