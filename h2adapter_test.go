package riptide

import (
	"net"
	"net/http"
	"testing"
)

// h2FakeWriter is a minimal http.ResponseWriter standing in for x/net's, so
// that the adapter's own cost can be measured apart from HTTP/2's.
type h2FakeWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *h2FakeWriter) Header() http.Header         { return w.h }
func (w *h2FakeWriter) WriteHeader(code int)        { w.status = code }
func (w *h2FakeWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }
func (w *h2FakeWriter) Flush()                      {}

// BenchmarkH2Adapter measures what the native adapter adds per HTTP/2
// request on top of x/net: the request written as an HTTP/1.1 head and
// parsed, the handler run on a pooled engine conn, and the response
// translated back, for a GET with 10 headers answered "Hello, World!".
// "direct" is the same response written straight to the ResponseWriter
// (what a compat handler does), for reference.
//
//	go test -run '^$' -bench BenchmarkH2Adapter -benchmem
func BenchmarkH2Adapter(b *testing.B) {
	r, _ := http.NewRequest("GET", "https://example.com/plaintext?x=1", nil)
	r.RequestURI = "/plaintext?x=1"
	for _, k := range []string{"Accept", "Accept-Encoding", "Accept-Language", "User-Agent", "Cookie",
		"Cache-Control", "Referer", "X-Request-Id", "X-Forwarded-For", "Sec-Fetch-Mode"} {
		r.Header.Set(k, "some typical value for "+k)
	}
	r.ProtoMajor = 2
	w := &h2FakeWriter{h: make(http.Header)}
	reset := func() {
		clear(w.h)
		w.status, w.n = 0, 0
	}
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	b.Run("native", func(b *testing.B) {
		srv := &Server{Handler: HandlerFunc(func(c *Ctx) {
			c.SetHeader("Content-Type", "text/plain")
			c.WriteString("Hello, World!")
		})}
		srv.init()
		h := &h2NativeHandler{srv: srv, nc: c1}
		b.ReportAllocs()
		for b.Loop() {
			reset()
			h.ServeHTTP(w, r)
		}
		if w.status != 200 || w.n != 13 || w.h.Get("Content-Type") != "text/plain" {
			b.Fatalf("got %d, %d bytes, %v", w.status, w.n, w.h)
		}
	})
	b.Run("direct", func(b *testing.B) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("Hello, World!"))
		})
		b.ReportAllocs()
		for b.Loop() {
			reset()
			h.ServeHTTP(w, r)
		}
	})
}
