package riptide

// HTTP/2 for both front doors, on riptide's own server connection engine
// (internal/h2, adapted here): over TLS when ALPN picks "h2", and in
// cleartext with prior knowledge ("h2c") when HTTP2Config.H2C is set, or
// after "Upgrade: h2c" with H2CUpgrade; serve.go makes that choice for
// each connection. The engine's conn stays the unit of accounting
// (MaxConns, Shutdown, Close, ConnState); only its HTTP/1.1 loop is
// replaced by the HTTP/2 one.
//
// Every stream is served by a Ctx whose exchange is the stream (h2ctx.go),
// with no HTTP/1.1 text in between; compat handlers (FromHTTP) run on that
// Ctx through the same compat door as over HTTP/1.1 (compat.go).

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riptide-http/riptide/internal/h2"
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
	// reset defence, CVE-2023-44487). A stream whose response has ended
	// no longer counts though its handler runs on: up to as many such
	// handlers run beyond the limit. Zero means
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

	// EnableConnectProtocol serves WebSocket (and other protocols) over
	// HTTP/2 streams (RFC 8441) and HTTP/3 streams (RFC 9220): the server
	// sends SETTINGS_ENABLE_CONNECT_PROTOCOL and accepts extended CONNECT
	// requests (:method CONNECT with :protocol, :scheme, :path and
	// :authority), which reach the Handler as method CONNECT with the
	// :path as target and Ctx.ConnectProtocol (or, on the compat door, the
	// ":protocol" header, as net/http sets it) naming the protocol. A
	// handler takes the stream over with Ctx.Hijack, after which it is a
	// byte stream both ways (websocket.Upgrade and websocket.Accept do
	// this). Off by default, a request with :protocol is malformed
	// (RST_STREAM PROTOCOL_ERROR).
	//
	// Turn it on only when every route of the origin can answer an
	// extended CONNECT (golang/go#71128): a browser that sees the setting
	// opens every WebSocket to this origin over HTTP/2 (over the
	// connection it already has), never over HTTP/1.1. A route that
	// cannot serve one must answer a non-2xx status (websocket.Upgrade
	// answers 501 off its paths, a router 404 or 405); the browser then
	// reports the WebSocket as failed rather than retrying over HTTP/1.1.
	EnableConnectProtocol bool
}

// DefaultMaxConcurrentStreams is the default SETTINGS_MAX_CONCURRENT_STREAMS.
const DefaultMaxConcurrentStreams = h2.DefaultMaxConcurrentStreams

// ErrHijackHTTP2 is returned by Ctx.Hijack for a request that arrived over
// HTTP/2, whose connection carries other streams.
var ErrHijackHTTP2 = errors.New("riptide: cannot hijack an HTTP/2 stream")

// ErrHijackHTTP3 is returned by Ctx.Hijack for a request that arrived over
// HTTP/3, whose connection carries other streams.
var ErrHijackHTTP3 = errors.New("riptide: cannot hijack an HTTP/3 stream")

// h2Preface is the HTTP/2 client connection preface (RFC 9113 §3.4).
const h2Preface = h2.Preface

// h2State is a Server's HTTP/2 machinery, built on first use.
type h2State struct {
	once sync.Once
	off  bool
	h2c  bool
	cfg  h2.Config // the engine's configuration, from HTTP2Config and the Server
	// parkDelay is how long a connection on the event loop stays quiet,
	// with no stream and nothing to send, before it parks (h2.Config's
	// ParkDelay). Zero, the value served: it parks at once, as an
	// HTTP/1.1 keep-alive connection parks when its socket is empty (with
	// a delay, connections that open in a burst hold their workers until
	// it passes, and the engine keeps that many workers a while after).
	// Set only by tests before the first connection (BenchmarkH2Engines
	// compares the two).
	parkDelay time.Duration

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
			ParkDelay:                     st.parkDelay,
			Resets:                        &s.stats.h2Resets,
			ClientResets:                  &s.stats.h2ClientResets,
			EnableConnectProtocol:         cfg.EnableConnectProtocol,
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
	hc := s.h2Conn(nc, rest)
	defer s.h2state.register(hc, false)
	hc.Serve(sawPreface, up)
}

// h2Conn makes the HTTP/2 connection for nc (its first bytes being rest),
// registered for Shutdown's GOAWAY: the caller unregisters it when it
// ends.
func (s *Server) h2Conn(nc net.Conn, rest []byte) *h2.Conn {
	st := s.h2()
	var in, out *atomic.Uint64
	if s.cfg.stats {
		sh := s.pickShard()
		in, out = &sh.bytes.In, &sh.bytes.Out
	}
	hc := h2.NewConn(&st.cfg, nc, rest, in, out)
	st.register(hc, true)
	return hc
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

// IsHTTP2 reports whether the request arrived over HTTP/2. The request view
// is the same either way (Request() shows it as HTTP/1.1: version 1.1, the
// :authority as Host; a body of unknown length reports Chunked and
// ContentLength -1, with no Transfer-Encoding field).
func (x *Ctx) IsHTTP2() bool {
	return x.conn.ex.protoMajor() == 2
}
