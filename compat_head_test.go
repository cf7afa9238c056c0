package riptide

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/riptide-http/riptide/h1"
)

// compactHead keeps only the pieces of the head a Request refers to, and
// every piece maps back to the bytes it came from.
func TestCompatCompactHead(t *testing.T) {
	const raw = "PROPFIND /dav/a%20b?depth=1 HTTP/1.1\r\n" +
		"Host: example.com:8080\r\n" +
		"Content-Type: application/json\r\n" +
		"X-Custom-Thing: one\r\n" +
		"X-Custom-Thing: two\r\n" +
		"\r\n"
	buf := []byte(raw)
	var hr h1.Request
	if _, err := hr.Parse(buf, nil); err != nil {
		t.Fatal(err)
	}
	var st compatState
	h := st.compactHead(&hr, buf)
	kept := []string{"PROPFIND", "/dav/a%20b?depth=1", "example.com:8080", "application/json",
		"X-Custom-Thing", "one", "X-Custom-Thing", "two"}
	if want := strings.Join(kept, ""); h.s != want {
		t.Errorf("compact head %q, want %q", h.s, want)
	}
	for _, f := range hr.Headers {
		if f.Key == h1.Unknown {
			if got := h.of(f.Name); got != string(f.Name) {
				t.Errorf("name %q maps to %q", f.Name, got)
			}
		}
		if got := h.of(f.Value); got != string(f.Value) {
			t.Errorf("value %q maps to %q", f.Value, got)
		}
	}
	for _, b := range [][]byte{hr.Method, hr.Target, hr.Path, hr.Query, hr.Host, buf[len("PROPFIND /dav/a%20b?depth=1 "):][:len("HTTP/1.1")]} {
		if got := h.of(b); got != string(b) {
			t.Errorf("%q maps to %q", b, got)
		}
	}
	// A second request on the same state reuses the segment table.
	h2 := st.compactHead(&hr, buf)
	if h2.s != h.s {
		t.Errorf("second compact head %q, want %q", h2.s, h.s)
	}
}

// Through the compat door, every string of a request whose head is kept
// compact (an unknown method, an unknown repeated field, a query, a host
// with a port) reads as net/http would give it.
func TestCompatCompactHeadRequest(t *testing.T) {
	got := make(chan *http.Request, 1)
	addr := serveCompat(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		io.WriteString(w, "ok")
	}))
	nc, br := dialRaw(t, addr)
	for _, m := range []string{"PROPFIND", "GET"} {
		io.WriteString(nc, m+" /p/q?x=1&y=2 HTTP/1.1\r\nHost: example.com:8080\r\nUser-Agent: t/1\r\n"+
			"X-Custom-Thing: one\r\nAccept: */*\r\nX-Custom-Thing: two\r\nPragma: no-cache\r\n\r\n")
		readResponse(t, br)
		r := <-got
		if r.Method != m || r.RequestURI != "/p/q?x=1&y=2" || r.URL.Path != "/p/q" || r.URL.RawQuery != "x=1&y=2" ||
			r.Host != "example.com:8080" {
			t.Errorf("%s: request line/host: %q %q %q %q %q", m, r.Method, r.RequestURI, r.URL.Path, r.URL.RawQuery, r.Host)
		}
		if v := r.Header["X-Custom-Thing"]; len(v) != 2 || v[0] != "one" || v[1] != "two" {
			t.Errorf("%s: X-Custom-Thing %q", m, v)
		}
		if r.Header.Get("User-Agent") != "t/1" || r.Header.Get("Accept") != "*/*" || r.Header.Get("Pragma") != "no-cache" ||
			r.Header.Get("Cache-Control") != "no-cache" || len(r.Header) != 5 {
			t.Errorf("%s: header %v", m, r.Header)
		}
	}
}
