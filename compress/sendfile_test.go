package compress

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/riptide-http/riptide"
)

// TestSendFileThroughFilter: a file section sent with Ctx.SendFile after
// some written bytes goes through the compressor, in order, instead of
// straight to the socket past it.
func TestSendFileThroughFilter(t *testing.T) {
	content := jsonBody(64 << 10)
	path := filepath.Join(t.TempDir(), "body.json")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	prefix := []byte("prefix:")
	h := New(Config{})(riptide.HandlerFunc(func(c *riptide.Ctx) {
		f, err := os.Open(path)
		if err != nil {
			c.SetStatus(500)
			return
		}
		defer f.Close()
		c.SetContentType("application/json")
		c.Write(prefix)
		if _, err := c.SendFile(f, 100, int64(len(content)-100)); err != nil {
			t.Errorf("SendFile: %v", err)
		}
	}))
	addr := serve(t, h)
	want := append(append([]byte(nil), prefix...), content[100:]...)
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			resp := get(t, p.h2, addr, "gzip")
			checkProto(t, resp, p.h2)
			if got := resp.Header.Get("Content-Encoding"); got != "gzip" {
				t.Fatalf("Content-Encoding %q, want gzip", got)
			}
			got, err := io.ReadAll(decoder(t, "gzip", resp.Body))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("decoded %d bytes, differ from the %d sent", len(got), len(want))
			}
		})
	}
}
