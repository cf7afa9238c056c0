package websocket

import (
	"errors"
	"net"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/ws"
)

// Handler is what an event-driven connection (Serve) calls. Any field may
// be nil. The calls for one connection never overlap: OnOpen first, then
// OnMessage for each message in order, then OnClose once.
type Handler struct {
	// OnOpen is called once the upgrade is answered, on the handler's
	// goroutine, before Serve returns.
	OnOpen func(p *Peer)
	// OnMessage is called with each whole message (text or binary,
	// decompressed, its UTF-8 checked). msg is valid only during the
	// call: copy what you keep. On the event loop the call runs on the
	// engine's worker for the connection: a callback that blocks holds
	// that worker (not the loop) until it returns.
	OnMessage func(p *Peer, mt MessageType, msg []byte)
	// OnClose is called once when the connection ends: a *CloseError
	// with the peer's code after its close frame (or the code this side
	// sent when it failed the connection for a protocol error),
	// ErrWriteQueueFull, os.ErrDeadlineExceeded after ReadTimeout or the
	// close handshake's timeout, ErrClosed when the server closed it, or
	// a *CloseError with code 1006 (ws.CloseAbnormal) when the peer went
	// away without a close frame.
	OnClose func(p *Peer, err error)
}

// ErrWriteQueueFull is a write to an event-driven connection whose peer
// has left Options.WriteQueueLimit bytes or more queued for it unread: the
// connection is closed.
var ErrWriteQueueFull = errors.New("websocket: write queue full: the peer is not reading")

// Peer is one event-driven WebSocket connection (Serve). Its write methods
// may be called from any goroutine, inside the Handler's callbacks or not;
// they never wait for the peer to read.
//
// On riptide's event-loop engine (Linux; EngineEventLoop, EngineOnLoop)
// an idle Peer is parked on its loop like an idle HTTP/1.1 connection: no
// goroutine, no read buffer, no write buffer; it costs the Peer and the
// engine's connection, well under 1 KiB (docs/websocket.md), and over TLS
// (Server.TLSEngine's event loop, the default there) the tls.Conn besides,
// about 7 KB. Elsewhere (the goroutine engine, TLS on the goroutine
// engine, HTTP/2 and HTTP/3, non-Linux systems) the same API runs a
// blocking Conn on a goroutine of its own.
type Peer struct {
	h  *Handler
	bc *Conn   // goroutine mode: the blocking connection
	ev evState // event mode (event_linux.go)
}

// Serve answers a native request that asks for a WebSocket and serves the
// connection through h's callbacks until it closes: the handler returns
// at once (do not write to x afterwards). Refusals are answered as by
// Upgrade and return a *HandshakeError. o may be nil.
//
// Writes that the peer does not read at once are queued, up to
// Options.WriteQueueLimit bytes; ReadTimeout, PingInterval and
// CloseTimeout apply as on a Conn (ReadBufferSize and WriteBufferSize do
// not: an event-driven connection borrows its buffers per event).
func Serve(x *riptide.Ctx, o *Options, h *Handler) (*Peer, error) {
	if h == nil {
		h = &Handler{}
	}
	if p, ok, err := evServe(x, o, h); ok {
		return p, err
	}
	c, err := Upgrade(x, o)
	if err != nil {
		return nil, err
	}
	p := &Peer{h: h, bc: c}
	if h.OnOpen != nil {
		h.OnOpen(p)
	}
	go p.run()
	return p, nil
}

// run is the goroutine mode's reader: each message to OnMessage until
// reading fails, then OnClose.
func (p *Peer) run() {
	for {
		mt, msg, err := p.bc.ReadMessage()
		if err != nil {
			p.bc.closeConn()
			if p.h.OnClose != nil {
				p.h.OnClose(p, err)
			}
			return
		}
		if p.h.OnMessage != nil {
			p.h.OnMessage(p, mt, msg)
		}
	}
}

// bounded runs a blocking write of the goroutine mode under a write
// deadline of CloseTimeout: a peer that does not read fails the write and
// the connection is closed (the event mode's queue bound, there).
func (p *Peer) bounded(write func() error) error {
	p.bc.nc.SetWriteDeadline(time.Now().Add(p.bc.closeTimeout))
	err := write()
	if err != nil && err != ErrClosed {
		p.bc.nc.Close()
	}
	return err
}

// WriteMessage sends data as one text or binary message, compressed when
// permessage-deflate was negotiated (and data is at least
// Options.CompressionThreshold long). data may be reused once it returns.
func (p *Peer) WriteMessage(mt MessageType, data []byte) error {
	if mt != TextMessage && mt != BinaryMessage {
		return errors.New("websocket: WriteMessage takes a text or binary message")
	}
	if p.bc != nil {
		return p.bounded(func() error { return p.bc.WriteMessage(mt, data) })
	}
	return p.evWriteMessage(mt, data)
}

// WritePreparedMessage sends pm: its bytes are shared by every Peer it is
// written to, never copied for one (unless the peer's socket is full, and
// then not copied either: the queue refers to them). In event mode a frame
// of at most 1 KiB written to a parked peer is copied into its cork
// buffer, with the others written to it before its next turn, which
// writes them together (docs/websocket.md, "The write queue").
func (p *Peer) WritePreparedMessage(pm *PreparedMessage) error {
	if p.bc != nil {
		return p.bounded(func() error { return p.bc.WritePreparedMessage(pm) })
	}
	return p.evWritePrepared(pm)
}

// Ping sends a ping with data (at most 125 bytes); the pong counts as the
// peer's activity for ReadTimeout.
func (p *Peer) Ping(data []byte) error {
	if len(data) > ws.MaxControlPayload {
		return errors.New("websocket: control payload over 125 bytes")
	}
	if p.bc != nil {
		return p.bounded(func() error { return p.bc.WriteControl(PingMessage, data, time.Time{}) })
	}
	return p.evControl(ws.OpPing, data)
}

// Close starts the closing handshake with code 1000: see CloseWith.
func (p *Peer) Close() error { return p.CloseWith(ws.CloseNormal, "") }

// CloseWith sends a close frame with code and reason and returns at once;
// the connection ends (OnClose) when the peer's close frame arrives or
// after CloseTimeout. Messages that arrive meanwhile are dropped. It
// returns ErrClosed if a close frame was sent already.
func (p *Peer) CloseWith(code int, reason string) error {
	var b [ws.MaxControlPayload]byte
	payload := ws.AppendClose(b[:0], code, reason)
	if p.bc != nil {
		err := p.bounded(func() error { return p.bc.WriteControl(CloseMessage, payload, time.Time{}) })
		if err == nil {
			p.bc.nc.SetReadDeadline(time.Now().Add(p.bc.closeTimeout))
		}
		return err
	}
	return p.evClose(payload)
}

// Subprotocol is the negotiated subprotocol, "" if none.
func (p *Peer) Subprotocol() string {
	if p.bc != nil {
		return p.bc.subprotocol
	}
	return p.evSubprotocol()
}

// RemoteAddr is the client's address.
func (p *Peer) RemoteAddr() net.Addr {
	if p.bc != nil {
		return p.bc.RemoteAddr()
	}
	return p.evRemoteAddr()
}

// EventDriven reports whether the connection is served on the event loop
// (parked while idle) rather than by a goroutine of its own.
func (p *Peer) EventDriven() bool { return p.bc == nil }
