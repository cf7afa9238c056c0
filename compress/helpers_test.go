package compress

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/riptide-http/riptide"
)

// serve starts a riptide server for h on loopback, HTTP/1.1 and h2c.
func serve(t testing.TB, h riptide.Handler) string {
	t.Helper()
	return serveEngine(t, h, riptide.EngineAuto)
}

// serveEngine is serve on the given engine.
func serveEngine(t testing.TB, h riptide.Handler, engine riptide.Engine) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &riptide.Server{Handler: h, HTTP2: &riptide.HTTP2Config{H2C: true}, Engine: engine,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	done := make(chan struct{})
	go func() { srv.Serve(ln); close(done) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return ln.Addr().String()
}

// client returns an HTTP/1.1 or h2c (prior knowledge) client that leaves
// the body encoded.
func client(h2 bool) *http.Client {
	var p http.Protocols
	if h2 {
		p.SetUnencryptedHTTP2(true)
	} else {
		p.SetHTTP1(true)
	}
	return &http.Client{Transport: &http.Transport{Protocols: &p, DisableCompression: true}}
}

// get sends GET / with Accept-Encoding ae (none when empty).
func get(t *testing.T, h2 bool, addr, ae string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
	if ae != "" {
		req.Header.Set("Accept-Encoding", ae)
	}
	resp, err := client(h2).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// decoder returns the library's reader for a Content-Encoding.
func decoder(t *testing.T, enc string, r io.Reader) io.Reader {
	t.Helper()
	switch enc {
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		return zr
	case "zstd":
		zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(zr.Close)
		return zr
	case "br":
		return brotli.NewReader(r)
	}
	t.Fatalf("unknown encoding %q", enc)
	return nil
}

// jsonBody is a JSON document of about n bytes.
func jsonBody(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"items":[`)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"item %d","tags":["alpha","beta"],"price":%d.%02d,"active":%t}`, i, i, i*7%100, i%100, i%3 == 0)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}
