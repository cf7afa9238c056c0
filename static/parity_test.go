package static

import (
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveContentBaseline serves dir/name with net/http's http.ServeContent,
// given the ETag the Handler would send, over a real listener.
func serveContentBaseline(t *testing.T, path string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(path)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		fi, _ := f.Stat()
		w.Header().Set("ETag", weakETag(fi))
		http.ServeContent(w, r, filepath.Base(path), fi.ModTime(), f)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// parts reads a multipart/byteranges body into "Content-Range\nbytes"
// strings.
func parts(t *testing.T, ctype, body string) []string {
	_, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		t.Fatalf("Content-Type %q: %v", ctype, err)
	}
	mr := multipart.NewReader(strings.NewReader(body), params["boundary"])
	var out []string
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("multipart: %v", err)
		}
		b, _ := io.ReadAll(p)
		out = append(out, p.Header.Get("Content-Range")+" "+p.Header.Get("Content-Type")+"\n"+string(b))
	}
}

// Range, multi-range and conditional requests get the answer net/http's
// http.ServeContent gives for the same file and ETag: status, the headers
// that describe the body, and the body (multipart bodies compared part by
// part, since the boundaries differ).
func TestServeContentParity(t *testing.T) {
	content := strings.Repeat("0123456789", 1000) // 10000 bytes
	dir := tree(t, map[string]string{"data.txt": content})
	path := filepath.Join(dir, "data.txt")
	fi, _ := os.Stat(path)
	etag := weakETag(fi)
	lm := fi.ModTime().UTC().Format(http.TimeFormat)
	before := fi.ModTime().Add(-time.Hour).UTC().Format(http.TimeFormat)
	after := fi.ModTime().Add(time.Hour).UTC().Format(http.TimeFormat)
	theirs := serveContentBaseline(t, path)
	for _, e := range engines {
		t.Run(e.String(), func(t *testing.T) { parity(t, serveDirOn(t, e, dir, Options{}), theirs, etag, lm, before, after) })
	}
}

func parity(t *testing.T, ours, theirs, etag, lm, before, after string) {
	for _, tc := range []struct {
		rule string
		hdr  []string
		// ours, when set, is the status expected where net/http differs.
		ours int
	}{
		{"plain GET", nil, 0},
		{"single range", []string{"Range", "bytes=0-99"}, 0},
		{"open-ended range", []string{"Range", "bytes=9990-"}, 0},
		{"suffix range", []string{"Range", "bytes=-25"}, 0},
		{"suffix longer than the file", []string{"Range", "bytes=-20000"}, 0},
		{"range past the end is clipped", []string{"Range", "bytes=9000-20000"}, 0},
		{"two ranges: multipart/byteranges", []string{"Range", "bytes=0-9,100-199"}, 0},
		{"three ranges with spaces", []string{"Range", "bytes= 0-0 , 5-7, -3"}, 0},
		{"ranges adding up past the size: whole file", []string{"Range", "bytes=0-9999,0-9999"}, 0},
		{"unsatisfiable: start past the end", []string{"Range", "bytes=10000-"}, 0},
		{"malformed: no dash", []string{"Range", "bytes=5"}, 0},
		{"malformed: last before first", []string{"Range", "bytes=9-5"}, 0},
		{"RFC 9110 §14.2: an unknown range unit is ignored (net/http: 416)", []string{"Range", "items=0-5"}, 200},
		{"empty range set: whole file", []string{"Range", "bytes="}, 0},
		{"one unsatisfiable among satisfiable ones", []string{"Range", "bytes=20000-,0-4"}, 0},
		{"If-None-Match matching: 304", []string{"If-None-Match", etag}, 0},
		{"If-None-Match weak comparison", []string{"If-None-Match", strings.TrimPrefix(etag, "W/")}, 0},
		{"If-None-Match list", []string{"If-None-Match", `"x", ` + etag}, 0},
		{"If-None-Match star", []string{"If-None-Match", "*"}, 0},
		{"If-None-Match other: 200", []string{"If-None-Match", `"other"`}, 0},
		{"If-Modified-Since equal: 304", []string{"If-Modified-Since", lm}, 0},
		{"If-Modified-Since later: 304", []string{"If-Modified-Since", after}, 0},
		{"If-Modified-Since earlier: 200", []string{"If-Modified-Since", before}, 0},
		{"If-None-Match wins over If-Modified-Since", []string{"If-None-Match", `"other"`, "If-Modified-Since", after}, 0},
		{"If-Match weak tag never matches: 412", []string{"If-Match", etag}, 0},
		{"If-Match star", []string{"If-Match", "*"}, 0},
		{"If-Match other: 412", []string{"If-Match", `"other"`}, 0},
		{"If-Unmodified-Since earlier: 412", []string{"If-Unmodified-Since", before}, 0},
		{"If-Unmodified-Since later: 200", []string{"If-Unmodified-Since", after}, 0},
		{"If-Range date matching: 206", []string{"Range", "bytes=0-4", "If-Range", lm}, 0},
		{"If-Range date older: 200", []string{"Range", "bytes=0-4", "If-Range", before}, 0},
		{"If-Range weak ETag: 200", []string{"Range", "bytes=0-4", "If-Range", etag}, 0},
		{"Range with If-None-Match matching: 304", []string{"Range", "bytes=0-4", "If-None-Match", etag}, 0},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			for _, method := range []string{"GET", "HEAD"} {
				r1, b1 := get(t, ours, method, "/data.txt", tc.hdr...)
				r2, b2 := get(t, theirs, method, "/data.txt", tc.hdr...)
				if tc.ours != 0 {
					if r1.StatusCode != tc.ours || r2.StatusCode == tc.ours {
						t.Fatalf("%s: status %d (want %d), net/http %d", method, r1.StatusCode, tc.ours, r2.StatusCode)
					}
					continue
				}
				if r1.StatusCode != r2.StatusCode {
					t.Fatalf("%s: status %d, net/http %d", method, r1.StatusCode, r2.StatusCode)
				}
				for _, k := range []string{"Content-Range", "Content-Length", "Last-Modified", "ETag", "Accept-Ranges"} {
					if k == "Content-Length" && strings.HasPrefix(r2.Header.Get("Content-Type"), "multipart/") {
						continue // depends on the boundary's length
					}
					if k == "Content-Length" && r1.StatusCode == 416 {
						continue
					}
					if v1, v2 := r1.Header.Get(k), r2.Header.Get(k); v1 != v2 {
						t.Errorf("%s: %s %q, net/http %q", method, k, v1, v2)
					}
				}
				ct1, ct2 := r1.Header.Get("Content-Type"), r2.Header.Get("Content-Type")
				if r1.StatusCode == 416 || r1.StatusCode == 304 || r1.StatusCode == 412 {
					continue // bodies are free text; no body for 304
				}
				if strings.HasPrefix(ct2, "multipart/byteranges") {
					if method == "HEAD" {
						continue
					}
					p1, p2 := parts(t, ct1, b1), parts(t, ct2, b2)
					if strings.Join(p1, "|") != strings.Join(p2, "|") {
						t.Errorf("parts %q, net/http %q", p1, p2)
					}
					if r1.ContentLength != int64(len(b1)) {
						t.Errorf("multipart Content-Length %d, body %d bytes", r1.ContentLength, len(b1))
					}
					continue
				}
				if ct1 != ct2 || b1 != b2 {
					t.Errorf("%s: %q, %d bytes; net/http %q, %d bytes", method, ct1, len(b1), ct2, len(b2))
				}
			}
		})
	}
}
