package middleware

import (
	"io"
	"log/slog"
	"testing"

	"github.com/riptide-http/riptide/internal/israce"
	"github.com/riptide-http/riptide/internal/loopback"
)

// TestZeroAllocs: a request through Recover, AccessLog (level disabled),
// RequestID and CORS, over a real loopback connection, allocates nothing
// in the whole process.
func TestZeroAllocs(t *testing.T) {
	if israce.Enabled {
		t.Skip("the race detector allocates")
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h := Chain(hello,
		Recover(logger),
		AccessLog(logger, slog.LevelInfo, nil),
		RequestID(),
		CORS(CORSOptions{AllowedOrigins: []string{"https://app.example"}, AllowCredentials: true}),
	)
	addr := loopback.Serve(t, h)
	for _, tc := range []struct{ name, req string }{
		{"generated ID, CORS", "GET / HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\n\r\n"},
		{"incoming ID, no Origin", "GET / HTTP/1.1\r\nHost: x\r\nX-Request-Id: abc-123\r\n\r\n"},
		{"preflight", "OPTIONS / HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: GET\r\nContent-Length: 0\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := loopback.Dial(t, addr, tc.req)
			if a := testing.AllocsPerRun(2000, c.RoundTrip); a != 0 {
				t.Errorf("%v allocs per request, want 0", a)
			}
		})
	}
}
