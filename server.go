package riptide

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/clock"
	"github.com/riptide-http/riptide/internal/netx"
)

// Handler responds to one HTTP request.
//
// ServeCtx runs on a goroutine the engine picks (see [Engine]): the
// connection's own, a pooled worker of the event loop, or with EngineOnLoop
// the loop's goroutine. The *Ctx, and every byte slice obtained from it, is
// owned by the server and reused for the next request on the connection
// (or stream) as soon as ServeCtx returns: it is not valid to
// use the Ctx, its request slices, its body reader or anything else obtained
// from it after (or concurrently with) the return of ServeCtx. Copy what must
// outlive the call.
type Handler interface {
	ServeCtx(c *Ctx)
}

// HandlerFunc adapts an ordinary function to a [Handler].
type HandlerFunc func(c *Ctx)

// ServeCtx calls f(c).
func (f HandlerFunc) ServeCtx(c *Ctx) { f(c) }

// Defaults used when a Server field is zero.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultReadBufferSize    = 4 << 10
	DefaultWriteBufferSize   = 16 << 10
	// DefaultMaxDrainBytes is how much unread request body the server reads
	// and discards to keep a connection alive; a larger remainder closes it.
	DefaultMaxDrainBytes = 256 << 10
	// DefaultMaxReadBodySize bounds Ctx.ReadBody, which buffers a whole
	// body, when Server.MaxRequestBodySize is zero (net/http's ParseForm
	// stops at the same 10 MiB). Streamed bodies are not bounded by it.
	DefaultMaxReadBodySize = 10 << 20
)

// ErrServerClosed is returned by Serve and ListenAndServe after Shutdown or
// Close. It is http.ErrServerClosed itself, so that code ported from
// net/http (err != http.ErrServerClosed, errors.Is) treats a clean
// shutdown as one.
var ErrServerClosed = http.ErrServerClosed

// Server serves HTTP/1.1, and HTTP/2 over TLS (ALPN) and cleartext (h2c,
// with HTTP2), on net.Listeners. The zero value is a usable server
// with safe limits on request heads, header counts, slow clients, idle
// connections and buffered bodies (see each field); as in net/http, a body
// the handler streams, the number of connections and the time to write a
// response are not limited unless set (MaxRequestBodySize, MaxConns,
// WriteTimeout). docs/security.md lists every limit. A nil Handler answers
// 404 to everything. Fields must not be changed after the first call to
// Serve.
type Server struct {
	// Handler serves every request. Nil answers 404.
	Handler Handler

	// Name, when not empty, is sent as the Server header of every response.
	Name string

	// ReadHeaderTimeout bounds the time to read a request head, counted
	// from its first byte (from the accept for a connection's first
	// request), so slowloris connections are closed. Zero means
	// DefaultReadHeaderTimeout; negative means no limit.
	ReadHeaderTimeout time.Duration
	// ReadBodyTimeout bounds the time to read a request body, counted from
	// the first body read that waits on the network. Zero or negative
	// means no limit (bodies are streamed, so a slow body costs a blocked
	// handler, not memory).
	ReadBodyTimeout time.Duration
	// WriteTimeout bounds each write of response bytes to the network
	// (re-armed lazily like IdleTimeout). Zero or negative means no limit.
	WriteTimeout time.Duration
	// IdleTimeout bounds the wait for the next request on a keep-alive
	// connection. Zero means DefaultIdleTimeout; negative means no limit.
	// To keep busy connections from re-arming a timer per request, a
	// timeout of 4s or more is re-armed only when a quarter of it has
	// passed, so it may fire up to a quarter early.
	IdleTimeout time.Duration

	// MaxHeaderBytes bounds a request head in bytes (431 beyond). Zero
	// means h1.DefaultLimits.MaxHeadBytes.
	MaxHeaderBytes int
	// MaxHeaderCount bounds the number of request header fields (431
	// beyond). Zero means h1.DefaultLimits.MaxHeaders.
	MaxHeaderCount int
	// MaxRequestBodySize bounds a request body in bytes: a larger declared
	// Content-Length is answered 413 before the handler runs, and a chunked
	// body that grows past it fails the handler's read with
	// ErrBodyTooLarge and closes the connection. Zero means no limit for a
	// body the handler streams (Ctx.Body, and the compat door's
	// Request.Body, as in net/http: the handler decides how much it reads)
	// and DefaultMaxReadBodySize for Ctx.ReadBody, which holds the whole
	// body in memory. Negative means no limit at all.
	MaxRequestBodySize int64
	// MaxConns bounds the number of open connections, of every protocol
	// together: HTTP/1.1 and HTTP/2 connections from their accept, HTTP/3
	// ones once their address is validated (see the http3 module). A TCP
	// connection accepted beyond it is answered 503 with Connection: close
	// and closed; a QUIC one is refused. Zero means no limit.
	MaxConns int
	// MaxRequestsPerConn closes a connection after this many requests:
	// over HTTP/1.1 the last response carries Connection: close; over
	// HTTP/2 the stream that reaches the count is the last one the
	// connection takes: GOAWAY names it as the last stream, the open
	// streams finish, and the connection closes (a client's streams sent
	// after it are refused, for it to retry on a new connection). Zero
	// means no limit.
	MaxRequestsPerConn int
	// MaxConnAge makes connections older than this go away, so that
	// keep-alive clients reconnect and load spreads over new servers in a
	// fleet. An HTTP/1.1 connection closes at its first request after it
	// is this old (with Connection: close on its response); an HTTP/2
	// connection is sent GOAWAY when it reaches the age (counted from the
	// start of HTTP/2 on it), busy or idle, naming the highest stream it
	// has taken as the last; the streams open then finish and the
	// connection closes. Zero means no limit.
	MaxConnAge time.Duration
	// DisableKeepAlive answers every request with Connection: close.
	DisableKeepAlive bool

	// ReadBufferSize is the initial per-connection read buffer. It grows up
	// to MaxHeaderBytes for large heads. Zero means DefaultReadBufferSize.
	ReadBufferSize int
	// WriteBufferSize is how much response body is buffered before the
	// response is committed and streamed (chunked, unless the handler set a
	// Content-Length); a body that fits is sent with Content-Length. Zero
	// means DefaultWriteBufferSize.
	WriteBufferSize int

	// DisableStats turns off the per-request statistics (requests,
	// responses, durations, bytes; see Stats), which cost a few atomic
	// adds and two clock reads per request. Connection events are counted
	// regardless.
	DisableStats bool

	// ConnState, if set, is called on every connection state change. It
	// runs on the goroutine serving the connection and must be quick (on
	// the event-loop engine, StateClosed for an idle connection that the
	// client closed or that timed out is reported from an event loop or its
	// scanner: a hook that blocks there stalls other connections). On
	// the event-loop engine the net.Conn is the engine's own socket type
	// (not a *net.TCPConn; it implements syscall.Conn), the same value in
	// every call for one connection.
	ConnState func(net.Conn, ConnState)

	// Logger receives handler panics and accept errors. Nil means
	// slog.Default().
	Logger *slog.Logger

	// ErrorHandler, when set, writes the error responses that Ctx.Error
	// answers with: those of the native middleware (401, 413, 500, 503),
	// of the router (404, 405), of Ctx.BindJSON (400, 413, 415) and of a
	// native handler with no Handler set. Set it to give a JSON API one
	// error format without replacing each of them; msg is the plain-text
	// message (e.g. "Unauthorized"). Nil answers as http.Error does.
	ErrorHandler func(c *Ctx, code int, msg string)

	// TLSConfig is the TLS configuration used by ServeTLS and
	// ListenAndServeTLS (tls.go); nil means a default one. ALPN protocols
	// h2 and http/1.1 are added to it unless HTTP2.Disable is set.
	TLSConfig *tls.Config
	// HTTP2 configures HTTP/2 (h2.go): over TLS it is on by default, in
	// cleartext (h2c) it is off unless HTTP2.H2C is set. Nil means the
	// defaults.
	HTTP2 *HTTP2Config

	// Engine chooses how connections are served: EngineAuto (the zero
	// value), EngineGoroutine, EngineEventLoop or EngineOnLoop; see Engine.
	Engine Engine

	// TLSEngine chooses how ServeTLS and ListenAndServeTLS serve their
	// connections: EngineAuto (the zero value) follows Engine, so TLS runs
	// on the event loop on Linux unless Engine asks for the goroutine
	// engine; EngineEventLoop (or EngineOnLoop, which serves TLS as
	// EngineEventLoop) parks idle TLS connections on the event loop
	// without a goroutine or buffers (Linux, a plain TCP listener without
	// ProxyProtocol; elsewhere the goroutine engine); EngineGoroutine
	// serves each TLS connection on a goroutine of its own.
	TLSEngine Engine

	// ProxyProtocol, when set, requires a PROXY protocol header (v1 or v2)
	// on every connection, accepted only from trusted networks (proxy.go).
	ProxyProtocol *ProxyConfig
	// Forwarded, when set, takes the client address from the header its
	// Header names (X-Forwarded-For unless set to Forwarded; never the one
	// the request chooses) of requests that come from trusted proxies
	// (forwarded.go). Off by default.
	Forwarded *ForwardedConfig

	// stats are the counters behind Stats (stats.go).
	stats serverStats
	// acceptLog rate-limits the accept-error lines (acceptError).
	acceptLog acceptLog

	// h2state is the HTTP/2 machinery (h2.go), built on first use.
	h2state h2State
	// h3state is the HTTP/3 state (h3.go), used once the http3 module serves.
	h3state h3State

	// httpShim is what compat requests find under http.ServerContextKey
	// (compat.go), built on first use.
	httpShim atomic.Pointer[http.Server]

	once       sync.Once
	cfg        config
	cfgErr     error // validate's verdict (config.go)
	mu         sync.Mutex
	listeners  map[*net.Listener]struct{}
	conns      map[*conn]struct{}
	nconns     atomic.Int64
	inShutdown atomic.Bool
	draining   atomic.Bool // Drain or Shutdown: connections close after their response
	closed     chan struct{}
	onShutdown []func() // RegisterOnShutdown; guarded by mu
	connsDone  sync.WaitGroup
	acceptors  sync.WaitGroup // running Serve loops
	el         elServer       // the event-loop groups (engine_linux.go)
}

// config is the normalised copy of the Server fields the hot path reads.
type config struct {
	readHeader, readBody, write, idle time.Duration
	limits                            h1.Limits
	maxBody                           int64
	// readBodyMax bounds Ctx.ReadBody; 0 means no limit.
	readBodyMax       int64
	maxReqs           int
	maxAge            time.Duration
	readBuf, writeBuf int
	keepAlive         bool
	stats             bool
	// serverHeader is "Server: name\r\n" or empty.
	serverHeader []byte
}

func (s *Server) init() {
	s.once.Do(func() {
		s.cfgErr = s.validate()
		c := &s.cfg
		c.readHeader = orDefault(s.ReadHeaderTimeout, DefaultReadHeaderTimeout)
		c.idle = orDefault(s.IdleTimeout, DefaultIdleTimeout)
		c.readBody = max(s.ReadBodyTimeout, 0)
		c.write = max(s.WriteTimeout, 0)
		c.limits = h1.DefaultLimits
		if s.MaxHeaderBytes > 0 {
			c.limits.MaxHeadBytes = s.MaxHeaderBytes
			c.limits.MaxRequestLine = min(c.limits.MaxRequestLine, s.MaxHeaderBytes)
			c.limits.MaxHeaderLine = min(c.limits.MaxHeaderLine, s.MaxHeaderBytes)
		}
		if s.MaxHeaderCount > 0 {
			c.limits.MaxHeaders = s.MaxHeaderCount
		}
		c.maxBody = max(s.MaxRequestBodySize, 0)
		c.readBodyMax = c.maxBody
		if s.MaxRequestBodySize == 0 {
			c.readBodyMax = DefaultMaxReadBodySize
		}
		c.maxReqs = max(s.MaxRequestsPerConn, 0)
		c.maxAge = max(s.MaxConnAge, 0)
		c.readBuf = s.ReadBufferSize
		if c.readBuf <= 0 {
			c.readBuf = DefaultReadBufferSize
		}
		c.writeBuf = s.WriteBufferSize
		if c.writeBuf <= 0 {
			c.writeBuf = DefaultWriteBufferSize
		}
		c.keepAlive = !s.DisableKeepAlive
		c.stats = !s.DisableStats
		if s.Name != "" {
			c.serverHeader = h1.AppendHeader(nil, "Server", s.Name)
		}
		s.listeners = make(map[*net.Listener]struct{})
		s.conns = make(map[*conn]struct{})
		s.closed = make(chan struct{})
	})
}

// orDefault maps zero to def and negative to 0 (no limit).
func orDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

func (s *Server) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// ListenAndServe listens on the TCP address addr and calls Serve. It always
// returns a non-nil error; ErrServerClosed after Shutdown or Close.
func (s *Server) ListenAndServe(addr string) error {
	if s.shuttingDown() {
		return ErrServerClosed
	}
	if err := s.configErr(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// Serve accepts connections on ln and serves them on the engine of
// s.Engine (the epoll event loop for a TCP listener on Linux, else a
// goroutine per connection) until ln fails or the server is shut down. It closes ln before returning and
// always returns a non-nil error; ErrServerClosed after Shutdown or Close,
// a *ConfigError at once when a Server field is invalid (config.go).
func (s *Server) Serve(ln net.Listener) error {
	return s.serve(s.proxyListen(ln)) // PROXY protocol (proxy.go), if on
}

// serve is Serve on a listener already wrapped for the PROXY protocol.
func (s *Server) serve(ln net.Listener) error {
	if err := s.configErr(); err != nil {
		ln.Close()
		return err
	}
	if !s.trackListener(&ln, true) {
		ln.Close()
		return ErrServerClosed
	}
	defer s.trackListener(&ln, false)
	clock.Acquire()
	defer clock.Release()
	if ok, err := s.serveEventLoop(ln); ok {
		return err
	}

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.shuttingDown() {
				return ErrServerClosed
			}
			if acceptRetryable(err) {
				// Out of file descriptors and the like: back off and retry
				// rather than spin or give up.
				backoff = acceptBackoff(backoff)
				s.acceptError(err, backoff)
				select {
				case <-time.After(backoff):
				case <-s.closed:
				}
				continue
			}
			ln.Close()
			return err
		}
		backoff = 0
		s.count(statAccepted)
		if !s.admit() {
			refuse(nc)
			continue
		}
		c := newConn(s, nc)
		// Tracked even if Shutdown has begun: it waits for this loop to
		// end (acceptors) before counting connections, so a connection
		// accepted as the listener closed is served, not reset.
		s.trackConn(c, true)
		go c.serve()
	}
}

func isTemporary(err error) bool {
	t, ok := err.(interface{ Temporary() bool })
	return ok && t.Temporary()
}

// acceptRetryable reports whether Accept's err leaves the listener usable:
// a timeout, a temporary error (EMFILE, ENFILE, ...), or one of the errors
// accept(2) returns for want of memory or for a firewall rule against one
// connection, which net/http's Serve would give up on.
func acceptRetryable(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || isTemporary(err) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM) || errors.Is(err, syscall.EPERM)
}

// acceptBackoff is the wait after a failed accept when the last wait was
// prev (zero after an accept that succeeded): 5 ms, doubling up to 1 s,
// as net/http's.
func acceptBackoff(prev time.Duration) time.Duration {
	return min(max(2*prev, 5*time.Millisecond), time.Second)
}

// acceptLogEvery is the least time between two accept-error log lines of a
// server: a listener out of descriptors fails again after every back-off,
// on every event loop.
const acceptLogEvery = time.Second

// acceptLog rate-limits a server's accept-error lines.
type acceptLog struct {
	last       atomic.Int64  // monoNow of the last line; 0 before the first
	suppressed atomic.Uint64 // errors not logged since that line
}

// allow reports whether an error at now (monoNow) may be logged, and how
// many were not logged since the last line; a refused one is counted.
func (l *acceptLog) allow(now int64) (suppressed uint64, ok bool) {
	last := l.last.Load()
	if last != 0 && now-last < int64(acceptLogEvery) || !l.last.CompareAndSwap(last, now) {
		l.suppressed.Add(1)
		return 0, false
	}
	return l.suppressed.Swap(0), true
}

// acceptError counts err, a failed accept after which the listener waits
// delay (both engines), in Stats.AcceptErrors and logs it, rate-limited:
//
//	level=ERROR msg="riptide: accept error; retrying" err="accept4: too many open files" delay=5ms suppressed=0
//
// where suppressed counts the errors not logged since the last line.
func (s *Server) acceptError(err error, delay time.Duration) {
	cause := 2 // AcceptErrors.Other
	switch {
	case errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE):
		cause = 0
	case errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM):
		cause = 1
	}
	s.stats.acceptErrs[cause].Add(1)
	if n, ok := s.acceptLog.allow(monoNow()); ok {
		s.logger().Error("riptide: accept error; retrying", "err", err, "delay", delay, "suppressed", n)
	}
}

// refusal is the canned answer (canned.go) to a connection beyond
// MaxConns, before any request is read (so without Date or Server).
var refusal = func() []byte {
	b := h1.AppendStatusLine(nil, 503)
	b = append(b, "Content-Type: "+cannedType+"\r\nConnection: close\r\n"...)
	b = h1.AppendContentLength(b, int64(cannedBodyLen(503)))
	b = append(b, "\r\n"...)
	return appendCannedBody(b, 503)
}()

// refuse answers a connection beyond MaxConns (admit) and closes it, on
// its own goroutine so the accept loop never waits on a client. It
// half-closes and discards input briefly first (netx.HalfCloseAndDrain,
// on the TCP connection itself, also under the PROXY protocol wrapper), so
// that a request the client already sent does not turn the close into an
// RST that destroys the 503.
func refuse(nc net.Conn) {
	go func() {
		nc.SetDeadline(time.Now().Add(time.Second))
		nc.Write(refusal)
		if tc, ok := tcpConnOf(nc); ok {
			netx.HalfCloseAndDrain(tc, tc)
		}
		nc.Close()
	}()
}

func (s *Server) trackListener(ln *net.Listener, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		if s.shuttingDown() {
			return false
		}
		s.listeners[ln] = struct{}{}
		s.acceptors.Add(1)
	} else {
		delete(s.listeners, ln)
		s.acceptors.Done()
	}
	return true
}

func (s *Server) trackConn(c *conn, add bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add { // admitted: its MaxConns slot is taken
		s.conns[c] = struct{}{}
		s.connsDone.Add(1)
	} else {
		delete(s.conns, c)
		s.release()
		s.connsDone.Done()
	}
}

func (s *Server) shuttingDown() bool { return s.inShutdown.Load() }

// closeListeners marks the server shut down and closes its listeners. It
// returns the RegisterOnShutdown functions the first time, nil after.
func (s *Server) closeListeners() []func() {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.draining.Store(true)
	if s.inShutdown.Swap(true) {
		return nil
	}
	close(s.closed)
	for ln := range s.listeners {
		(*ln).Close()
	}
	return s.onShutdown
}

// RegisterOnShutdown registers f to be called, on a goroutine of its own,
// when Shutdown begins, as net/http's Server.RegisterOnShutdown: for
// handlers that Shutdown would otherwise wait for, such as long-lived
// streams (server-sent events) and hijacked connections, to be told to
// finish. Native handlers can also select on Ctx.ShuttingDown.
func (s *Server) RegisterOnShutdown(f func()) {
	s.mu.Lock()
	s.onShutdown = append(s.onShutdown, f)
	s.mu.Unlock()
}

// ShuttingDown returns a channel that is closed when Shutdown or Close
// begins. A handler that streams until the client leaves (server-sent
// events, long polling) selects on it next to Done to end the stream, so
// that Shutdown does not wait for it until its deadline:
//
//	for {
//		select {
//		case <-c.Done(): // the client left
//			return
//		case <-c.ShuttingDown():
//			return
//		case ev := <-events:
//			c.Write(ev)
//			c.Flush()
//		}
//	}
//
// Done itself does not fire on Shutdown: graceful shutdown lets in-flight
// requests finish, so their work (a database call given the Ctx as its
// context) is not cancelled. Calling ShuttingDown costs no allocation.
func (x *Ctx) ShuttingDown() <-chan struct{} { return x.conn.srv.closed }

// Shutdown stops the server gracefully: it closes the listeners, closes
// idle keep-alive connections, lets in-flight requests finish (their
// responses carry Connection: close) and waits until every connection is
// closed or ctx is done. On ctx expiry it closes the remaining connections
// and returns ctx.Err(). Hijacked connections are not tracked. Handlers
// that would hold it up are told first: Ctx.ShuttingDown's channel closes
// and the RegisterOnShutdown functions start.
func (s *Server) Shutdown(ctx context.Context) error {
	for _, f := range s.closeListeners() {
		go f()
	}
	s.acceptors.Wait() // every accepted connection is tracked now
	// HTTP/2 and HTTP/3 connections: GOAWAY, finish open streams, close;
	// the HTTP/3 listeners are closed.
	for _, cs := range s.connSets() {
		cs.drain(true)
	}
	// Poll like net/http: connections finish on their own goroutines and
	// the common case is a few short waits.
	wait := time.Millisecond
	for {
		if s.closeIdle() {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			s.closeAll()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// closeIdle wakes every idle connection (idleToClose) so that it closes,
// and reports whether no connection is left.
func (s *Server) closeIdle() bool {
	now := clock.Sec()
	for _, cs := range s.connSets() {
		cs.closeIdle(now)
	}
	// nconns counts the connections of every engine and protocol.
	return s.nconns.Load() == 0
}

// Close closes the listeners and every connection immediately, without
// letting in-flight requests finish, then waits for the connection
// goroutines to end (a handler blocked on something other than its
// connection keeps Close waiting). Hijacked connections are not touched.
func (s *Server) Close() error {
	s.closeListeners()
	s.acceptors.Wait()
	s.closeAll()
	s.connsDone.Wait()
	return nil
}

// closeAll closes every connection at once.
func (s *Server) closeAll() {
	for _, cs := range s.connSets() {
		cs.closeAll()
	}
}

// aLongTimeAgo is a deadline in the past, used to wake blocked I/O at once.
var aLongTimeAgo = time.Unix(1, 0)

// ConnState is the state of a server connection, reported to
// Server.ConnState.
type ConnState int

// Connection states.
const (
	// StateNew: just accepted, nothing read yet.
	StateNew ConnState = iota
	// StateActive: a request is being read or served.
	StateActive
	// StateIdle: waiting for the next request on a keep-alive connection.
	StateIdle
	// StateHijacked: taken over by a handler; terminal.
	StateHijacked
	// StateClosed: closed; terminal.
	StateClosed
)

var stateNames = [...]string{"new", "active", "idle", "hijacked", "closed"}

// String returns the state's name: "new", "active", "idle", "hijacked" or
// "closed".
func (st ConnState) String() string {
	if st >= 0 && int(st) < len(stateNames) {
		return stateNames[st]
	}
	return "unknown"
}
