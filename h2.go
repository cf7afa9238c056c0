package riptide

// HTTP/2 for both front doors, on riptide's own server connection engine
// (internal/h2, adapted here): over TLS when ALPN picks "h2" (see
// tls.go), and in cleartext with prior knowledge ("h2c") when
// HTTP2Config.H2C is set, or after "Upgrade: h2c" with H2CUpgrade. The
// engine's conn stays the unit of accounting (MaxConns, Shutdown, Close,
// ConnState); only its HTTP/1.1 loop is replaced by the HTTP/2 one.
//
// Every stream is served by a Ctx whose exchange is the stream (h2ctx.go),
// with no HTTP/1.1 text in between; compat handlers (FromHTTP) run on that
// Ctx through the same compat door as over HTTP/1.1 (compat.go).

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
	"github.com/riptide-http/riptide/internal/h2"
	"golang.org/x/net/http2"
)

// HTTP2Config configures HTTP/2 on a [Server]. A nil Server.HTTP2 means the
// defaults: HTTP/2 over TLS on, h2c off.
//
// Other limits come from the Server fields, as for HTTP/1.1:
// MaxHeaderBytes is the header list limit (SETTINGS_MAX_HEADER_LIST_SIZE,
// 431 beyond), IdleTimeout closes idle connections with GOAWAY,
// ReadHeaderTimeout bounds the TLS handshake and the h2c preface,
// WriteTimeout bounds each connection write and each wait of a response
// write for flow-control window, MaxConnAge and MaxRequestsPerConn send
// GOAWAY (the connection finishes its streams and closes), and MaxConns
// counts HTTP/2 connections like any other. MaxHeaderCount,
// MaxRequestBodySize and ReadBodyTimeout apply per stream, for native and
// compat handlers alike.
type HTTP2Config struct {
	// Disable turns HTTP/2 off: TLS connections offer only http/1.1.
	Disable bool
	// H2C serves cleartext HTTP/2 with prior knowledge (RFC 9113 §3.3) on
	// the same listener as HTTP/1.1: a connection that opens with the
	// HTTP/2 preface is served as HTTP/2, any other as HTTP/1.1.
	H2C bool
	// H2CUpgrade also accepts the HTTP/1.1 "Upgrade: h2c" dance (RFC 7540
	// §3.2, removed from RFC 9113), answering 101 and continuing in HTTP/2.
	// It implies H2C. Upgraded connections leave the engine's accounting,
	// like hijacked ones: Shutdown sends them GOAWAY but does not wait for
	// them, and Close does not close them; MaxConns still counts them. The
	// body of the upgrade request is read into memory: a request with a
	// body over 1 MiB or of unknown length (chunked) is not upgraded but
	// served over HTTP/1.1, and so is a request not in the full form of
	// RFC 7540 §3.2 (Upgrade listing h2c, Connection listing Upgrade and
	// HTTP2-Settings, exactly one valid HTTP2-Settings field).
	//
	// Leave H2CUpgrade off behind a reverse proxy: a proxy that passes
	// Upgrade through (for WebSocket) and relays the connection after a 101
	// would carry HTTP/2 requests it never inspects, past its own path and
	// access rules.
	H2CUpgrade bool

	// MaxConcurrentStreams is SETTINGS_MAX_CONCURRENT_STREAMS: how many
	// requests a client may have open on one connection at once, and so
	// how many handlers one connection can run at once (streams reset by
	// the client still count until their handler returns, and a client
	// that queues more than four times as many is sent GOAWAY: the rapid
	// reset defence, CVE-2023-44487). Zero means
	// DefaultMaxConcurrentStreams.
	MaxConcurrentStreams uint32
	// MaxReadFrameSize is SETTINGS_MAX_FRAME_SIZE, the largest frame the
	// server accepts, between 16 KiB and 16 MiB. Zero means 16 KiB, the
	// protocol's default.
	MaxReadFrameSize uint32
	// MaxReceiveBufferPerConnection and MaxReceiveBufferPerStream are the
	// flow-control windows granted to the client for request bodies: the
	// most request body the server buffers per connection and per stream.
	// Zero means 1 MiB per connection and 1 MiB per stream. Only what
	// handlers have read is granted back, so the connection window bounds
	// the request body one connection can make the server hold.
	MaxReceiveBufferPerConnection int32
	MaxReceiveBufferPerStream     int32
	// PingTimeout closes a connection whose client does not answer a PING
	// sent after SendPingTimeout of silence. Zero SendPingTimeout sends
	// none.
	SendPingTimeout time.Duration
	PingTimeout     time.Duration

	// InlineHandlers runs native handlers (not FromHTTP ones) on the
	// connection's own goroutine, the one that reads its frames, instead
	// of handing the streams to a pooled worker goroutine (one hand-off
	// per burst of new streams, plus a spare worker in case a handler
	// blocks): it saves those goroutine switches, a small part of the
	// cost of a small response since workers take streams in bursts.
	//
	// WARNING: AN INLINE HANDLER MUST NEVER BLOCK. While it runs, its
	// connection reads nothing: every other stream of that connection
	// waits, and so do PINGs, SETTINGS and WINDOW_UPDATEs. No sleeping,
	// no locks held by others, no database or upstream calls, no channel
	// waits, no waiting on Ctx.Done. Use it for handlers that compute
	// their answer from memory, as a static file server or a cache would.
	//
	// Only requests that are complete when their HEADERS arrive (no body:
	// GET, HEAD, DELETE...) run inline; requests with a body go to a
	// worker as usual, so an inline handler never waits for the client to
	// send. A response larger than the client's flow-control window makes
	// the handler process the connection's incoming frames itself until
	// the client grants more window (the usual WriteTimeout does not
	// apply to that wait); streams opened meanwhile run after it returns.
	// Requests arriving by "Upgrade: h2c" always run on a worker.
	InlineHandlers bool
}

// DefaultMaxConcurrentStreams is the default SETTINGS_MAX_CONCURRENT_STREAMS.
const DefaultMaxConcurrentStreams = h2.DefaultMaxConcurrentStreams

// ErrHijackHTTP2 is returned by Ctx.Hijack for a request that arrived over
// HTTP/2, whose connection carries other streams.
var ErrHijackHTTP2 = errors.New("riptide: cannot hijack an HTTP/2 stream")

// h2Preface is the HTTP/2 client connection preface (RFC 9113 §3.4).
const h2Preface = h2.Preface

// h2State is a Server's HTTP/2 machinery, built on first use.
type h2State struct {
	once sync.Once
	off  bool
	h2c  bool
	cfg  h2.Config // the engine's configuration, from HTTP2Config and the Server

	// The live connections, for Shutdown's GOAWAY.
	mu    sync.Mutex
	conns map[*h2.Conn]struct{}
	shut  bool
}

// h2 returns the HTTP/2 state, built from the Server fields once.
func (s *Server) h2() *h2State {
	st := &s.h2state
	st.once.Do(func() {
		s.init()
		cfg := s.HTTP2
		if cfg == nil {
			cfg = &HTTP2Config{}
		}
		st.off = cfg.Disable
		st.h2c = !cfg.Disable && (cfg.H2C || cfg.H2CUpgrade)
		st.cfg = h2.Config{
			MaxConcurrentStreams:          cfg.MaxConcurrentStreams,
			MaxReadFrameSize:              cfg.MaxReadFrameSize,
			MaxReceiveBufferPerConnection: cfg.MaxReceiveBufferPerConnection,
			MaxReceiveBufferPerStream:     cfg.MaxReceiveBufferPerStream,
			SendPingTimeout:               cfg.SendPingTimeout,
			PingTimeout:                   cfg.PingTimeout,
			MaxHeaderBytes:                s.cfg.limits.MaxHeadBytes,
			IdleTimeout:                   s.cfg.idle,
			WriteTimeout:                  s.cfg.write,
			ReadBodyTimeout:               s.cfg.readBody,
			MaxConnAge:                    s.cfg.maxAge,
			MaxRequests:                   s.cfg.maxReqs,
			Resets:                        &s.stats.h2Resets,
			ClientResets:                  &s.stats.h2ClientResets,
		}
		st.cfg.Handler = &h2Door{srv: s}
		if _, compat := s.Handler.(compatHandler); !compat {
			// A net/http handler may block: never inline.
			st.cfg.InlineHandlers = cfg.InlineHandlers
		}
	})
	return st
}

// h2Serve serves nc (its first bytes being rest) as an HTTP/2 connection
// until it ends, registered for Shutdown's GOAWAY meanwhile.
func (s *Server) h2Serve(nc net.Conn, rest []byte, sawPreface bool, up *h2.Upgrade) {
	st := s.h2()
	var in, out *atomic.Uint64
	if s.cfg.stats {
		sh := s.pickShard()
		in, out = &sh.bytesIn, &sh.bytesOut
	}
	hc := h2.NewConn(&st.cfg, nc, rest, in, out)
	st.register(hc, true)
	defer st.register(hc, false)
	hc.Serve(sawPreface, up)
}

// register adds hc to (or removes it from) the connections Shutdown tells
// to go away. A connection registered while draining gets its first
// stream served and then GOAWAY (as an HTTP/1.1 connection gets its first
// request answered with Connection: close), so a client that reached us
// after Drain is answered rather than turned away empty-handed.
func (st *h2State) register(hc *h2.Conn, add bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !add {
		delete(st.conns, hc)
		return
	}
	if st.conns == nil {
		st.conns = make(map[*h2.Conn]struct{})
	}
	st.conns[hc] = struct{}{}
	if st.shut {
		hc.GoAwayAfterFirst()
	}
}

// h2Shutdown starts a graceful HTTP/2 shutdown: every HTTP/2 connection is
// sent GOAWAY, finishes its open streams and closes. Called by
// Server.Shutdown.
func (s *Server) h2Shutdown() {
	st := &s.h2state
	st.mu.Lock()
	defer st.mu.Unlock()
	st.shut = true
	for hc := range st.conns {
		go hc.Shutdown()
	}
}

// serveH2 serves c as HTTP/2 when it is one: a TLS connection whose ALPN
// chose h2, or (with h2c on) a cleartext connection that opens with the
// HTTP/2 preface. It reports whether it did; the connection is then closed
// and released. Otherwise any bytes it read stay in c.rbuf for the
// HTTP/1.1 loop. It runs first on the connection's goroutine, under the
// read-header deadline.
func (c *conn) serveH2() bool {
	s := c.srv
	if tc, ok := c.nc.(*tls.Conn); ok {
		// A failed handshake is left to the HTTP/1.1 loop, whose first
		// read reports it and closes the connection.
		if tc.Handshake() != nil || tc.ConnectionState().NegotiatedProtocol != http2.NextProtoTLS {
			return false
		}
		if st := s.h2(); !st.off {
			c.runH2(nil, false)
			return true
		}
		return false
	}
	if s.HTTP2 == nil || !s.h2().h2c {
		return false
	}
	for c.w < len(h2Preface) {
		if string(c.rbuf[:c.w]) != h2Preface[:c.w] {
			return c.dropNonHTTP()
		}
		if c.fill() != nil {
			return false
		}
	}
	if string(c.rbuf[:len(h2Preface)]) != h2Preface {
		return c.dropNonHTTP()
	}
	var rest []byte
	if c.w > len(h2Preface) {
		// Frames that arrived with the preface are replayed first.
		rest = bytes.Clone(c.rbuf[len(h2Preface):c.w])
	}
	c.r, c.w = 0, 0
	c.runH2(rest, true)
	return true
}

// dropNonHTTP closes, without an answer, a cleartext connection that
// opened with neither the HTTP/2 preface nor an HTTP/1.x request line
// (RFC 9113 §3.4: an invalid preface is a connection error; answering it
// with an HTTP/1.1 400 would be gibberish to an HTTP/2 client). It reports
// whether it did; anything that may still be HTTP/1.x is left to the
// HTTP/1.1 loop, which has the same deadline.
func (c *conn) dropNonHTTP() bool {
	for {
		b := c.rbuf[:c.w]
		for len(b) > 0 && (b[0] == '\r' || b[0] == '\n') {
			b = b[1:] // empty lines before a request line are allowed
		}
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line := bytes.TrimSuffix(b[:i], []byte("\r"))
			if len(line) > 9 && bytes.HasPrefix(line[len(line)-8:], []byte("HTTP/1.")) {
				return false
			}
			c.closeConn()
			return true
		}
		if c.w == len(c.rbuf) || c.fill() != nil {
			return false
		}
	}
}

// runH2 serves HTTP/2 on c.nc (its first bytes being rest, read with the
// preface) until the connection ends, then closes and releases c.
func (c *conn) runH2(rest []byte, sawPreface bool) {
	s := c.srv
	c.setState(StateActive)
	// The HTTP/1.1 buffers (about 37 KiB by default) sit unused for the
	// HTTP/2 connection's life (each stream has its own): let them go, so
	// that an idle HTTP/2 connection does not hold them, and give the
	// conn new ones before it is pooled. rest is a copy (serveH2).
	c.rbuf, c.wbuf, c.ctx.resp.body = nil, nil, nil
	c.r, c.w = 0, 0
	s.h2Serve(c.nc, rest, sawPreface, nil)
	c.rbuf = make([]byte, c.cfg.readBuf)
	c.wbuf = make([]byte, 0, c.cfg.writeBuf+1024)
	c.ctx.resp.body = make([]byte, 0, c.cfg.writeBuf)
	c.setState(StateClosed)
	c.untrack()
	c.statClose()
	putConn(c)
}

// IsHTTP2 reports whether the request arrived over HTTP/2. The request view
// is the same either way (Request() shows it as HTTP/1.1: version 1.1, the
// :authority as Host; a body of unknown length reports Chunked and
// ContentLength -1, with no Transfer-Encoding field).
func (x *Ctx) IsHTTP2() bool {
	return x.conn.ex.protoMajor() == 2
}

// h2UpgradeSettings returns the HTTP2-Settings payload of an HTTP/1.1
// request that asks to upgrade to h2c in the full form of RFC 7540 §3.2,
// and ok false for any other request, which is then served as HTTP/1.1:
//
//   - Upgrade lists "h2c";
//   - Connection lists both "Upgrade" and "HTTP2-Settings" (§3.2.1: the
//     settings are hop-by-hop, so a proxy that forwards Upgrade without
//     them, as nginx's WebSocket pass-through does with its fixed
//     "Connection: upgrade", does not upgrade the connection behind it);
//   - exactly one HTTP2-Settings field, whose value is base64url (padding
//     allowed) of a SETTINGS payload: whole 6-byte settings (§3.2.1).
//
// Field names and list items compare case-insensitively.
func h2UpgradeSettings(x *Ctx) (settings []byte, ok bool) {
	if x.req.Minor != 1 {
		return nil, false
	}
	var upgrade, connUpgrade, connSettings bool
	var value []byte
	n := 0
	for _, f := range x.req.Headers {
		switch {
		case f.Key == h1.HeaderUpgrade:
			upgrade = upgrade || ascii.HasToken(f.Value, "h2c")
		case f.Key == h1.HeaderConnection:
			connUpgrade = connUpgrade || ascii.HasToken(f.Value, "upgrade")
			connSettings = connSettings || ascii.HasToken(f.Value, "http2-settings")
		case f.Key == h1.Unknown && ascii.EqualFold(f.Name, "http2-settings"):
			value = f.Value
			n++
		}
	}
	if !upgrade || !connUpgrade || !connSettings || n != 1 {
		return nil, false
	}
	settings, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(string(value), "="))
	if err != nil || len(settings)%6 != 0 {
		return nil, false
	}
	return settings, true
}

// h2Upgrade handles an "Upgrade: h2c" request when HTTP2Config.H2CUpgrade
// is set: it answers 101 and serves the connection as HTTP/2, the request
// that asked being stream 1. It reports whether it took the request; the
// engine calls it for requests with Connection: upgrade, before the handler.
func (s *Server) h2Upgrade(x *Ctx) bool {
	if s.HTTP2 == nil || !s.HTTP2.H2CUpgrade || s.HTTP2.Disable {
		return false
	}
	if _, ok := x.conn.nc.(*tls.Conn); ok {
		return false // h2c is for cleartext only (RFC 7540 §3.2)
	}
	if x.req.Chunked || x.req.ContentLength > h2UpgradeMaxBody {
		// x/net needs the upgrade request's body whole: one too large to
		// buffer (or of unknown length) is served over HTTP/1.1 instead,
		// as RFC 9113 §3.2 lets a server ignore Upgrade.
		return false
	}
	settings, ok := h2UpgradeSettings(x)
	if !ok {
		return false
	}
	s.h2UpgradeConn(x, settings)
	return true
}

// h2UpgradeMaxBody is the largest upgrade request body buffered for an h2c
// upgrade.
const h2UpgradeMaxBody = 1 << 20

func (s *Server) h2UpgradeConn(x *Ctx, settings []byte) {
	up, err := h2UpgradeRequest(x, settings)
	if err != nil {
		// The body read failed (the client stopped early, a timeout) or
		// the target cannot form a URL; a failed body closes the
		// connection after this answer.
		x.canned(400)
		return
	}
	nc, buffered, err := x.Hijack()
	if err != nil {
		return
	}
	x.conn.h2up = true
	// The server goes on owning the connection: MaxConns counts it as one
	// connection from before the 101 goes out (a client may open its next
	// connection as soon as it reads the 101).
	s.nconns.Add(1)
	x.conn.untrack()
	n, err := io.WriteString(nc, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n")
	x.conn.nout += uint64(n) // flushed to the statistics when the handler returns
	if err != nil {
		nc.Close()
		s.nconns.Add(-1)
		return
	}
	go func() {
		defer s.nconns.Add(-1)
		s.h2Serve(nc, buffered, false, up)
	}()
}

// h2UpgradeRequest takes the upgrade request, with its body read whole:
// it becomes stream 1, already half-closed. A target that cannot form a
// URL is refused, as an *http.Request could not be built for it.
func h2UpgradeRequest(x *Ctx, settings []byte) (*h2.Upgrade, error) {
	// h2Upgrade took only bodies of a declared length up to the limit.
	body, err := io.ReadAll(x.Body())
	if err != nil {
		return nil, err
	}
	if _, err := url.Parse("http://" + string(x.req.Host) + string(x.req.Target)); err != nil {
		return nil, err
	}
	return h2.NewUpgrade(&x.req, settings, body), nil
}
