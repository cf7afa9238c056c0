package http3

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	qhttp3 "github.com/quic-go/quic-go/http3"
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/websocket"
	"github.com/riptide-http/riptide/ws"
)

// WebSocket over HTTP/3 (RFC 9220), end to end with a client built on
// quic-go: its http3 client sends the extended CONNECT on a request stream
// (quic-go puts Request.Proto in :protocol), and the stream, with
// addresses, is the client Conn's byte stream (websocket.NewClientConn).

// h3wsStream is a quic-go request stream as a net.Conn.
type h3wsStream struct {
	*qhttp3.RequestStream
	qc *quic.Conn
}

// Close ends the client's side (FIN). The server stops the stream when it
// has closed the WebSocket first (STOP_SENDING after its close frame, as
// a TCP server closes its socket), and quic-go then refuses the FIN
// ("close called for canceled stream"): the stream is over either way.
func (s h3wsStream) Close() error {
	if s.Context().Err() != nil {
		return nil
	}
	_ = s.RequestStream.Close()
	return nil
}

func (s h3wsStream) LocalAddr() net.Addr  { return s.qc.LocalAddr() }
func (s h3wsStream) RemoteAddr() net.Addr { return s.qc.RemoteAddr() }

// dialH3WebSocket opens a QUIC connection to addr, waits for the
// server's SETTINGS, sends an extended CONNECT for path and returns the
// client connection, whether the server enabled extended CONNECT, and
// the response and stream (nil, nil when it did not).
func dialH3WebSocket(t *testing.T, ctx context.Context, addr, path string, o *websocket.Options) (*qhttp3.ClientConn, bool, *http.Response, h3wsStream) {
	t.Helper()
	qc, err := quic.DialAddr(ctx, addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h3"}}, &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qc.CloseWithError(0, "") })
	cc := (&qhttp3.Transport{}).NewClientConn(qc)
	select {
	case <-cc.ReceivedSettings():
	case <-ctx.Done():
		t.Fatal("no SETTINGS from the server")
	}
	enabled := cc.Settings().EnableExtendedConnect
	str, err := cc.OpenRequestStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodConnect, "https://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Proto = "websocket"
	req.Header.Set("Sec-WebSocket-Version", "13")
	if len(o.Subprotocols) > 0 {
		req.Header.Set("Sec-WebSocket-Protocol", strings.Join(o.Subprotocols, ", "))
	}
	if o.Compression {
		req.Header.Set("Sec-WebSocket-Extensions", ws.ClientOffer(true, true))
	}
	if err := str.SendRequestHeader(req); err != nil {
		t.Fatal(err)
	}
	resp, err := str.ReadResponse()
	if err != nil {
		t.Logf("response: %v", err)
		return cc, enabled, nil, h3wsStream{}
	}
	return cc, enabled, resp, h3wsStream{str, qc}
}

// TestWebSocketHTTP3: with EnableConnectProtocol the server's HTTP/3
// SETTINGS carry SETTINGS_ENABLE_CONNECT_PROTOCOL, an extended CONNECT
// with :protocol websocket is answered 200 by websocket.Upgrade (native)
// and websocket.Accept (compat), and messages (text, 300 KB binary,
// compressed), a ping and the close handshake go over the request
// stream; Stats count the extended CONNECT. Without the switch the
// setting is absent and the request is malformed (RFC 9220 §3): 400, no
// handler.
func TestWebSocketHTTP3(t *testing.T) {
	opts := &websocket.Options{Compression: true, Subprotocols: []string{"echo"}, ReadLimit: 1 << 20}
	echo := func(c *websocket.Conn) {
		defer c.Close()
		for {
			mt, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if c.WriteMessage(mt, msg) != nil {
				return
			}
		}
	}
	doors := map[string]riptide.Handler{
		"native": riptide.HandlerFunc(func(x *riptide.Ctx) {
			if c, err := websocket.Upgrade(x, opts); err == nil {
				go echo(c)
			}
		}),
		"compat": riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if c, err := websocket.Accept(w, r, opts); err == nil {
				echo(c)
			}
		})),
	}
	for _, door := range []string{"native", "compat"} {
		t.Run(door, func(t *testing.T) {
			srv := &riptide.Server{Handler: doors[door], HTTP2: &riptide.HTTP2Config{EnableConnectProtocol: true}}
			addr, _ := startServe(t, srv, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, enabled, resp, str := dialH3WebSocket(t, ctx, addr, "/ws", opts)
			if !enabled || resp == nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Sec-WebSocket-Accept") != "" {
				t.Fatalf("SETTINGS_ENABLE_CONNECT_PROTOCOL %v, response %+v; want the setting and a 200 without Sec-WebSocket-Accept", enabled, resp)
			}
			c, err := websocket.NewClientConn(str, resp, opts)
			if err != nil {
				t.Fatal(err)
			}
			if c.Subprotocol() != "echo" || !c.Compressed() {
				t.Errorf("negotiated subprotocol %q, compression %v; want echo and true", c.Subprotocol(), c.Compressed())
			}
			pong := make(chan string, 1)
			c.SetPongHandler(func(p []byte) error { pong <- string(p); return nil })
			if err := c.Ping([]byte("h3?")); err != nil {
				t.Fatal(err)
			}
			for _, m := range []struct {
				mt websocket.MessageType
				p  []byte
			}{
				{websocket.TextMessage, []byte("hello over HTTP/3")},
				{websocket.BinaryMessage, bytes.Repeat([]byte{1, 2, 3, 250}, 75_000)},
				{websocket.TextMessage, []byte(strings.Repeat("compressible ", 500))},
			} {
				if err := c.WriteMessage(m.mt, m.p); err != nil {
					t.Fatal(err)
				}
				mt, got, err := c.ReadMessage()
				if err != nil || mt != m.mt || !bytes.Equal(got, m.p) {
					t.Fatalf("echo: type %v, %d bytes, %v; want type %v, %d bytes", mt, len(got), err, m.mt, len(m.p))
				}
			}
			select {
			case p := <-pong:
				if p != "h3?" {
					t.Errorf("pong %q", p)
				}
			default:
				t.Error("no pong before the echoes")
			}
			if err := c.CloseWith(4000, "bye"); err != nil {
				t.Errorf("close: %v", err)
			}
			if _, _, err := c.ReadMessage(); websocket.CloseStatus(err) != 4000 {
				t.Errorf("after close: %v, want the echoed close 4000", err)
			}
			var st riptide.Stats
			srv.Stats(&st)
			if st.H3ExtendedConnects != 1 {
				t.Errorf("Stats.H3ExtendedConnects %d, want 1", st.H3ExtendedConnects)
			}
		})
	}
	t.Run("switch off", func(t *testing.T) {
		ran := make(chan struct{}, 1)
		srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) { ran <- struct{}{} })}
		addr, _ := startServe(t, srv, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, enabled, resp, _ := dialH3WebSocket(t, ctx, addr, "/ws", opts)
		if enabled || resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("SETTINGS_ENABLE_CONNECT_PROTOCOL %v, response %+v; want no setting and the malformed request answered 400", enabled, resp)
		}
		select {
		case <-ran:
			t.Error("a handler ran for an extended CONNECT the server did not enable")
		default:
		}
	})
}

// TestWebSocketHTTP3Aioquic: aioquic (an independent HTTP/3 and QPACK
// stack; testdata/aioquic_websocket.py, whose WebSocket frames are its
// own) sees SETTINGS_ENABLE_CONNECT_PROTOCOL, opens a WebSocket with an
// extended CONNECT, gets 200, has a text message echoed and the close
// handshake answered with 1000. Skips without Python and aioquic (unless
// RIPTIDE_REQUIRE_TOOLS or CI is set).
func TestWebSocketHTTP3Aioquic(t *testing.T) {
	py := aioquicPython(t)
	srv := &riptide.Server{HTTP2: &riptide.HTTP2Config{EnableConnectProtocol: true}, Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
		c, err := websocket.Upgrade(x, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			mt, msg, err := c.ReadMessage()
			if err != nil || c.WriteMessage(mt, msg) != nil {
				return
			}
		}
	})}
	addr, _ := startServe(t, srv, nil)
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const msg = "hello from aioquic, κόσμε"
	out, err := exec.CommandContext(ctx, py, filepath.Join("testdata", "aioquic_websocket.py"), host, port, msg).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("aioquic client: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var got struct {
		ConnectSetting bool    `json:"connect_setting"`
		Status         int     `json:"status"`
		Echo           *string `json:"echo"`
		CloseCode      *int    `json:"close_code"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("aioquic client printed %q: %v", out, err)
	}
	if !got.ConnectSetting || got.Status != 200 || got.Echo == nil || *got.Echo != msg || got.CloseCode == nil || *got.CloseCode != 1000 {
		t.Errorf("aioquic saw %s; want the setting, 200, the message echoed and close 1000", out)
	}
	var st riptide.Stats
	srv.Stats(&st)
	if st.H3ExtendedConnects != 1 {
		t.Errorf("Stats.H3ExtendedConnects %d, want 1", st.H3ExtendedConnects)
	}
}

// TestWebSocketHTTP3PeerEnds: the client ending its side of the request
// stream (FIN) without a close frame, or resetting it (RESET_STREAM), ends
// the server's reads with an error and its Conn closes.
func TestWebSocketHTTP3PeerEnds(t *testing.T) {
	for _, how := range []string{"FIN", "RESET_STREAM"} {
		t.Run(how, func(t *testing.T) {
			got := make(chan error, 1)
			srv := &riptide.Server{HTTP2: &riptide.HTTP2Config{EnableConnectProtocol: true}, Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
				c, err := websocket.Upgrade(x, nil)
				if err != nil {
					return
				}
				_, _, err = c.ReadMessage()
				c.Close()
				got <- err
			})}
			addr, _ := startServe(t, srv, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, _, resp, str := dialH3WebSocket(t, ctx, addr, "/ws", &websocket.Options{})
			if resp == nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("response %+v", resp)
			}
			if how == "FIN" {
				str.RequestStream.Close()
			} else {
				str.CancelWrite(0x10c) // H3_REQUEST_CANCELLED
			}
			select {
			case err := <-got:
				if err == nil {
					t.Error("the server's read ended without an error")
				}
				t.Logf("server read: %v", err)
			case <-ctx.Done():
				t.Fatal("the server's read did not end")
			}
		})
	}
}

// TestWebSocketHTTP3Backpressure: a client that stops reading stops the
// server's WriteMessage at the QUIC stream's flow-control window (quic-go's
// initial 512 KiB: its window grows only as the application reads), and
// the write deadline ends it.
func TestWebSocketHTTP3Backpressure(t *testing.T) {
	type result struct {
		written int
		err     error
	}
	res := make(chan result, 1)
	msg := make([]byte, 16<<10)
	srv := &riptide.Server{HTTP2: &riptide.HTTP2Config{EnableConnectProtocol: true}, Handler: riptide.HandlerFunc(func(x *riptide.Ctx) {
		c, err := websocket.Upgrade(x, nil)
		if err != nil {
			return
		}
		defer c.NetConn().Close()
		written := 0
		for written < 64<<20 {
			c.SetWriteDeadline(time.Now().Add(time.Second))
			if err = c.WriteMessage(websocket.BinaryMessage, msg); err != nil {
				break
			}
			written += len(msg)
		}
		res <- result{written, err}
	})}
	addr, _ := startServe(t, srv, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, _, resp, _ := dialH3WebSocket(t, ctx, addr, "/ws", &websocket.Options{})
	if resp == nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("response %+v", resp)
	}
	r := <-res
	if r.err == nil || r.written > 512<<10 {
		t.Errorf("server wrote %d bytes to a client that does not read, then %v; want at most quic-go's 512 KiB stream window, then a deadline error", r.written, r.err)
	}
	t.Logf("server wrote %d bytes before its write deadline: %v", r.written, r.err)
}
