package http3

import (
	"io"
	"net/http"
	"testing"

	"github.com/riptide-http/riptide"
)

// TestRawUTF8PathServedOverHTTP3: a :path with raw bytes >= 0x80
// (/h/café, unencoded) reaches the handler through both doors, as quic-go's
// own server serves it and as riptide serves it over HTTP/1.1 and HTTP/2
// (the same rule: h1's target table, which h3.RequestHead.Build checks
// with). It was answered with an empty 400.
func TestRawUTF8PathServedOverHTTP3(t *testing.T) {
	const path = "/h/caf\xc3\xa9"
	for _, door := range []string{"native", "compat"} {
		srv := &riptide.Server{Handler: riptide.HandlerFunc(func(c *riptide.Ctx) { c.Write(c.Path()) })}
		want := path
		if door == "compat" {
			srv.Handler = riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, r.RequestURI+" "+r.URL.Path)
			}))
			want = path + " " + path
		}
		addr, _ := startServe(t, srv, nil)
		req, _ := http.NewRequest("GET", "https://"+addr+"/", nil)
		req.URL.Opaque = path // sent as it is
		resp, err := h3Client(t).Do(req)
		if err != nil {
			t.Fatalf("%s: %v", door, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 3 || resp.StatusCode != 200 || string(b) != want {
			t.Errorf("%s: HTTP/%d %d %q, want 200 %q", door, resp.ProtoMajor, resp.StatusCode, b, want)
		}
	}
}
