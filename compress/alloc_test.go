package compress

import (
	"bytes"
	"testing"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/israce"
	"github.com/riptide-http/riptide/internal/loopback"
)

// maxAllocs bounds the allocations of one compressed response, measured
// over a real loopback connection (server and client in the process):
// the encoders are pooled, so in steady state nothing is allocated.
const maxAllocs = 0

// TestAllocs: a ~3 KiB JSON response compressed with each encoding, and
// one passed through (too small), over a keep-alive loopback connection.
func TestAllocs(t *testing.T) {
	if israce.Enabled {
		t.Skip("the race detector allocates")
	}
	body := jsonBody(3 << 10)
	h := New(Config{})(riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.SetContentType("application/json")
		if c.QueryArg("small") != nil {
			c.WriteString(`{"ok":true}`)
			return
		}
		c.SetHeader("ETag", `"v1"`) // made weak when compressed
		c.Write(body)
	}))
	addr := loopback.Serve(t, h)
	for _, tc := range []struct{ name, target, ae, ce string }{
		{"gzip", "/", "gzip", "gzip"},
		{"zstd", "/", "zstd", "zstd"},
		{"br", "/", "br", "br"},
		{"below MinSize", "/?small=1", "gzip, br, zstd", ""},
		{"no Accept-Encoding", "/", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := "GET " + tc.target + " HTTP/1.1\r\nHost: x\r\n"
			if tc.ae != "" {
				req += "Accept-Encoding: " + tc.ae + "\r\n"
			}
			c := loopback.Dial(t, addr, req+"\r\n")
			// The response really is what the row says.
			if tc.ce != "" && !bytes.Contains(c.Response(), []byte("\r\nContent-Encoding: "+tc.ce+"\r\n")) {
				t.Fatalf("not %s-encoded:\n%s", tc.ce, c.Response())
			}
			if tc.ce != "" && !bytes.Contains(c.Response(), []byte("\r\nETag: W/\"v1\"\r\n")) {
				t.Fatalf("ETag not made weak:\n%s", c.Response())
			}
			if tc.ce == "" && bytes.Contains(c.Response(), []byte("Content-Encoding")) {
				t.Fatalf("encoded:\n%s", c.Response())
			}
			a := testing.AllocsPerRun(500, c.RoundTrip)
			t.Logf("%v allocs per response", a)
			if a > maxAllocs {
				t.Errorf("%v allocs per response, want ≤ %d", a, maxAllocs)
			}
		})
	}
}
