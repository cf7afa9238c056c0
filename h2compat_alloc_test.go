package riptide

import (
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/riptide-http/riptide/internal/israce"
)

// TestH2CompatRequestBlocksShared counts, exactly, what the compat door
// allocates per HTTP/2 request with the client of TestH2Allocs: the
// request's Header map (two), the response Header map and Set's value
// slice, and the request's block, which a pooled stream conn allocates
// several at a time as an HTTP/1.1 connection does (h2SlabReqs: 4 to an
// allocation once a conn has served 4 streams), so it counts 1/4.
// Before, every stream's block was allocated alone: 6.01 per request.
func TestH2CompatRequestBlocksShared(t *testing.T) {
	if testing.Short() || israce.Enabled {
		t.Skip("allocation counts need a build without -race")
	}
	h := FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "Hello, World!")
	}))
	ac := startH2AllocServer(t, &Server{Handler: h, Logger: slog.New(slog.DiscardHandler), HTTP2: &HTTP2Config{H2C: true}})
	got := mallocsPerRun(4000, ac.roundTrip)
	t.Logf("compat over HTTP/2: %.4f allocations per request", got)
	if limit := 5 + 1.0/h2SlabReqs + 0.05; got > limit {
		t.Errorf("compat over HTTP/2: %.4f allocations per request, want at most %.4f (the request blocks 1/%d each)", got, limit, h2SlabReqs)
	}
}
