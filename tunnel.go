package riptide

// Tunnels: a CONNECT stream of HTTP/2 or HTTP/3 taken over by Ctx.Hijack
// becomes a byte stream both ways (RFC 9113 §8.5, RFC 9114 §4.4), and so
// does an extended CONNECT (RFC 8441, RFC 9220: WebSocket over HTTP/2 and
// HTTP/3, enabled by HTTP2Config.EnableConnectProtocol). The response
// head (200 unless the handler set another 2xx) goes out at once; then
// reads take the request's DATA, as the stream's flow control grants it,
// and writes send DATA, blocking while the client's window is empty (the
// backpressure: a peer that stops reading stops the writer, and the write
// deadline ends the wait). The stream stays the handler's after the
// handler returns, until the tunnel is closed: then the response ends
// (END_STREAM, or the QUIC stream's FIN) and the stream is released.

import (
	"errors"
	"net"
	"sync"
	"time"
)

// ErrTunnelStatus is Hijack's refusal of a CONNECT stream whose response
// status is set and not 2xx: only a 2xx answer opens a tunnel.
var ErrTunnelStatus = errors.New("riptide: a CONNECT stream is taken over only with a 2xx status")

// ErrTunnelEnded is Hijack's refusal of a CONNECT stream whose client
// already ended its side (END_STREAM with the request head): it carries
// nothing to the handler.
var ErrTunnelEnded = errors.New("riptide: the CONNECT stream's request side has ended")

// ConnectProtocol returns the :protocol pseudo-header of an extended
// CONNECT request over HTTP/2 (RFC 8441) or HTTP/3 (RFC 9220), such as
// "websocket", and nil for any other request. Such requests arrive only
// when HTTP2Config.EnableConnectProtocol is set; their Method is CONNECT
// and their target the :path.
func (x *Ctx) ConnectProtocol() []byte {
	switch e := x.conn.ex.(type) {
	case *h2Exchange:
		if p := e.st().Protocol(); p != "" {
			return stringBytes(p)
		}
	case *h3Stream:
		if len(e.proto) > 0 {
			return e.proto
		}
	}
	return nil
}

// hijackStream takes over a CONNECT stream (Hijack): the response head is
// sent and the stream is returned as a net.Conn.
func (x *Ctx) hijackStream(se streamExchange) (net.Conn, []byte, error) {
	c := x.conn
	if s := x.resp.status; s != 0 && (s < 200 || s > 299) {
		return nil, nil, ErrTunnelStatus
	}
	if !se.hasBody(&x.req) {
		return nil, nil, ErrTunnelEnded
	}
	x.stopWatch(false)
	if !x.resp.committed {
		x.commit(true)
	}
	if err := c.ex.flush(); err != nil {
		return nil, nil, err
	}
	if c.werr != nil {
		return nil, nil, c.werr
	}
	// A tunnel may be idle for long: ReadBodyTimeout does not apply.
	if h, ok := se.(*h3Stream); ok {
		h.userRDL = true
	} else {
		_ = se.setReadDeadline(time.Time{})
	}
	c.hijacked = true
	t := &streamTunnel{x: x, ex: se, done: make(chan struct{})}
	t.idle.L = &t.mu
	c.tunnel = t
	return t, nil, nil
}

// streamTunnel is a CONNECT stream as a net.Conn (hijackStream).
type streamTunnel struct {
	x  *Ctx
	ex streamExchange

	wmu    sync.Mutex // one write at a time
	mu     sync.Mutex
	idle   sync.Cond // signalled when busy drops to 0 after closing
	busy   int       // reads and writes in the stream now
	closed bool
	done   chan struct{} // closed by Close once no read or write is in the stream
}

var _ net.Conn = (*streamTunnel)(nil)

// enter counts a read or write in the stream; false once closed.
func (t *streamTunnel) enter() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.busy++
	return true
}

func (t *streamTunnel) leave() {
	t.mu.Lock()
	if t.busy--; t.busy == 0 && t.closed {
		t.idle.Broadcast()
	}
	t.mu.Unlock()
}

// Read reads the request's DATA: io.EOF once the client ended its side
// (END_STREAM, FIN), an error once the stream was reset.
func (t *streamTunnel) Read(p []byte) (int, error) {
	if !t.enter() {
		return 0, net.ErrClosed
	}
	defer t.leave()
	return t.ex.readBody(p)
}

// Write sends p as DATA, blocking while the client's flow-control window
// is spent (until the write deadline, or WriteTimeout when none is set).
func (t *streamTunnel) Write(p []byte) (int, error) {
	if !t.enter() {
		return 0, net.ErrClosed
	}
	defer t.leave()
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if err := t.ex.writeBody(p); err != nil {
		return 0, err
	}
	return len(p), t.ex.flush()
}

// Close ends the tunnel: a read or write blocked in the stream returns,
// and once none is left the handler's serveStream ends the response
// (END_STREAM or FIN) and releases the stream.
func (t *streamTunnel) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return net.ErrClosed
	}
	t.closed = true
	busy := t.busy
	t.mu.Unlock()
	if busy > 0 {
		t.ex.stopBody()
		_ = t.ex.setWriteDeadline(aLongTimeAgo)
	}
	t.mu.Lock()
	for t.busy > 0 {
		t.idle.Wait()
	}
	t.mu.Unlock()
	if busy > 0 {
		_ = t.ex.setWriteDeadline(time.Time{})
	}
	close(t.done)
	return nil
}

// wait blocks until Close (serveStream, after the handler returned).
func (t *streamTunnel) wait() { <-t.done }

func (t *streamTunnel) LocalAddr() net.Addr  { return t.ex.localAddr() }
func (t *streamTunnel) RemoteAddr() net.Addr { return t.ex.remoteAddr() }

// SetDeadline sets both deadlines.
func (t *streamTunnel) SetDeadline(d time.Time) error {
	_ = t.SetReadDeadline(d)
	return t.SetWriteDeadline(d)
}

// SetReadDeadline bounds reads waiting for DATA.
func (t *streamTunnel) SetReadDeadline(d time.Time) error {
	if !t.enter() {
		return net.ErrClosed
	}
	defer t.leave()
	if h, ok := t.ex.(*h3Stream); ok {
		err := h.st.SetReadDeadline(d)
		return err
	}
	return t.ex.setReadDeadline(d)
}

// SetWriteDeadline bounds writes waiting for the client's window.
func (t *streamTunnel) SetWriteDeadline(d time.Time) error {
	if !t.enter() {
		return net.ErrClosed
	}
	defer t.leave()
	return t.ex.setWriteDeadline(d)
}
