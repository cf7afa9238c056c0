package static

import (
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/israce"
	"github.com/riptide-http/riptide/internal/loopback"
)

// serveEngine starts riptide on the given engine with h.
func serveEngine(t *testing.T, e riptide.Engine, h riptide.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &riptide.Server{Handler: h, Engine: e, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// A cached 4 KiB file, served with sendfile over a real loopback
// keep-alive connection, costs no allocation per request on either engine
// (testing.AllocsPerRun counts the whole process; the client allocates
// nothing). Also its index.html through a directory path, a Range request
// and a 304, and the error answers made without touching the file system
// (a refused path, a method, an unsatisfiable range), through Ctx.Error. A
// missing file is not cached: looking it up allocates.
func TestZeroAllocs(t *testing.T) {
	if israce.Enabled {
		t.Skip("the race detector allocates")
	}
	dir := tree(t, map[string]string{
		"4k.txt":          strings.Repeat("x", 4096),
		"docs/index.html": "<p>index</p>",
	})
	// The once-a-Recheck stat allocates (os.Root.Stat); it is put out of
	// the measurement's way.
	h, err := New(dir, Options{Recheck: 1 << 62, CacheControl: []CacheRule{{Ext: ".txt", Value: "max-age=60"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, e := range []riptide.Engine{riptide.EngineEventLoop, riptide.EngineGoroutine} {
		addr := serveEngine(t, e, h)
		res, _ := get(t, addr, "GET", "/4k.txt")
		etag, lm := res.Header.Get("ETag"), res.Header.Get("Last-Modified")
		for _, tc := range []struct{ name, req, want string }{
			{"4 KiB file", "GET /4k.txt HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 200"},
			{"index.html", "GET /docs/ HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 200"},
			{"HEAD", "HEAD /4k.txt HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 200"},
			{"not modified", "GET /4k.txt HTTP/1.1\r\nHost: x\r\nIf-None-Match: ETAG\r\n\r\n", "HTTP/1.1 304"},
			{"if-modified-since", "GET /4k.txt HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: LM\r\n\r\n", "HTTP/1.1 304"},
			{"refused path: 404 by Ctx.Error", "GET /.env HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 404"},
			{"method: 405 by Ctx.Error", "DELETE /4k.txt HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 405"},
			{"unsatisfiable range: 416 by Ctx.Error", "GET /4k.txt HTTP/1.1\r\nHost: x\r\nRange: bytes=9000-\r\n\r\n", "HTTP/1.1 416"},
		} {
			t.Run(e.String()+"/"+tc.name, func(t *testing.T) {
				req := strings.NewReplacer("ETAG", etag, "LM", lm).Replace(tc.req)
				c := loopback.Dial(t, addr, req)
				if got := string(c.Response()); !strings.HasPrefix(got, tc.want) {
					t.Fatalf("response %.200q, want %s", got, tc.want)
				}
				allocs := testing.AllocsPerRun(2000, c.RoundTrip)
				t.Logf("%v allocs per request", allocs)
				if allocs != 0 {
					t.Errorf("%v allocs per request, want 0", allocs)
				}
			})
		}
	}
}
