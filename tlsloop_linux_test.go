package riptide_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// segConn is a client's TCP connection that, while split is set, sends
// each Write (crypto/tls writes a record per call) in segments of seg
// bytes, one write(2) each (TCP_NODELAY is on), calling at(k) before the
// k-th segment it sends (counted across writes) so that a test can act
// between segments.
type segConn struct {
	net.Conn
	split bool
	seg   int
	k     int
	at    func(k int)
}

func (c *segConn) Write(p []byte) (int, error) {
	if !c.split {
		return c.Conn.Write(p)
	}
	done := 0
	for ; done < len(p); c.k++ {
		c.at(c.k)
		n, err := c.Conn.Write(p[done:min(done+c.seg, len(p))])
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// waitTLSParked waits until no goroutine runs the server's connection
// code (a riptide.(*conn) frame: the goroutine engine's connection
// goroutine, an event-loop worker serving one): the one connection the
// test writes to is parked, held by its loop only with whatever crypto/tls
// read of a record. It fails the test after 10 s.
func waitTLSParked(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		n := runtime.Stack(buf, true)
		if !bytes.Contains(buf[:n], []byte("riptide.(*conn).")) {
			return
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("a goroutine still serves the TLS connection after 10s:\n%s", buf[:n])
		}
	}
}

// TestTLSLoopSplitRecord serves HTTP/1.1 over TLS on the event loop
// (TLSEngine) to a client whose TLS records arrive split across many TCP
// segments: one byte each for a whole request (the record header too), and
// 1000-byte segments for a head of several records and a body. Between segments, in
// the middle of a record, the test waits until the connection is parked
// (no worker serves it); each request is then answered intact, and the
// connection stays usable for a request sent whole.
func TestTLSLoopSplitRecord(t *testing.T) {
	tc, sc := dialSplitRecord(t, "http/1.1")
	br := bufio.NewReader(tc)
	check := func(want string) {
		t.Helper()
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || string(got) != want {
			t.Fatalf("status %d, body %q; want 200, %q", res.StatusCode, got, want)
		}
	}

	// 1. A small request, one byte per segment: its record (header and
	// all) arrives byte by byte; parked after 2 bytes of the header and
	// half-way through the ciphertext.
	parks := 0
	req := "GET /one HTTP/1.1\r\nHost: a\r\n\r\n"
	sc.split, sc.seg = true, 1
	sc.at = func(k int) {
		if k == 2 || k == 40 {
			waitTLSParked(t)
			parks++
		}
	}
	if _, err := io.WriteString(tc, req); err != nil {
		t.Fatal(err)
	}
	check("/one 0 0")

	// 2. A head of several records (crypto/tls starts a connection with
	// records of about 1,400 bytes and writes at most 16 KiB per record:
	// five 6,000-byte fields make many), then a body, in 1000-byte
	// segments; parked before the 4th and the 22nd segment, 1000 bytes
	// into a record either way. (The body is read by the handler, whose
	// worker waits for it: no park there.)
	var pad strings.Builder
	for i := range 5 {
		pad.WriteString("X-Pad" + strconv.Itoa(i) + ": " + strings.Repeat("p", 6000) + "\r\n")
	}
	body := bytes.Repeat([]byte("riptide!"), 5000) // 40,000 bytes
	head := "POST /two HTTP/1.1\r\nHost: a\r\n" + pad.String() + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	sc.seg, sc.k = 1000, 0
	sc.at = func(k int) {
		if k == 3 || k == 21 {
			waitTLSParked(t)
			parks++
		}
	}
	if _, err := tc.Write(append([]byte(head), body...)); err != nil {
		t.Fatal(err)
	}
	check("/two " + strconv.Itoa(len(body)) + " " + strconv.Itoa(int(sum(body))))

	// 3. Sent whole, on the same connection.
	sc.split = false
	io.WriteString(tc, strings.Replace(req, "/one", "/three", 1))
	check("/three 0 0")
	if parks != 4 {
		t.Errorf("parked %d times mid-record, want 4", parks)
	}
}

// dialSplitRecord serves, with TLS on the event loop, a handler that
// answers "PATH LEN SUM" of the request's path and body, and dials it over
// a segConn with ALPN proto; the handshake is done.
func dialSplitRecord(t *testing.T, proto string) (*tls.Conn, *segConn) {
	srv := &riptide.Server{TLSEngine: riptide.EngineEventLoop, TLSConfig: h2TestServerTLS(t),
		Logger: slog.New(slog.DiscardHandler),
		Handler: riptide.HandlerFunc(func(c *riptide.Ctx) {
			b, err := c.ReadBody()
			if err != nil {
				c.Error(400, err.Error())
				return
			}
			c.WriteString(string(c.Path()) + " " + strconv.Itoa(len(b)) + " " + strconv.Itoa(int(sum(b))))
		})}
	addr := riptide.ServeTest(t, srv, riptide.TestServeOptions{TLS: true}).Addr
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	sc := &segConn{Conn: raw}
	tc := tls.Client(sc, h2TestClientTLS(t, proto))
	t.Cleanup(func() { tc.Close() })
	tc.SetDeadline(time.Now().Add(60 * time.Second))
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != proto {
		t.Fatalf("ALPN chose %q, want %q", p, proto)
	}
	return tc, sc
}

func sum(b []byte) uint32 {
	var s uint32
	for _, c := range b {
		s += uint32(c)
	}
	return s
}

// TestTLSLoopHijack hijacks a TLS connection served on the event loop, on
// its second request (it has parked in between): the handler gets the
// tls.Conn, now over the socket detached from the loop, with the bytes
// read past the head, and talks over it with the client until it closes
// it; the server counts the connection out.
func TestTLSLoopHijack(t *testing.T) {
	done := make(chan error, 1)
	srv := &riptide.Server{TLSEngine: riptide.EngineEventLoop, TLSConfig: h2TestServerTLS(t),
		Logger: slog.New(slog.DiscardHandler),
		Handler: riptide.HandlerFunc(func(c *riptide.Ctx) {
			if string(c.Path()) != "/hijack" {
				c.WriteString("plain")
				return
			}
			nc, buffered, err := c.Hijack()
			if err != nil {
				done <- err
				return
			}
			go func() {
				defer nc.Close()
				if _, ok := nc.(*tls.Conn); !ok {
					done <- fmt.Errorf("hijacked a %T, want *tls.Conn", nc)
					return
				}
				br := bufio.NewReader(io.MultiReader(bytes.NewReader(buffered), nc))
				io.WriteString(nc, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						done <- nil
						return
					}
					io.WriteString(nc, strings.ToUpper(line))
				}
			}()
		})}
	addr := riptide.ServeTest(t, srv, riptide.TestServeOptions{TLS: true}).Addr
	tc, err := tls.Dial("tcp", addr, h2TestClientTLS(t, "http/1.1"))
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	tc.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(tc)
	io.WriteString(tc, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	waitTLSParked(t)
	// The first line of the new protocol comes with the request.
	io.WriteString(tc, "GET /hijack HTTP/1.1\r\nHost: a\r\n\r\nfirst\n")
	res, err = http.ReadResponse(br, nil)
	if err != nil || res.StatusCode != 101 {
		t.Fatalf("hijack answer: %v %v", res, err)
	}
	for _, want := range []string{"FIRST\n", "SECOND\n", "THIRD\n"} {
		if want != "FIRST\n" {
			io.WriteString(tc, strings.ToLower(want))
		}
		got, err := br.ReadString('\n')
		if err != nil || got != want {
			t.Fatalf("echo: %q, %v; want %q", got, err, want)
		}
	}
	tc.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the hijacker did not see the close")
	}
	open := func() int64 {
		var st riptide.Stats
		srv.Stats(&st)
		return st.ConnsNew + st.ConnsActive + st.ConnsIdle
	}
	for start := time.Now(); open() != 0; time.Sleep(time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%d connections still counted after the hijack", open())
		}
	}
}

// BenchmarkTLSEngine compares keep-alive HTTP/1.1 over TLS on the two
// engines (Server.TLSEngine), 4 connections per P, each making one small
// request at a time. Run the engines interleaved for a fair comparison on
// a shared machine: -count runs both sub-benchmarks once per round.
func BenchmarkTLSEngine(b *testing.B) {
	for _, e := range []riptide.Engine{riptide.EngineGoroutine, riptide.EngineEventLoop} {
		b.Run(e.String(), func(b *testing.B) {
			srv := &riptide.Server{TLSEngine: e, TLSConfig: h2TestServerTLS(b), Logger: slog.New(slog.DiscardHandler),
				Handler: riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString("hello") })}
			addr := riptide.ServeTest(b, srv, riptide.TestServeOptions{TLS: true}).Addr
			cfg := h2TestClientTLS(b, "http/1.1")
			req := []byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
			b.SetParallelism(4)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				tc, err := tls.Dial("tcp", addr, cfg)
				if err != nil {
					b.Error(err)
					return
				}
				defer tc.Close()
				br := bufio.NewReader(tc)
				for pb.Next() {
					tc.Write(req)
					res, err := http.ReadResponse(br, nil)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, res.Body)
				}
			})
		})
	}
}

// TestTLSLoopH2SplitRecord is TestTLSLoopSplitRecord for HTTP/2 over TLS
// on the event loop: an idle HTTP/2 connection parks there as h2c does
// (h2tlspark_linux.go), and resumes when a frame arrives in a record split
// across many TCP segments. The client's frames are sent one byte per
// segment (a HEADERS frame in one record; parked after 2 bytes of the
// record header and in the middle of the ciphertext), then in 1000-byte
// segments (a 30 KB header block in HEADERS and CONTINUATION frames, many
// records, and a 40,000-byte body in DATA frames; parked 1000 bytes into
// the first record); each stream is answered intact and the connection
// serves a request sent whole after them.
func TestTLSLoopH2SplitRecord(t *testing.T) {
	tc, sc := dialSplitRecord(t, "h2")
	if _, err := io.WriteString(tc, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(tc, tc)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	// check reads frames up to the end of stream id's answer (id 0: up to
	// the server's acknowledgement of our SETTINGS).
	check := func(id uint32, want string) {
		t.Helper()
		var body []byte
		status := ""
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				t.Fatalf("stream %d: %v", id, err)
			}
			switch f := f.(type) {
			case *http2.SettingsFrame:
				if !f.IsAck() {
					fr.WriteSettingsAck()
				}
			case *http2.GoAwayFrame:
				t.Fatalf("GOAWAY %v", f.ErrCode)
			case *http2.RSTStreamFrame:
				t.Fatalf("RST_STREAM %v on stream %d", f.ErrCode, f.StreamID)
			case *http2.MetaHeadersFrame:
				if f.StreamID == id {
					status = f.PseudoValue("status")
				}
			case *http2.DataFrame:
				if f.StreamID == id {
					body = append(body, f.Data()...)
				}
			}
			if id != 0 && f.Header().StreamID == id && f.Header().Flags.Has(http2.FlagDataEndStream) ||
				id == 0 && f.Header().Type == http2.FrameSettings && f.Header().Flags.Has(http2.FlagSettingsAck) {
				break
			}
		}
		if id == 0 {
			return
		}
		if status != "200" || string(body) != want {
			t.Fatalf("stream %d: status %q, body %q; want 200, %q", id, status, body, want)
		}
	}
	block := func(method, path string, extra ...hpack.HeaderField) []byte {
		var b bytes.Buffer
		enc := hpack.NewEncoder(&b)
		for _, f := range append([]hpack.HeaderField{{Name: ":method", Value: method}, {Name: ":scheme", Value: "https"},
			{Name: ":authority", Value: "a"}, {Name: ":path", Value: path}}, extra...) {
			enc.WriteField(f)
		}
		return b.Bytes()
	}
	// The server's SETTINGS first (and our ACK), then the idle connection
	// parks.
	check(0, "")
	waitTLSParked(t)

	// 1. A GET's HEADERS, one byte per segment (one record of 70-odd
	// bytes): parked after 2 bytes of the record header and after 40.
	parks := 0
	sc.split, sc.seg, sc.k = true, 1, 0
	sc.at = func(k int) {
		if k == 2 || k == 40 {
			waitTLSParked(t)
			parks++
		}
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, EndStream: true, EndHeaders: true,
		BlockFragment: block("GET", "/one", hpack.HeaderField{Name: "x-pad", Value: strings.Repeat("p", 20)})}); err != nil {
		t.Fatal(err)
	}
	check(1, "/one 0 0")

	// 2. A POST whose 30 KB header block takes HEADERS and CONTINUATION
	// frames (one record each), then a 40,000-byte body in DATA frames,
	// in 1000-byte segments: parked before the 2nd segment, 1000 bytes
	// into the first record. (Once the HEADERS frame is in, a header block
	// is open, then a stream: no park until the answer is sent.)
	var pad []hpack.HeaderField
	for i := range 5 {
		pad = append(pad, hpack.HeaderField{Name: "x-pad" + strconv.Itoa(i), Value: strings.Repeat("p", 6000)})
	}
	hb := block("POST", "/two", pad...)
	body := bytes.Repeat([]byte("riptide!"), 5000) // 40,000 bytes
	waitTLSParked(t)
	sc.seg, sc.k = 1000, 0
	sc.at = func(k int) {
		if k == 1 {
			waitTLSParked(t)
			parks++
		}
	}
	const maxFrame = 16384
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: hb[:maxFrame]}); err != nil {
		t.Fatal(err)
	}
	for rest := hb[maxFrame:]; len(rest) > 0; {
		n := min(len(rest), maxFrame)
		if err := fr.WriteContinuation(3, n == len(rest), rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	for rest := body; len(rest) > 0; {
		n := min(len(rest), maxFrame)
		if err := fr.WriteData(3, n == len(rest), rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	check(3, "/two "+strconv.Itoa(len(body))+" "+strconv.Itoa(int(sum(body))))

	// 3. Sent whole, on the same connection, after a park.
	waitTLSParked(t)
	sc.split = false
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, EndStream: true, EndHeaders: true, BlockFragment: block("GET", "/three")}); err != nil {
		t.Fatal(err)
	}
	check(5, "/three 0 0")
	if parks != 3 {
		t.Errorf("parked %d times mid-record, want 3", parks)
	}
}
