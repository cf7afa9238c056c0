package static

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

func TestIndexListingAndRedirects(t *testing.T) {
	dir := tree(t, map[string]string{
		"index.html":     "<p>home</p>",
		"docs/index.htm": "no",
		"docs/a.txt":     "a",
		"docs/b <&>.txt": "b",
		"docs/.hidden":   "h",
		"plain/x.txt":    "x",
	})
	addr := serveDir(t, dir, Options{})
	for _, tc := range []struct{ target, want string }{
		{"/", "200 <p>home</p>"},
		{"/index.html", "200 <p>home</p>"},
		{"/docs/", "404 "},        // no index.html, no listing by default
		{"/docs", "301 "},         // a directory needs its slash
		{"/docs?q=1", "301 "},     // query kept
		{"/plain/x.txt/", "404 "}, // a file is not a directory
		{"/missing", "404 "},
	} {
		res, body := get(t, addr, "GET", tc.target)
		got := res.Status[:3] + " " + body
		if tc.want[:3] == "404" {
			got = got[:4]
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.target, got, tc.want)
		}
	}
	if res, _ := get(t, addr, "GET", "/docs?q=1"); res.Header.Get("Location") != "/docs/?q=1" {
		t.Errorf("redirect to %q", res.Header.Get("Location"))
	}
	browse := serveDir(t, dir, Options{Browse: true, Index: "index.htm"})
	res, body := get(t, browse, "GET", "/plain/")
	if res.StatusCode != 200 || !strings.Contains(body, `<a href="x.txt">x.txt</a>`) {
		t.Errorf("listing: %d %q", res.StatusCode, body)
	}
	if _, body := get(t, browse, "GET", "/docs/"); body != "no" {
		t.Errorf("Index option: %q", body)
	}
	res, body = get(t, serveDir(t, dir, Options{Browse: true, NoIndex: true}), "GET", "/docs/")
	if !strings.Contains(body, `b%20%3C&amp;%3E.txt">b &lt;&amp;&gt;.txt</a>`) || strings.Contains(body, "hidden") ||
		!strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Errorf("listing escapes names and hides dot files: %q", body)
	}
}

func TestMethodsAndHeaders(t *testing.T) {
	dir := tree(t, map[string]string{
		"app.js":         "console.log(1)",
		"img/logo":       "\x89PNG\r\n\x1a\n rest of a png",
		"assets/app.css": "body{}",
		"noext":          "<html><body>sniffed</body></html>",
	})
	addr := serveDir(t, dir, Options{CacheControl: []CacheRule{
		{Prefix: "assets/", Value: "public, max-age=31536000, immutable"},
		{Ext: ".js", Value: "no-cache"},
	}})
	for _, tc := range []struct{ target, ctype, cc string }{
		{"/app.js", "text/javascript; charset=utf-8", "no-cache"},
		{"/assets/app.css", "text/css; charset=utf-8", "public, max-age=31536000, immutable"},
		{"/img/logo", "image/png", ""},
		{"/noext", "text/html; charset=utf-8", ""},
	} {
		res, _ := get(t, addr, "GET", tc.target)
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != tc.ctype || res.Header.Get("Cache-Control") != tc.cc {
			t.Errorf("%s: %d %q %q, want %q %q", tc.target, res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Cache-Control"), tc.ctype, tc.cc)
		}
	}
	res, body := get(t, addr, "HEAD", "/app.js")
	if res.StatusCode != 200 || body != "" || res.ContentLength != 14 {
		t.Errorf("HEAD: %d %q %d", res.StatusCode, body, res.ContentLength)
	}
	res, _ = get(t, addr, "POST", "/app.js", "Content-Length", "0")
	if res.StatusCode != 405 || res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d Allow %q", res.StatusCode, res.Header.Get("Allow"))
	}
	pre := serveDir(t, dir, Options{StripPrefix: "/static"})
	for target, code := range map[string]int{"/static/app.js": 200, "/app.js": 404, "/staticapp.js": 404, "/static": 404} {
		if res, _ := get(t, pre, "GET", target); res.StatusCode != code {
			t.Errorf("StripPrefix %s: %d, want %d", target, res.StatusCode, code)
		}
	}
}

// Pre-compressed siblings: chosen by Accept-Encoding (q-values honoured,
// br before gzip), with the original's Content-Type, Vary and their own
// ETag; Range requests on them get the whole compressed file.
func TestPrecompressed(t *testing.T) {
	dir := tree(t, map[string]string{
		"app.js": "original", "app.js.br": "BROTLI", "app.js.gz": "GZIP",
		"only.css": "css", "only.css.gz": "GZ",
		"plain.txt": "plain",
	})
	addr := serveDir(t, dir, Options{Precompressed: true})
	var etags []string
	for _, tc := range []struct{ target, ae, body, enc string }{
		{"/app.js", "", "original", ""},
		{"/app.js", "gzip, deflate, br", "BROTLI", "br"},
		{"/app.js", "gzip", "GZIP", "gzip"},
		{"/app.js", "br;q=0, gzip;q=0.5", "GZIP", "gzip"},
		{"/app.js", "*", "BROTLI", "br"},
		{"/app.js", "identity", "original", ""},
		{"/only.css", "br, gzip", "GZ", "gzip"},
		{"/plain.txt", "br, gzip", "plain", ""},
	} {
		res, body := get(t, addr, "GET", tc.target, "Accept-Encoding", tc.ae)
		if body != tc.body || res.Header.Get("Content-Encoding") != tc.enc {
			t.Errorf("%s %q: %q %q, want %q %q", tc.target, tc.ae, body, res.Header.Get("Content-Encoding"), tc.body, tc.enc)
		}
		if tc.target == "/app.js" {
			etags = append(etags, res.Header.Get("ETag"))
			if res.Header.Get("Content-Type") != "text/javascript; charset=utf-8" || res.Header.Get("Vary") != "Accept-Encoding" {
				t.Errorf("%q: Content-Type %q Vary %q", tc.ae, res.Header.Get("Content-Type"), res.Header.Get("Vary"))
			}
		}
		if tc.target == "/plain.txt" && res.Header.Get("Vary") != "" {
			t.Errorf("Vary without siblings")
		}
	}
	if etags[0] == etags[1] || etags[1] == etags[2] || etags[0] == etags[2] {
		t.Errorf("representations share an ETag: %q", etags)
	}
	res, body := get(t, addr, "GET", "/app.js", "Accept-Encoding", "br", "Range", "bytes=0-1")
	if res.StatusCode != 200 || body != "BROTLI" || res.Header.Get("Accept-Ranges") != "" {
		t.Errorf("Range on br: %d %q", res.StatusCode, body)
	}
	res, _ = get(t, addr, "GET", "/app.js", "Accept-Encoding", "br", "If-None-Match", etags[1])
	if res.StatusCode != 304 {
		t.Errorf("If-None-Match on br: %d", res.StatusCode)
	}
}

// A file changed on disk is served anew once Recheck has passed.
func TestChangedFile(t *testing.T) {
	dir := tree(t, map[string]string{"f.txt": "one"})
	addr := serveDir(t, dir, Options{Recheck: -1})
	if _, body := get(t, addr, "GET", "/f.txt"); body != "one" {
		t.Fatalf("%q", body)
	}
	p := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(p+".new", []byte("second"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p+".new", time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	if err := os.Rename(p+".new", p); err != nil {
		t.Fatal(err)
	}
	if _, body := get(t, addr, "GET", "/f.txt"); body != "second" {
		t.Fatalf("after the change: %q", body)
	}
	os.Remove(p)
	if res, _ := get(t, addr, "GET", "/f.txt"); res.StatusCode != 404 {
		t.Fatalf("after removal: %d", res.StatusCode)
	}
}

// TestErrorHandlerShapesErrors (examples finding 2): the Handler's error
// answers go through Ctx.Error, so Server.ErrorHandler shapes them (a JSON
// API's 404), keeping the fields that belong to them (Allow,
// Content-Range); without one they are http.Error's plain text.
func TestErrorHandlerShapesErrors(t *testing.T) {
	dir := tree(t, map[string]string{"f.txt": "0123456789"})
	h, err := New(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &riptide.Server{Handler: h, ErrorHandler: func(c *riptide.Ctx, code int, msg string) {
		c.SetContentType("application/json")
		c.SetStatus(code)
		c.WriteString(`{"status":` + strconv.Itoa(code) + `,"error":"` + msg + `"}`)
	}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	shaped, plain := ln.Addr().String(), serveDir(t, dir, Options{})
	for _, tc := range []struct {
		rule, method, target string
		hdr                  []string
		code                 int
		field, value         string // a header field the answer keeps
		json, text           string
	}{
		{"missing file", "GET", "/missing", nil, 404, "", "",
			`{"status":404,"error":"404 page not found"}`, "404 page not found\n"},
		{"refused path", "GET", "/.hidden", nil, 404, "", "",
			`{"status":404,"error":"404 page not found"}`, "404 page not found\n"},
		{"method", "POST", "/f.txt", []string{"Content-Length", "0"}, 405, "Allow", "GET, HEAD",
			`{"status":405,"error":"405 method not allowed"}`, "405 method not allowed\n"},
		{"unsatisfiable range", "GET", "/f.txt", []string{"Range", "bytes=50-60"}, 416, "Content-Range", "bytes */10",
			`{"status":416,"error":"416 requested range not satisfiable"}`, "416 requested range not satisfiable\n"},
	} {
		res, body := get(t, shaped, tc.method, tc.target, tc.hdr...)
		if res.StatusCode != tc.code || body != tc.json || res.Header.Get("Content-Type") != "application/json" ||
			res.Header.Get(tc.field) != tc.value {
			t.Errorf("%s, with ErrorHandler: %d %q %q %s %q, want %d %q application/json %q",
				tc.rule, res.StatusCode, body, res.Header.Get("Content-Type"), tc.field, res.Header.Get(tc.field), tc.code, tc.json, tc.value)
		}
		res, body = get(t, plain, tc.method, tc.target, tc.hdr...)
		if res.StatusCode != tc.code || body != tc.text || res.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
			res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get(tc.field) != tc.value {
			t.Errorf("%s, plain: %d %q %q nosniff %q %s %q, want %d %q", tc.rule, res.StatusCode, body,
				res.Header.Get("Content-Type"), res.Header.Get("X-Content-Type-Options"), tc.field, res.Header.Get(tc.field), tc.code, tc.text)
		}
	}
	// What is served stays served.
	if res, body := get(t, shaped, "GET", "/f.txt"); res.StatusCode != 200 || body != "0123456789" {
		t.Errorf("file with ErrorHandler: %d %q", res.StatusCode, body)
	}
}
