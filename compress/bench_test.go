package compress

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"

	"github.com/klauspost/compress/gzhttp"
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/loopback"
)

// BenchmarkCompressedJSON: a 3 KiB JSON body gzipped, over a keep-alive
// loopback connection per client goroutine, served by riptide native with
// this middleware and by net/http with gzhttp (klauspost/compress), both
// at gzip.DefaultCompression with a 1 KiB minimum size. The sub-benchmarks
// run in turn within each -count round, so their per-round ratio is
// measured under the same load.
func BenchmarkCompressedJSON(b *testing.B) {
	body := jsonBody(3 << 10)
	native := New(Config{Encodings: []Encoding{Gzip}})(riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.SetContentType("application/json")
		c.Write(body)
	}))
	std := gzhttp.GzipHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	req := "GET /items HTTP/1.1\r\nHost: bench\r\nAccept-Encoding: gzip\r\n\r\n"
	for _, s := range []struct {
		name string
		addr func(b *testing.B) string
	}{
		{"riptide", func(b *testing.B) string { return loopback.Serve(b, native) }},
		{"nethttp-gzhttp", func(b *testing.B) string { return serveStd(b, std) }},
	} {
		b.Run("server="+s.name, func(b *testing.B) {
			addr := s.addr(b)
			first := loopback.Dial(b, addr, req)
			b.SetBytes(int64(len(first.Response())))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				c := loopback.Dial(b, addr, req)
				for pb.Next() {
					c.RoundTrip()
				}
			})
		})
	}
}

// serveStd serves h with net/http on loopback until the benchmark ends.
func serveStd(b *testing.B, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h, ErrorLog: slog.NewLogLogger(slog.NewTextHandler(io.Discard, nil), slog.LevelError)}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}
