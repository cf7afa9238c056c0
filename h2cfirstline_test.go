package riptide_test

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/riptide-http/riptide"
)

// firstLineEngines are the engines a connection's first bytes are read on.
var firstLineEngines = []struct {
	name   string
	engine riptide.Engine
}{{"goroutine", riptide.EngineGoroutine}, {"eventloop", riptide.EngineEventLoop}}

// dialSend opens a connection to addr, with a deadline bounding the test,
// and sends in; the caller closes it.
func dialSend(t *testing.T, addr, in string) *net.TCPConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(nc, in); err != nil {
		nc.Close()
		t.Fatal(err)
	}
	return nc.(*net.TCPConn)
}

// rawAnswer sends in on a fresh connection to addr, half-closes, and
// returns everything the server sent before it closed.
func rawAnswer(t *testing.T, addr, in string) []byte {
	t.Helper()
	nc := dialSend(t, addr, in)
	defer nc.Close()
	nc.CloseWrite()
	b, err := io.ReadAll(nc)
	if err != nil {
		t.Fatalf("%q: %v after %q", in, err, b)
	}
	return b
}

// TestH2CFirstLineNotHTTP1AnsweredAsHTTP1: with h2c on, a cleartext first
// line that is not an HTTP/1.x request line but names HTTP, and can no
// longer become the HTTP/2 preface, gets the answer HTTP/1.1 gives it with
// h2c off (RFC 9112
// §2.2, §3: 400 for a bare CR or a malformed version, RFC 9110 §15.6.6: 505
// for an unsupported one), not a silent close.
func TestH2CFirstLineNotHTTP1AnsweredAsHTTP1(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, status string }{
		{"GET / HTTP/1.1\rHost: a\r\n\r\n", "400"}, // Http11Probe RFC9112-3-CR-ONLY-LINE-ENDING
		{"GET / HTTP/9.9\r\nHost: a\r\n\r\n", "505"},
		{"GET / HTTP/1\r\nHost: a\r\n\r\n", "400"},
		{"GET / HTTP/01.01\r\nHost: a\r\n\r\n", "400"},
		{"GET / HTTP/ 1.1\r\nHost: a\r\n\r\n", "400"},
		{"GET / http/1.1\r\nHost: a\r\n\r\n", "400"},
		{"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n", "505"}, // left the preface at its 20th byte
	}
	for _, e := range firstLineEngines {
		for _, h2c := range []bool{false, true} {
			srv := &riptide.Server{Engine: e.engine, Handler: riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString("ok") })}
			if h2c {
				srv.HTTP2 = &riptide.HTTP2Config{H2C: true}
			}
			ls := startLive(t, srv)
			for _, tc := range cases {
				got := rawAnswer(t, ls.addr, tc.in)
				if want := "HTTP/1.1 " + tc.status + " "; !bytes.HasPrefix(got, []byte(want)) {
					t.Errorf("%s h2c=%v: %q got %q, want %q...", e.name, h2c, tc.in, got, want)
				}
			}
		}
	}
}

// TestH2CPrefacePrefixOrNonHTTPClosedSilently: with h2c on, a connection
// whose bytes are still a prefix of the HTTP/2 preface when the client
// stops, or whose first line names no HTTP at all (h2spec 3.5's invalid
// preface), is closed without an answer: it may be an HTTP/2 client, to
// which an HTTP/1.1 answer would be gibberish (RFC 9113 §3.4).
func TestH2CPrefacePrefixOrNonHTTPClosedSilently(t *testing.T) {
	t.Parallel()
	for _, e := range firstLineEngines {
		srv := &riptide.Server{Engine: e.engine, HTTP2: &riptide.HTTP2Config{H2C: true},
			Handler: riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString("ok") })}
		ls := startLive(t, srv)
		for _, in := range []string{"P", "PRI * HTTP/2.0\r\n", "PRI * HTTP/2.0\r\n\r\nSM\r\n", "INVALID CONNECTION PREFACE\r\n\r\n"} {
			if got := rawAnswer(t, ls.addr, in); len(got) != 0 {
				t.Errorf("%s: %q got %q, want a close without an answer", e.name, in, got)
			}
		}
	}
}

// TestH2PriorKnowledgeWithoutH2CRefusedWithGoAway: an HTTP/2 client with
// prior knowledge (h2c) at a server without h2c is told why, in frames it
// can read: SETTINGS, then GOAWAY HTTP_1_1_REQUIRED (RFC 9113 §7) with the
// reason as debug data, then a close; the preface's request line is only
// taken for one once the head it forms ends ("PRI * HTTP/2.0\r\n\r\n"). It used to get an HTTP/1.1 505 its
// HTTP/2 framing cannot read, which clients report as an empty reply.
func TestH2PriorKnowledgeWithoutH2CRefusedWithGoAway(t *testing.T) {
	t.Parallel()
	for _, e := range firstLineEngines {
		srv := &riptide.Server{Engine: e.engine, Handler: riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString("ok") })}
		ls := startLive(t, srv)
		// The preface alone, with SETTINGS, and only up to the end of the
		// head an HTTP/1.1 parser sees in it.
		for _, in := range []string{http2.ClientPreface, http2.ClientPreface + "\x00\x00\x00\x04\x00\x00\x00\x00\x00", "PRI * HTTP/2.0\r\n\r\n"} {
			got := rawAnswer(t, ls.addr, in)
			fr := http2.NewFramer(io.Discard, bytes.NewReader(got))
			f, err := fr.ReadFrame()
			if sf, ok := f.(*http2.SettingsFrame); err != nil || !ok || sf.IsAck() {
				t.Fatalf("%s %q: first frame %v %v, want SETTINGS (answer %q)", e.name, in, f, err, got)
			}
			f, err = fr.ReadFrame()
			ga, ok := f.(*http2.GoAwayFrame)
			if err != nil || !ok || ga.ErrCode != http2.ErrCodeHTTP11Required || ga.LastStreamID != 0 ||
				!strings.Contains(string(ga.DebugData()), "h2c") {
				t.Fatalf("%s %q: second frame %v %v, want GOAWAY HTTP_1_1_REQUIRED naming h2c (answer %q)", e.name, in, f, err, got)
			}
			if _, err := fr.ReadFrame(); err != io.EOF {
				t.Fatalf("%s %q: after GOAWAY %v, want the end", e.name, in, err)
			}
		}
		// An HTTP/1.x request line still gets HTTP/1.1.
		if got := rawAnswer(t, ls.addr, "GET / HTTP/2.0\r\nHost: a\r\n\r\n"); !bytes.HasPrefix(got, []byte("HTTP/1.1 505 ")) {
			t.Fatalf("%s: GET / HTTP/2.0 got %q, want the canned 505", e.name, got)
		}
	}
}
