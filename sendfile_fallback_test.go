package riptide_test

import (
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// Where the kernel cannot move the bytes, Ctx.SendFile copies them: as
// DATA frames on HTTP/2 (h2c and TLS) and through the TLS record layer on
// HTTP/1.1 over TLS. The body is the same section either way.
func TestSendFileFallback(t *testing.T) {
	t.Parallel()
	content := strings.Repeat("riptide sendfile fallback\n", 20000) // 520 KB
	p := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const off, n = 1234, 400000
	h := riptide.HandlerFunc(func(c *riptide.Ctx) {
		if _, err := c.SendFile(f, off, n); err != nil {
			t.Errorf("SendFile: %v", err)
		}
	})
	for _, useTLS := range []bool{false, true} {
		in := startRiptideTarget(t, "sendfile", h, useTLS)
		t.Run("h2-"+in.mode(), func(t *testing.T) {
			resp, body, err := getBody(h2Client(t, in), in.url("/"))
			if err != nil || resp.ProtoMajor != 2 || body != content[off:off+n] || resp.ContentLength != n {
				t.Fatalf("%v: HTTP/%d, %d bytes, Content-Length %d", err, resp.ProtoMajor, len(body), resp.ContentLength)
			}
		})
		if !useTLS {
			continue
		}
		t.Run("http1-tls", func(t *testing.T) {
			tr := &http.Transport{TLSClientConfig: h2TestClientTLS(t, "http/1.1")}
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
			resp, err := c.Get(in.url("/"))
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.ProtoMajor != 1 || string(b) != content[off:off+n] {
				t.Fatalf("%v: HTTP/%d, %d bytes", err, resp.ProtoMajor, len(b))
			}
		})
	}
}
