package websocket

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/ws"
)

// serve starts a riptide server on loopback with engine e, closed when the
// test ends, and returns its ws:// URL.
func serve(t testing.TB, e riptide.Engine, h riptide.Handler) string {
	return serveServer(t, &riptide.Server{Handler: h, Engine: e})
}

// serveServer starts srv on loopback, closed when the test ends, and
// returns its ws:// URL.
func serveServer(t testing.TB, srv *riptide.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { srv.Serve(ln); close(done) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return "ws://" + ln.Addr().String() + "/"
}

// echoLoop echoes messages until the connection ends, streaming them
// through NextReader and NextWriter.
func echoLoop(c *Conn) {
	defer c.Close()
	for {
		mt, r, err := c.NextReader()
		if err != nil {
			return
		}
		w, err := c.NextWriter(mt)
		if err != nil {
			return
		}
		if _, err := io.Copy(w, r); err != nil {
			return
		}
		if w.Close() != nil {
			return
		}
	}
}

var echoOpts = &Options{
	Compression:  true,
	Deflate:      ws.DeflateConfig{ServerContextTakeover: true, ClientContextTakeover: true},
	Subprotocols: []string{"chat", "echo"},
	ReadLimit:    8 << 20,
}

func nativeEcho(o *Options) riptide.Handler {
	return riptide.HandlerFunc(func(x *riptide.Ctx) {
		c, err := Upgrade(x, o)
		if err != nil {
			return
		}
		echoLoop(c)
	})
}

func compatEcho(o *Options) http.Handler { return compatHandler(o, echoLoop) }

// exercise runs messages of every kind through an echo server at url and
// checks each comes back as sent, then closes with a handshake.
func exercise(t *testing.T, url string, compress bool) { exerciseDial(t, url, compress, nil, false) }

// exerciseDial is exercise with the client's TLS configuration (wss://)
// and, with h2, over HTTP/2 (h2_test.go), where the handshake is answered
// 200.
func exerciseDial(t *testing.T, url string, compress bool, tc *tls.Config, h2 bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := &Options{Compression: compress, Subprotocols: []string{"echo"}, ReadLimit: 8 << 20,
		Deflate: ws.DeflateConfig{ServerContextTakeover: true, ClientContextTakeover: true},
		HTTP2:   h2, TLSClientConfig: tc}
	c, resp, err := Dial(ctx, url, o)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	want := 101
	if o.HTTP2 {
		want = 200
	}
	if resp.StatusCode != want || c.Subprotocol() != "echo" || c.Compressed() != compress {
		t.Fatalf("handshake: %d, subprotocol %q, compressed %v", resp.StatusCode, c.Subprotocol(), c.Compressed())
	}
	pongs := 0
	c.SetPongHandler(func(p []byte) error {
		if string(p) != "are you there" {
			t.Errorf("pong %q", p)
		}
		pongs++
		return nil
	})
	if err := c.Ping([]byte("are you there")); err != nil {
		t.Fatal(err)
	}
	msgs := []struct {
		mt MessageType
		p  []byte
	}{
		{TextMessage, []byte("Hello")},
		{TextMessage, []byte("κόσμε " + strings.Repeat("ß", 3000))},
		{BinaryMessage, bytes.Repeat([]byte{0, 1, 2, 3, 250}, 100_000)},
		{BinaryMessage, nil},
		{TextMessage, []byte(strings.Repeat("the same again ", 100))},
		{TextMessage, []byte(strings.Repeat("the same again ", 100))},
	}
	for i, m := range msgs {
		if i%2 == 0 {
			if err := c.WriteMessage(m.mt, m.p); err != nil {
				t.Fatal(err)
			}
		} else {
			// Streamed in small writes: many frames.
			w, err := c.NextWriter(m.mt)
			if err != nil {
				t.Fatal(err)
			}
			for p := m.p; len(p) > 0; {
				k := min(len(p), 777)
				w.Write(p[:k])
				p = p[k:]
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
		mt, got, err := c.ReadMessage()
		if err != nil || mt != m.mt || !bytes.Equal(got, m.p) {
			t.Fatalf("message %d: type %v, %d bytes, %v; want type %v, %d bytes", i, mt, len(got), err, m.mt, len(m.p))
		}
	}
	if pongs != 1 {
		t.Errorf("%d pongs, want 1", pongs)
	}
	if err := c.CloseWith(4000, "done"); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, _, err := c.ReadMessage(); CloseStatus(err) != 4000 {
		t.Errorf("read after close: %v, want the echoed close 4000", err)
	}
}

// A native handler upgrades on the event-loop and goroutine engines, the
// compat door and net/http accept the same way; each echoes text, binary,
// fragmented and compressed messages, answers a ping and closes cleanly.
func TestEcho(t *testing.T) {
	for _, e := range []riptide.Engine{riptide.EngineGoroutine, riptide.EngineAuto} {
		t.Run("native/"+e.String(), func(t *testing.T) {
			url := serve(t, e, nativeEcho(echoOpts))
			exercise(t, url, true)
			exercise(t, url, false)
		})
		t.Run("compat/"+e.String(), func(t *testing.T) {
			url := serve(t, e, riptide.FromHTTP(compatEcho(echoOpts)))
			exercise(t, url, true)
		})
	}
	t.Run("net/http", func(t *testing.T) {
		ts := httptest.NewServer(compatEcho(echoOpts))
		defer ts.Close()
		exercise(t, "ws"+strings.TrimPrefix(ts.URL, "http"), true)
	})
}

// Requests that are not valid upgrades get the RFC's answers and no
// connection.
func TestHandshakeRefused(t *testing.T) {
	for _, door := range []struct {
		name string
		h    riptide.Handler
	}{
		{"native", nativeEcho(nil)},
		{"event", riptide.HandlerFunc(func(x *riptide.Ctx) { Serve(x, nil, nil) })},
		{"compat", riptide.FromHTTP(compatEcho(nil))},
	} {
		t.Run(door.name, func(t *testing.T) { handshakeRefusals(t, door.h) })
	}
}

func handshakeRefusals(t *testing.T, h riptide.Handler) {
	url := "http" + strings.TrimPrefix(serve(t, riptide.EngineAuto, h), "ws")
	good := map[string]string{
		"Upgrade": "websocket", "Connection": "keep-alive, Upgrade",
		"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
	}
	host := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	// A value is a field's lines, each a field of its own.
	tests := []struct {
		name, method, header, value string
		status                      int
	}{
		{"ok", "GET", "", "", 101},
		{"post", "POST", "", "", 405},
		{"no upgrade", "GET", "Upgrade", "", 400},
		{"no connection", "GET", "Connection", "keep-alive", 400},
		{"version 8", "GET", "Sec-WebSocket-Version", "8", 426},
		{"short key", "GET", "Sec-WebSocket-Key", "c2hvcnQ=", 400},
		{"long key", "GET", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==dGhlIHNhbXBsZSBub25jZQ==", 400},
		{"key not base64", "GET", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZ!==", 400},
		{"cross origin", "GET", "Origin", "http://evil.example", 403},
		{"same origin", "GET", "Origin", "http://" + host, 101},
		{"repeated key", "GET", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==\ndGhlIHNhbXBsZSBub25jZQ==", 400},
		{"repeated version", "GET", "Sec-WebSocket-Version", "13\n13", 426},
		{"upgrade in a second field", "GET", "Connection", "keep-alive\nUpgrade", 101},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, url, nil)
		for k, v := range good {
			req.Header.Set(k, v)
		}
		if tt.header != "" {
			req.Header[http.CanonicalHeaderKey(tt.header)] = strings.Split(tt.value, "\n")
		}
		nc, err := net.Dial("tcp", req.URL.Host)
		if err != nil {
			t.Fatal(err)
		}
		req.Write(nc)
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 4096)
		n, _ := io.ReadAtLeast(nc, buf, 12)
		nc.Close()
		head := string(buf[:n])
		if !strings.HasPrefix(head, "HTTP/1.1 "+itoa(tt.status)) {
			t.Errorf("%s: got %q, want status %d", tt.name, head, tt.status)
		}
		if tt.status == 101 && !strings.Contains(head, "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n") {
			t.Errorf("%s: accept key missing in %q", tt.name, head)
		}
		if tt.status == 426 && !strings.Contains(head, "Sec-Websocket-Version: 13") && !strings.Contains(head, "Sec-WebSocket-Version: 13") {
			t.Errorf("%s: 426 without the version in %q", tt.name, head)
		}
	}
}

func itoa(n int) string {
	return string(rune('0'+n/100)) + string(rune('0'+n/10%10)) + string(rune('0'+n%10))
}

// A server that refuses is a *HandshakeError to Dial, with the response.
func TestDialRefused(t *testing.T) {
	url := serve(t, riptide.EngineAuto, riptide.HandlerFunc(func(x *riptide.Ctx) { x.Error(403, "no") }))
	_, resp, err := Dial(context.Background(), url, nil)
	var he *HandshakeError
	if !errors.As(err, &he) || resp == nil || resp.StatusCode != 403 {
		t.Fatalf("Dial to a refusing server: %v, %v", resp, err)
	}
}

// compatHandler accepts with o and hands the Conn to serve.
func compatHandler(o *Options, serve func(*Conn)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := Accept(w, r, o); err == nil {
			serve(c)
		}
	})
}

// Close from one goroutine while another is blocked reading: the reader
// sees the peer's answer (close 1000) and Close returns once it has, with
// no data race (run under -race).
func TestCloseWhileReading(t *testing.T) {
	url := serve(t, riptide.EngineAuto, nativeEcho(nil))
	c := dial(t, url, nil)
	errc := make(chan error, 1)
	go func() {
		_, _, err := c.ReadMessage()
		errc <- err
	}()
	if err := c.WriteMessage(TextMessage, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("first read: %v", err)
	}
	go func() {
		_, _, err := c.ReadMessage()
		errc <- err
	}()
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-errc; CloseStatus(err) != ws.CloseNormal {
		t.Errorf("reader: %v, want the peer's close 1000", err)
	}
}

// Dial over TLS (wss://) to net/http's TLS test server, with the server's
// certificate trusted through Options.TLSClientConfig.
func TestDialTLS(t *testing.T) {
	ts := httptest.NewTLSServer(compatEcho(echoOpts))
	defer ts.Close()
	o := &Options{Compression: true, TLSClientConfig: ts.Client().Transport.(*http.Transport).TLSClientConfig}
	c, _, err := Dial(context.Background(), "wss"+strings.TrimPrefix(ts.URL, "https"), o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WriteMessage(TextMessage, []byte("over TLS")); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := c.ReadMessage(); err != nil || string(msg) != "over TLS" {
		t.Errorf("echo over TLS: %q, %v", msg, err)
	}
}

// Over HTTP/2 (riptide's compat door, h2c prior knowledge) Accept answers
// 501 until extended CONNECT is served, and gives no Conn.
func TestAcceptHTTP2Refused(t *testing.T) {
	got := make(chan error, 1)
	url := serveServer(t, &riptide.Server{
		HTTP2: &riptide.HTTP2Config{H2C: true},
		Handler: riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, err := Accept(w, r, nil)
			got <- err
		})),
	})
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest("GET", "http"+strings.TrimPrefix(url, "ws"), nil)
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var he *HandshakeError
	if err := <-got; resp.ProtoMajor != 2 || resp.StatusCode != http.StatusNotImplemented || !errors.As(err, &he) {
		t.Errorf("HTTP/%d %d, Accept error %v; want HTTP/2 501 and a *HandshakeError", resp.ProtoMajor, resp.StatusCode, err)
	}
}

// PingInterval pings an idle client, and its pongs keep the connection past
// ReadTimeout: after ten pings (twice the read timeout) a message still
// echoes.
func TestKeepAlivePings(t *testing.T) {
	url := serve(t, riptide.EngineAuto, nativeEcho(&Options{PingInterval: 20 * time.Millisecond, ReadTimeout: 100 * time.Millisecond}))
	c := dial(t, url, nil)
	pings := make(chan struct{}, 100)
	c.SetPingHandler(func(p []byte) error {
		pings <- struct{}{}
		return c.WriteControl(PongMessage, p, time.Now().Add(time.Second))
	})
	errc := make(chan error, 1)
	go func() {
		_, msg, err := c.ReadMessage()
		if err == nil && string(msg) != "still here" {
			err = errors.New("echo " + string(msg))
		}
		errc <- err
	}()
	for range 10 {
		<-pings
	}
	if err := c.WriteMessage(TextMessage, []byte("still here")); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Errorf("after 10 pings: %v", err)
	}
}
