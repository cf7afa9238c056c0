package static

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/loopback"
)

// tree writes files (name → content) under a new temporary directory.
func tree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// serveDir starts riptide with a Handler for dir and returns its address.
func serveDir(t testing.TB, dir string, opt Options) string {
	t.Helper()
	h, err := New(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return loopback.Serve(t, h)
}

// engines are the engines the protocol tests run on.
var engines = []riptide.Engine{riptide.EngineEventLoop, riptide.EngineGoroutine}

// serveDirOn is serveDir on engine e.
func serveDirOn(t *testing.T, e riptide.Engine, dir string, opt Options) string {
	t.Helper()
	h, err := New(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return serveEngine(t, e, h)
}

// get sends one request with extra header lines on a new connection.
func get(t testing.TB, addr, method, target string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req := method + " " + target + " HTTP/1.1\r\nHost: x\r\n"
	for i := 0; i+1 < len(hdr); i += 2 {
		req += hdr[i] + ": " + hdr[i+1] + "\r\n"
	}
	return loopback.DialConn(t, addr).Send(req + "\r\n")
}

// weakETag is the ETag the Handler gives a file (see newFile).
func weakETag(fi os.FileInfo) string {
	return `W/"` + strconv.FormatInt(fi.Size(), 16) + "-" + strconv.FormatInt(fi.ModTime().UnixNano(), 16) + `"`
}
