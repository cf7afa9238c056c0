package riptide

// HTTP/2 for both front doors, on golang.org/x/net/http2's server
// connection (ServeConn): over TLS when ALPN picks "h2" (see tls.go), and in
// cleartext with prior knowledge ("h2c") when HTTP2Config.H2C is set. The
// engine's conn stays the unit of accounting (MaxConns, Shutdown, Close,
// ConnState); only its HTTP/1.1 loop is replaced by the HTTP/2 one.
//
// Compat handlers (FromHTTP) are handed to x/net as they are: x/net builds
// the *http.Request and ResponseWriter itself, so compat over HTTP/2 costs
// exactly what net/http's HTTP/2 costs. Native handlers run through the
// adapter in h2native.go.

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"
)

// HTTP2Config configures HTTP/2 on a [Server]. A nil Server.HTTP2 means the
// defaults: HTTP/2 over TLS on, h2c off.
//
// Other limits come from the Server fields, as for HTTP/1.1:
// MaxHeaderBytes is the header list limit (SETTINGS_MAX_HEADER_LIST_SIZE,
// 431 beyond), IdleTimeout closes idle connections with GOAWAY,
// ReadHeaderTimeout bounds the TLS handshake and the h2c preface,
// WriteTimeout bounds each connection write, and MaxConns counts HTTP/2
// connections like any other. For native handlers MaxHeaderCount,
// MaxRequestBodySize and ReadBodyTimeout apply per stream; for compat
// handlers MaxRequestBodySize does.
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
	// them, and Close does not close them. The body of the upgrade request
	// is read into memory (at most 1 MiB, else 413).
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
	// Zero means x/net/http2's defaults (1 MiB per connection, 1 MiB per
	// stream).
	MaxReceiveBufferPerConnection int32
	MaxReceiveBufferPerStream     int32
	// PingTimeout closes a connection whose client does not answer a PING
	// sent after SendPingTimeout of silence. Zero SendPingTimeout sends
	// none.
	SendPingTimeout time.Duration
	PingTimeout     time.Duration
}

// DefaultMaxConcurrentStreams is the default SETTINGS_MAX_CONCURRENT_STREAMS.
const DefaultMaxConcurrentStreams = 100

// ErrHijackHTTP2 is returned by Ctx.Hijack for a request that arrived over
// HTTP/2, whose connection carries other streams.
var ErrHijackHTTP2 = errors.New("riptide: cannot hijack an HTTP/2 stream")

// h2Preface is the HTTP/2 client connection preface (RFC 9113 §3.4).
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// h2State is a Server's HTTP/2 machinery, built on first use.
type h2State struct {
	once sync.Once
	off  bool
	h2c  bool
	// srv serves connections; base carries the settings x/net reads from
	// an http.Server (limits, HTTP2Config) and is where graceful shutdown
	// is signalled (its Shutdown runs the GOAWAY hook x/net registers).
	srv  *http2.Server //lint:ignore SA1019 ServeConn is the only way to serve a net.Conn we accepted ourselves
	base *http.Server
}

// h2 returns the HTTP/2 state, building it from the Server fields once.
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
		streams := cfg.MaxConcurrentStreams
		if streams == 0 {
			streams = DefaultMaxConcurrentStreams
		}
		frame := cfg.MaxReadFrameSize
		if frame == 0 {
			frame = 16 << 10
		}
		st.base = &http.Server{
			MaxHeaderBytes: s.cfg.limits.MaxHeadBytes,
			IdleTimeout:    s.cfg.idle,
			HTTP2: &http.HTTP2Config{
				MaxConcurrentStreams:          int(streams),
				MaxReadFrameSize:              int(frame),
				MaxReceiveBufferPerConnection: int(cfg.MaxReceiveBufferPerConnection),
				MaxReceiveBufferPerStream:     int(cfg.MaxReceiveBufferPerStream),
				SendPingTimeout:               cfg.SendPingTimeout,
				PingTimeout:                   cfg.PingTimeout,
				WriteByteTimeout:              s.cfg.write,
			},
			ErrorLog: slog.NewLogLogger(s.logger().Handler(), slog.LevelDebug),
		}
		//lint:ignore SA1019 see h2State.srv
		st.srv = &http2.Server{IdleTimeout: s.cfg.idle}
		// Registers the GOAWAY-on-shutdown hook on base (and ALPN names on
		// base.TLSConfig, unused: tls.go sets up the listener's config).
		//lint:ignore SA1019 see h2State.srv
		if err := http2.ConfigureServer(st.base, st.srv); err != nil {
			s.logger().Error("riptide: configuring HTTP/2", "err", err)
			st.off, st.h2c = true, false
		}
	})
	return st
}

// h2Shutdown starts a graceful HTTP/2 shutdown: every HTTP/2 connection is
// sent GOAWAY, finishes its open streams and closes. Called by
// Server.Shutdown; a no-op when HTTP/2 was never used.
func (s *Server) h2Shutdown() {
	st := &s.h2state
	st.once.Do(func() { st.off = true }) // never used: it stays off
	if st.base == nil {
		return
	}
	// base serves nothing itself: Shutdown only runs the registered hooks.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = st.base.Shutdown(ctx)
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
			c.runH2(c.nc, false)
			return true
		}
		return false
	}
	if s.HTTP2 == nil || !s.h2().h2c {
		return false
	}
	for c.w < len(h2Preface) {
		if string(c.rbuf[:c.w]) != h2Preface[:c.w] {
			return false
		}
		if c.fill() != nil {
			return false
		}
	}
	if string(c.rbuf[:len(h2Preface)]) != h2Preface {
		return false
	}
	nc := c.nc
	if c.w > len(h2Preface) {
		// Frames that arrived with the preface are replayed first.
		nc = &h2PrefixConn{Conn: c.nc, buf: bytes.Clone(c.rbuf[len(h2Preface):c.w])}
	}
	c.r, c.w = 0, 0
	c.runH2(nc, true)
	return true
}

// runH2 serves HTTP/2 on nc (c.nc, or c.nc with replayed bytes) until the
// connection ends, then closes and releases c.
func (c *conn) runH2(nc net.Conn, sawPreface bool) {
	s := c.srv
	st := s.h2()
	c.setState(StateActive)
	// x/net runs its own timeouts from here on.
	_ = c.nc.SetDeadline(time.Time{})
	st.srv.ServeConn(nc, &http2.ServeConnOpts{ //lint:ignore SA1019 see h2State.srv
		BaseConfig:       st.base,
		Handler:          s.h2Handler(c.nc),
		SawClientPreface: sawPreface,
	})
	c.nc.Close()
	c.setState(StateClosed)
	c.untrack()
	putConn(c)
}

// h2Handler returns the http.Handler that serves the streams of the HTTP/2
// connection nc: the native adapter, or for a compat handler the
// http.Handler itself (x/net builds its *http.Request and ResponseWriter,
// as net/http's HTTP/2 does), wrapped only for what the server's config
// asks of it.
func (s *Server) h2Handler(nc net.Conn) http.Handler {
	ch, ok := s.Handler.(compatHandler)
	if !ok {
		return &h2NativeHandler{srv: s, nc: nc}
	}
	return &h2CompatHandler{srv: s, h: ch.h, maxBody: s.cfg.maxBody}
}

// h2CompatHandler runs a compat handler on an HTTP/2 stream with the
// server's rules that x/net does not know: panics logged through
// Server.Logger (the stream is then reset, as net/http's HTTP/2 does), the
// Server header, and MaxRequestBodySize (413 for a larger declared length,
// ErrBodyTooLarge-like failure past it for a streamed one).
type h2CompatHandler struct {
	srv     *Server
	h       http.Handler
	maxBody int64
}

func (ch *h2CompatHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler && v != ErrAbortHandler {
				ch.srv.logger().Error("riptide: panic serving request",
					"remote", r.RemoteAddr, "method", r.Method, "target", r.RequestURI,
					"panic", v, "stack", string(debug.Stack()))
			}
			panic(http.ErrAbortHandler)
		}
	}()
	if ch.srv.Name != "" {
		w.Header().Set("Server", ch.srv.Name)
	}
	if ch.maxBody > 0 {
		if r.ContentLength > ch.maxBody {
			http.Error(w, "413 Request Entity Too Large", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, ch.maxBody)
	}
	ch.h.ServeHTTP(w, r)
}

// IsHTTP2 reports whether the request arrived over HTTP/2. The request view
// is the same either way (Request() shows it as HTTP/1.1: version 1.1, the
// :authority as Host).
func (x *Ctx) IsHTTP2() bool {
	_, ok := x.conn.nc.(*h2Stream)
	return ok
}

// h2PrefixConn is a net.Conn whose first reads return buf.
type h2PrefixConn struct {
	net.Conn
	buf []byte
}

func (p *h2PrefixConn) Read(b []byte) (int, error) {
	if len(p.buf) > 0 {
		n := copy(b, p.buf)
		p.buf = p.buf[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// h2IsUpgrade reports an HTTP/1.1 request asking to upgrade to h2c
// (Connection: Upgrade, HTTP2-Settings; Upgrade: h2c; RFC 7540 §3.2).
func h2IsUpgrade(x *Ctx) bool {
	return x.req.Minor == 1 && equalFold(x.req.Get("Upgrade"), "h2c") && x.req.Get("HTTP2-Settings") != nil
}

// h2Upgrade handles an "Upgrade: h2c" request when HTTP2Config.H2CUpgrade
// is set: it answers 101 and serves the connection as HTTP/2, the request
// that asked being stream 1. It reports whether it took the request; the
// engine calls it for requests with Connection: upgrade, before the handler.
func (s *Server) h2Upgrade(x *Ctx) bool {
	if s.HTTP2 == nil || !s.HTTP2.H2CUpgrade || s.HTTP2.Disable || !h2IsUpgrade(x) {
		return false
	}
	if _, ok := x.conn.nc.(*tls.Conn); ok {
		return false // h2c is for cleartext only (RFC 7540 §3.2)
	}
	s.h2UpgradeConn(x)
	return true
}

func (s *Server) h2UpgradeConn(x *Ctx) {
	settings, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(string(x.req.Get("HTTP2-Settings")), "="))
	if err != nil {
		x.SetStatus(400)
		x.WriteString("bad HTTP2-Settings\n")
		return
	}
	req, err := h2UpgradeRequest(x)
	if err != nil {
		x.SetStatus(413)
		x.WriteString("upgrade request body too large\n")
		return
	}
	nc, buffered, err := x.Hijack()
	if err != nil {
		return
	}
	if _, err := io.WriteString(nc, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n"); err != nil {
		nc.Close()
		return
	}
	if len(buffered) > 0 {
		nc = &h2PrefixConn{Conn: nc, buf: buffered}
	}
	st := s.h2()
	h := s.h2Handler(nc)
	go func() {
		st.srv.ServeConn(nc, &http2.ServeConnOpts{ //lint:ignore SA1019 see h2State.srv
			BaseConfig:     st.base,
			Handler:        h,
			UpgradeRequest: req,
			Settings:       settings,
		})
		nc.Close()
	}()
}

// h2UpgradeRequest copies the upgrade request into an *http.Request, with
// its body read whole (x/net requires it).
func h2UpgradeRequest(x *Ctx) (*http.Request, error) {
	const maxBody = 1 << 20
	body, err := io.ReadAll(io.LimitReader(x.Body(), maxBody+1))
	if err != nil || len(body) > maxBody {
		return nil, errors.New("upgrade body too large")
	}
	r, err := http.NewRequest(string(x.req.Method), "http://"+string(x.req.Host)+string(x.req.Target), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	r.RequestURI = string(x.req.Target)
	r.Host = string(x.req.Host)
	r.RemoteAddr = x.RemoteAddr().String()
	for _, f := range x.req.Headers {
		r.Header.Add(string(f.Name), string(f.Value))
	}
	return r, nil
}
