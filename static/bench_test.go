package static

import (
	"strings"
	"testing"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/loopback"
)

// BenchmarkFile4K serves a 4 KiB file over a loopback keep-alive
// connection: from the open-file cache (the default, the path stat'ed
// once a second), with a stat on every request (Recheck < 0), and with
// the file opened, stat'ed and closed on every request (MaxFiles 1 and
// two files served in turn, so that each request evicts the other). The
// difference is what the cache saves.
func BenchmarkFile4K(b *testing.B) {
	dir := tree(b, map[string]string{"a.txt": strings.Repeat("a", 4096), "b.txt": strings.Repeat("b", 4096)})
	for _, bc := range []struct {
		name string
		opt  Options
		alt  bool
	}{
		{"cached", Options{}, false},
		{"stat-every-request", Options{Recheck: -1}, false},
		{"open-every-request", Options{MaxFiles: 1}, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h, err := New(dir, bc.opt)
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			addr := loopback.Serve(b, riptide.Handler(h))
			ca := loopback.Dial(b, addr, "GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n")
			cb := loopback.Dial(b, addr, "GET /b.txt HTTP/1.1\r\nHost: x\r\n\r\n")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if bc.alt && i%2 == 1 {
					cb.RoundTrip()
				} else {
					ca.RoundTrip()
				}
			}
		})
	}
}
