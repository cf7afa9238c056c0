package ecosystem

import (
	"bytes"
	"crypto/sha256"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFileServer(t *testing.T) {
	dir := t.TempDir()
	small := "0123456789abcdefghijklmnopqrstuvwxyz"
	// Larger than any response buffer, so it goes through io.ReaderFrom
	// (sendfile where the ResponseWriter offers it) or chunks.
	big := bytes.Repeat([]byte("riptide-filesrv-"), 256<<10/16*5)
	mtime := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	for name, data := range map[string][]byte{"small.txt": []byte(small), "big.bin": big, "sub/index.html": []byte("<h1>index</h1>")} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	fs := http.FileServer(http.Dir(dir))
	// FileServer answers If-None-Match only when an ETag is set; set one the
	// way applications do, in a wrapping handler.
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/small.txt" {
			w.Header().Set("ETag", `"v1"`)
		}
		fs.ServeHTTP(w, r)
	})
	lastMod := mtime.Format(http.TimeFormat)

	eachServer(t, func(t *testing.T, serve func(*testing.T, http.Handler) string) {
		base := serve(t, h)
		c := client(t)

		res := do(t, c, "GET", base+"/small.txt", "")
		res.expect(t, 200, small)
		res.expectHeader(t, "Content-Type", "text/plain; charset=utf-8")
		res.expectHeader(t, "Content-Length", "36")
		res.expectHeader(t, "Last-Modified", lastMod)
		res.expectHeader(t, "Accept-Ranges", "bytes")

		res = do(t, c, "HEAD", base+"/small.txt", "")
		res.expect(t, 200, "")
		res.expectHeader(t, "Content-Length", "36")

		res = do(t, c, "GET", base+"/big.bin", "")
		if res.status != 200 || sha256.Sum256([]byte(res.body)) != sha256.Sum256(big) {
			t.Errorf("big file: %d, %d bytes, want 200 and %d identical bytes", res.status, len(res.body), len(big))
		}
		res.expectHeader(t, "Content-Length", "1310720")

		// Range requests.
		res = do(t, c, "GET", base+"/small.txt", "", "Range", "bytes=10-15")
		res.expect(t, 206, "abcdef")
		res.expectHeader(t, "Content-Range", "bytes 10-15/36")
		res = do(t, c, "GET", base+"/big.bin", "", "Range", "bytes=-16")
		res.expect(t, 206, "riptide-filesrv-")
		res = do(t, c, "GET", base+"/small.txt", "", "Range", "bytes=100-200")
		if res.status != 416 {
			t.Errorf("unsatisfiable range: %d, want 416", res.status)
		}
		res = do(t, c, "GET", base+"/small.txt", "", "Range", "bytes=0-1,30-35")
		if res.status != 206 {
			t.Fatalf("multi-range: %d", res.status)
		}
		mt, params, err := mime.ParseMediaType(res.header.Get("Content-Type"))
		if err != nil || mt != "multipart/byteranges" {
			t.Fatalf("multi-range Content-Type %q", res.header.Get("Content-Type"))
		}
		mr := multipart.NewReader(strings.NewReader(res.body), params["boundary"])
		var parts []string
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(p)
			parts = append(parts, p.Header.Get("Content-Range")+"="+string(b))
		}
		if got := strings.Join(parts, ";"); got != "bytes 0-1/36=01;bytes 30-35/36=uvwxyz" {
			t.Errorf("multi-range parts: %q", got)
		}

		// Conditional requests.
		do(t, c, "GET", base+"/small.txt", "", "If-None-Match", `"v1"`).expect(t, 304, "")
		do(t, c, "GET", base+"/small.txt", "", "If-None-Match", `"v2"`).expect(t, 200, small)
		do(t, c, "GET", base+"/big.bin", "", "If-Modified-Since", lastMod).expect(t, 304, "")
		old := mtime.Add(-time.Hour).Format(http.TimeFormat)
		res = do(t, c, "GET", base+"/small.txt", "", "If-Modified-Since", old)
		res.expect(t, 200, small)
		do(t, c, "GET", base+"/small.txt", "", "Range", "bytes=0-3", "If-Range", `"v1"`).expect(t, 206, "0123")
		do(t, c, "GET", base+"/small.txt", "", "Range", "bytes=0-3", "If-Range", `"v0"`).expect(t, 200, small)

		// Directories: redirect to the slash form, then serve index.html.
		nr := &http.Client{Transport: c.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res = do(t, nr, "GET", base+"/sub", "")
		if res.status != 301 || res.header.Get("Location") != "sub/" {
			t.Errorf("directory redirect: %d Location %q", res.status, res.header.Get("Location"))
		}
		do(t, c, "GET", base+"/sub/", "").expect(t, 200, "<h1>index</h1>")
		res = do(t, c, "GET", base+"/", "")
		if res.status != 200 || !strings.Contains(res.body, `<a href="small.txt">small.txt</a>`) {
			t.Errorf("listing: %d %q", res.status, res.body)
		}
		do(t, c, "GET", base+"/missing", "").expect(t, 404, "404 page not found\n")
	})
}
