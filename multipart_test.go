package riptide

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestMultipartReader: a real multipart/form-data upload (fields and a
// 3 MiB file, larger than any connection buffer) from net/http's client,
// over HTTP/1.1 and h2c, streams through Ctx.MultipartReader part by
// part; a wrong Content-Type or a missing boundary get net/http's errors,
// and SetBodyLimit bounds the upload with ErrBodyTooLarge (413).
func TestMultipartReader(t *testing.T) {
	file := bytes.Repeat([]byte("riptide multipart "), 3<<20/18)
	h := func(c *Ctx) {
		if c.QueryArgString("limit") != "" {
			c.SetBodyLimit(1000)
		}
		mr, err := c.MultipartReader()
		if err != nil {
			c.Error(400, err.Error())
			return
		}
		// Written at the end: a limit met in any part (HTTP/1.1 refuses
		// a declared length at the first read, HTTP/2 where the data
		// passes it) still gets its 413.
		var out strings.Builder
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				c.WriteString(out.String())
				return
			}
			if err == nil {
				sum := sha256.New()
				var n int64
				if n, err = io.Copy(sum, p); err == nil {
					fmt.Fprintf(&out, "%s %q %d %x\n", p.FormName(), p.FileName(), n, sum.Sum(nil)[:4])
					continue
				}
			}
			c.Error(413, fmt.Sprintf("too large=%v", errors.Is(err, ErrBodyTooLarge)))
			return
		}
	}
	upload := func(file []byte) (*bytes.Buffer, string) {
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		w.WriteField("title", "holiday")
		fw, _ := w.CreateFormFile("photo", "beach.jpg")
		fw.Write(file)
		w.WriteField("tag", "sea")
		w.Close()
		return &body, w.FormDataContentType()
	}
	sum := func(b []byte) string { s := sha256.Sum256(b); return fmt.Sprintf("%x", s[:4]) }
	want := fmt.Sprintf("title \"\" 7 %s\nphoto \"beach.jpg\" %d %s\ntag \"\" 3 %s\n", sum([]byte("holiday")), len(file), sum(file), sum([]byte("sea")))

	for _, proto := range []string{"HTTP/1.1", "HTTP/2.0"} {
		t.Run(proto, func(t *testing.T) {
			srv := &Server{}
			client := &http.Client{Timeout: 20 * time.Second}
			if proto == "HTTP/2.0" {
				srv.HTTP2 = &HTTP2Config{H2C: true}
				client = h2cTestClient(t)
			}
			_, addr := startServer(t, srv, h)
			post := func(path, ctype string, body io.Reader) (int, string) {
				t.Helper()
				res, err := client.Post("http://"+addr+path, ctype, body)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				if res.Proto != proto {
					t.Errorf("%s over %s, want %s", path, res.Proto, proto)
				}
				return res.StatusCode, string(b)
			}
			body, ctype := upload(file)
			if code, got := post("/", ctype, body); code != 200 || got != want {
				t.Errorf("upload: %d %q, want 200 %q", code, got, want)
			}
			// Past a limit of 1000 bytes; small enough that the server has
			// read all of it when it answers, so that closing the
			// connection after the 413 does not reset it under the client.
			body, ctype = upload(file[:2000])
			if code, got := post("/?limit=1", ctype, body); code != 413 || got != "too large=true\n" {
				t.Errorf("upload past SetBodyLimit: %d %q, want 413 from ErrBodyTooLarge", code, got)
			}
			for _, tc := range []struct{ ctype, want string }{
				{"application/json", http.ErrNotMultipart.Error()},
				{"text/plain; boundary=x", http.ErrNotMultipart.Error()},
				{"multipart/form-data", http.ErrMissingBoundary.Error()},
			} {
				if code, got := post("/", tc.ctype, strings.NewReader("{}")); code != 400 || got != tc.want+"\n" {
					t.Errorf("Content-Type %q: %d %q, want 400 %q", tc.ctype, code, got, tc.want)
				}
			}
		})
	}
}
