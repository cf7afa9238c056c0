package bench

import (
	"context"
	"testing"
	"time"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/harness"
)

// checkH3 checks s on the HTTP/3 workloads: an HTTP/3 server, started as
// the harness starts it, must carry a short run of each (the harness's
// quic-go client) with every response correct, and report its
// allocations; a server without HTTP/3 must not be given them.
func checkH3(t *testing.T, ctx context.Context, s harness.Server, binDir string) {
	for _, w := range harness.Workloads() {
		if !w.HTTP3 {
			continue
		}
		t.Run(w.Name, func(t *testing.T) {
			if !s.HTTP3 {
				if s.Supports(w) {
					t.Fatalf("%s has no HTTP/3 but Supports(%s) is true", s.Name, w.Name)
				}
				return
			}
			if w.RustH3 {
				t.Skip("the Rust client's workload: TestH3rsRiptide in internal/harness runs it when cargo is available")
			}
			p, err := harness.Start(ctx, s, harness.StartOptions{BinDir: binDir, Workload: &w, Log: testLog{t}})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()
			rctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			// A window of 500 ms carries many small requests; a bulk
			// download (16 MiB) may take longer than that under the race
			// detector on a loaded machine, and only requests that finish
			// inside the window count: the window doubles (up to 16 s)
			// until one does.
			var (
				out []byte
				st  harness.WrkStats
			)
			for d := 500 * time.Millisecond; ; d *= 2 {
				out, st, err = harness.LoadH3(rctx, p.Addr, w, 2, d)
				if err != nil || st.Requests > 0 || d >= 16*time.Second {
					break
				}
			}
			if flag := harness.FlagOf(st, err, p); flag != "" {
				t.Fatalf("flagged: %s\n%s", flag, out)
			}
			if st.Protocol != "h3" || st.AllocsPerReq <= 0 || st.P50US <= 0 {
				t.Errorf("protocol %q, allocations per request %v, p50 %v µs\n%s", st.Protocol, st.AllocsPerReq, st.P50US, out)
			}
			if w.ExpectLen > 0 && (st.Bytes != st.Requests*benchserver.BulkSize || st.MBps <= 0) {
				t.Errorf("%d requests, %d bytes, %.1f MB/s\n%s", st.Requests, st.Bytes, st.MBps, out)
			}
		})
	}
}
