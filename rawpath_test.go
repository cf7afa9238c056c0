package riptide_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// rawUTF8Path is a request path with raw UTF-8 bytes, as curl and browsers'
// address bars may send them unencoded.
const rawUTF8Path = "/h/caf\xc3\xa9"

// compatPathReport is what a compat handler reports of the request's path.
func compatPathReport(w http.ResponseWriter, r *http.Request) {
	io.WriteString(w, r.RequestURI+" "+r.URL.Path+" "+r.URL.RawPath+" "+r.URL.EscapedPath())
}

// TestRawUTF8PathServedOnEveryProtocol: a request-target with raw bytes
// >= 0x80 (GET /h/café, unencoded) reaches the handler on HTTP/1.1 and
// HTTP/2 (h2c), through both doors, as net/http serves it (one rule for all
// three protocols: h1's target table, which HTTP/2's and HTTP/3's request
// checks share; HTTP/3 is tested in the http3 module). Before, HTTP/1.1 got
// a canned 400 and HTTP/2 RST_STREAM(PROTOCOL_ERROR). The compat door's
// *http.Request reads as net/http's does.
func TestRawUTF8PathServedOnEveryProtocol(t *testing.T) {
	t.Parallel()
	// net/http over HTTP/1.1 is the reference for the compat door.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ref := &http.Server{Handler: http.HandlerFunc(compatPathReport)}
	go ref.Serve(ln)
	t.Cleanup(func() { ref.Close() })
	wantCompat := rawGetBody(t, ln.Addr().String(), rawUTF8Path)
	if !strings.HasPrefix(wantCompat, rawUTF8Path+" ") {
		t.Fatalf("net/http reports %q", wantCompat)
	}

	for _, door := range []string{"native", "compat"} {
		var h riptide.Handler = riptide.HandlerFunc(func(c *riptide.Ctx) { c.Write(c.Path()) })
		want := rawUTF8Path
		if door == "compat" {
			h, want = riptide.FromHTTP(http.HandlerFunc(compatPathReport)), wantCompat
		}
		ls := startLive(t, &riptide.Server{Handler: h, HTTP2: &riptide.HTTP2Config{H2C: true}})
		if got := rawGetBody(t, ls.addr, rawUTF8Path); got != want {
			t.Errorf("%s HTTP/1.1: got %q, want %q", door, got, want)
		}
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		tr := &http.Transport{Protocols: &p}
		t.Cleanup(tr.CloseIdleConnections)
		req, _ := http.NewRequest("GET", "http://"+ls.addr+"/", nil)
		req.URL.Opaque = rawUTF8Path // sent as it is
		resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("%s h2c: %v", door, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor != 2 || resp.StatusCode != 200 || string(b) != want {
			t.Errorf("%s h2c: HTTP/%d %d %q, want 200 %q", door, resp.ProtoMajor, resp.StatusCode, b, want)
		}
	}
}

// TestTargetInvalidUTF8AndControlBytesStillRefused: the rule for raw bytes
// >= 0x80 takes only valid UTF-8 (an overlong "\xc0\xaf" is a '/' to a
// lenient decoder: Http11Probe's MAL-URL-OVERLONG-UTF8) and lets no
// control byte or DEL into a target: HTTP/1.1 still answers 400.
func TestTargetInvalidUTF8AndControlBytesStillRefused(t *testing.T) {
	t.Parallel()
	ls := startLive(t, &riptide.Server{Handler: riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString("ok") })})
	for _, target := range []string{"/a\x7fb", "/a\x01b", "/a\x00b", "/caf\xc3\xa9\x7f", "/\xc0\xaf", "/caf\xc3", "/\xff"} {
		got := rawAnswer(t, ls.addr, "GET "+target+" HTTP/1.1\r\nHost: a\r\n\r\n")
		if !strings.HasPrefix(string(got), "HTTP/1.1 400 ") {
			t.Errorf("%q: got %q, want 400", target, got)
		}
	}
}

// rawGetBody sends GET target over HTTP/1.1 as raw bytes and returns the
// body of a 200.
func rawGetBody(t *testing.T, addr, target string) string {
	t.Helper()
	nc := dialSend(t, addr, "GET "+target+" HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
	defer nc.Close()
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %q: %d %q", target, resp.StatusCode, b)
	}
	return string(b)
}
