package riptide

// HTTP/3 for both front doors, on the core's HTTP/3 engine
// (internal/h3srv). The QUIC side lives in the separate http3 module
// (github.com/riptide-http/riptide/http3), so that the core module never
// depends on quic-go; that module drives this adapter through exported
// API only: Server.ListenQUIC returns a QUICListener, to which it hands
// each QUIC connection as the quicx interfaces.
//
// Each request stream is served by the per-stream sequence HTTP/2's
// streams share (stream.go): a Ctx on a conn of the stream pool, whose
// exchange is the stream (h3Stream); the
// request head is built by the codec straight into the Ctx's h1.Request
// (no HTTP/1.1 text in between), the body reader reads the stream's DATA
// frames and its trailers. A compat handler (FromHTTP) is a Handler on the
// Ctx, so the compat door is this same path, with net/http's semantics
// from compat.go; its requests say HTTP/3.0.
//
// QUIC connections are the unit of accounting, as TCP connections are for
// HTTP/1.1 and HTTP/2: MaxConns (a slot once the address is validated), Stats,
// ConnState (the net.Conn is the QUIC connection's, h3NetConn), Shutdown
// and Drain (GOAWAY, handlers finish, CONNECTION_CLOSE), Close, MaxConnAge
// and MaxRequestsPerConn (GOAWAY).

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/h3"
	"github.com/riptide-http/riptide/internal/clock"
	"github.com/riptide-http/riptide/internal/h3srv"
	"github.com/riptide-http/riptide/internal/reqhead"
	"github.com/riptide-http/riptide/quicx"
)

// IsHTTP3 reports whether the request arrived over HTTP/3. As for HTTP/2,
// Request() shows it as HTTP/1.1 (the :authority as Host; a body of
// unknown length has ContentLength -1).
func (x *Ctx) IsHTTP3() bool { return x.conn.ex.protoMajor() == 3 }

// h3State is a Server's HTTP/3 state: its listeners (for Alt-Svc and
// Shutdown) and live connections.
type h3State struct {
	// altSvc is the Alt-Svc advertised on HTTP/1.1 and HTTP/2 responses
	// over TLS, nil when none: no listener, or draining.
	altSvc atomic.Pointer[altSvc]

	mu    sync.Mutex
	lns   []*QUICListener
	conns map[*h3Conn]struct{}
	shut  bool // Shutdown or Close began
	// kill bounds the graceful shutdowns of connections: cancelled by
	// closeAll (Close, or Shutdown's context expiring).
	kill   context.Context
	cancel context.CancelFunc
}

// altSvc is an Alt-Svc value as an HTTP/1.1 header line and as an HTTP/2
// field value.
type altSvc struct {
	line  []byte // "Alt-Svc: h3=\":443\"; ma=86400\r\n"
	value string // `h3=":443"; ma=86400`
}

// setAltSvcLocked advertises the first running listener, or nothing while
// draining. h3state.mu is held.
func (s *Server) setAltSvcLocked() {
	st := &s.h3state
	var l *QUICListener
	for _, x := range st.lns {
		if x.port > 0 {
			l = x
			break
		}
	}
	if l == nil || s.draining.Load() {
		st.altSvc.Store(nil)
		return
	}
	v := `h3=":` + strconv.Itoa(l.port) + `"; ma=` + strconv.FormatInt(int64(l.maxAge/time.Second), 10)
	if cur := st.altSvc.Load(); cur != nil && cur.value == v {
		return
	}
	st.altSvc.Store(&altSvc{line: h1.AppendHeader(nil, "Alt-Svc", v), value: v})
}

// killCtxLocked returns the context bounding graceful connection
// shutdowns. h3state.mu is held.
func (st *h3State) killCtxLocked() context.Context {
	if st.kill == nil {
		st.kill, st.cancel = context.WithCancel(context.Background())
	}
	return st.kill
}

// h3Conns is the HTTP/3 listeners and connections as a connSet
// (connset.go).
type h3Conns struct{ s *Server }

// drain stops advertising HTTP/3 and sends the HTTP/3 connections open now
// GOAWAY: later streams are refused with H3_REQUEST_REJECTED, open ones
// finish, then CONNECTION_CLOSE. On shutdown it also closes the listeners
// (their connections go on) and sends GOAWAY to connections that arrive
// later (h3Track).
func (h h3Conns) drain(shutdown bool) {
	s := h.s
	st := &s.h3state
	st.mu.Lock()
	defer st.mu.Unlock()
	if shutdown {
		st.shut = true
		s.closeH3ListenersLocked()
	} else {
		s.setAltSvcLocked()
	}
	for hc := range st.conns {
		hc.goAwayLocked()
	}
}

// closeIdle does nothing: an HTTP/3 connection closes itself once GOAWAY
// was sent and its streams are done.
func (h3Conns) closeIdle(int64) {}

// closeH3ListenersLocked stops every HTTP/3 listener and the Alt-Svc.
func (s *Server) closeH3ListenersLocked() {
	st := &s.h3state
	for _, l := range st.lns {
		l.stop.Do(func() { close(l.done) })
	}
	st.lns = nil
	st.altSvc.Store(nil)
}

// closeAll closes the HTTP/3 listeners and connections at once.
func (h h3Conns) closeAll() {
	s := h.s
	st := &s.h3state
	st.mu.Lock()
	defer st.mu.Unlock()
	st.shut = true
	s.closeH3ListenersLocked()
	if st.cancel != nil {
		st.cancel()
	}
	for hc := range st.conns {
		hc.qc.CloseWithError(uint64(h3.CodeNoError), "server closed")
	}
}

// countStates adds the HTTP/3 connections to the gauges: active, as
// HTTP/2 connections are.
func (h h3Conns) countStates(st *Stats) {
	hs := &h.s.h3state
	hs.mu.Lock()
	st.ConnsActive += int64(len(hs.conns))
	hs.mu.Unlock()
}

// QUICOptions configures an HTTP/3 listener (Server.ListenQUIC) beyond
// what the Server's own fields set. It is for the http3 module, or another
// QUIC stack serving HTTP/3 for a Server; a zero field takes its default.
type QUICOptions struct {
	// AltSvcPort is the UDP port advertised in Alt-Svc on the Server's
	// HTTP/1.1 and HTTP/2 responses over TLS while the listener runs (not
	// while draining); zero advertises nothing. AltSvcMaxAge is its ma
	// (zero: 24 hours).
	AltSvcPort   int
	AltSvcMaxAge time.Duration
	// MaxStreams bounds a connection's concurrent request streams (zero:
	// HTTP2.MaxConcurrentStreams when set, else 100); MaxUniStreams its
	// unidirectional streams (zero: 8); HeaderBudget the HEADERS bytes it
	// may have partly received at once (zero: 1 MiB).
	MaxStreams, MaxUniStreams, HeaderBudget int
	// Allow0RTT says the QUIC layer accepts 0-RTT data: requests before
	// the handshake completes run only if their method is safe; others
	// are answered 425 Too Early, or wait for the handshake with Wait0RTT.
	Allow0RTT, Wait0RTT bool
}

// QUICLimits is what the QUIC layer under a QUICListener must be
// configured with (QUICListener.Limits).
type QUICLimits struct {
	// MaxStreams and MaxUniStreams are the concurrent request and
	// unidirectional streams a client may open; a request stream's credit
	// must be given back only when the listener calls
	// quicx.ReceiveStream.ReleaseStreamCredit (after its handler returns).
	MaxStreams, MaxUniStreams int
	// IdleTimeout is the QUIC idle timeout (the Server's IdleTimeout),
	// HandshakeTimeout the handshake's (its ReadHeaderTimeout).
	IdleTimeout, HandshakeTimeout time.Duration
	// Allow0RTT is QUICOptions.Allow0RTT.
	Allow0RTT bool
	// StreamReceiveWindow and ConnReceiveWindow are the most request body
	// bytes one stream and one connection may have buffered (the QUIC
	// receive windows): HTTP2.MaxReceiveBufferPerStream and
	// PerConnection, 1 MiB each by default.
	StreamReceiveWindow, ConnReceiveWindow int64
}

// ListenQUIC registers an HTTP/3 listener for the Server: the seam through
// which the http3 module (or another QUIC stack) serves HTTP/3 with the
// Server's handler, limits and accounting. The caller configures its QUIC
// layer with the listener's Limits, admits each connection attempt under
// MaxConns with Admit, hands each connection to ServeConn, stops accepting
// when Done is closed and calls Close when it stops. Until Close the
// Server's HTTP/1.1 and HTTP/2 responses over TLS carry Alt-Svc
// (QUICOptions.AltSvcPort). It fails with the Server's configuration error,
// or with ErrServerClosed once the Server is shut down.
func (s *Server) ListenQUIC(o QUICOptions) (*QUICListener, error) {
	s.init()
	if err := s.configErr(); err != nil {
		return nil, err
	}
	c := &s.cfg
	cfg := h3srv.Config{
		MaxHeaderBytes:    c.limits.MaxHeadBytes,
		ReadHeaderTimeout: c.readHeader,
		IdleTimeout:       c.idle,
		HandshakeTimeout:  c.readHeader,
		WriteTimeout:      c.write,
		MaxStreams:        o.MaxStreams,
		MaxUniStreams:     o.MaxUniStreams,
		HeaderBudget:      o.HeaderBudget,
		Allow0RTT:         o.Allow0RTT,
		Wait0RTT:          o.Wait0RTT,
	}
	if s.HTTP2 != nil && s.HTTP2.EnableConnectProtocol {
		cfg.EnableConnectProtocol = true // RFC 9220: the same switch as RFC 8441's
	}
	if cfg.MaxStreams <= 0 && s.HTTP2 != nil && s.HTTP2.MaxConcurrentStreams > 0 {
		cfg.MaxStreams = int(s.HTTP2.MaxConcurrentStreams)
	}
	maxAge := o.AltSvcMaxAge
	if maxAge <= 0 {
		maxAge = 24 * time.Hour
	}
	l := &QUICListener{s: s, port: o.AltSvcPort, maxAge: maxAge, cfg: cfg.Normalized(), done: make(chan struct{})}
	l.shared[0] = h3srv.NewShared(&l.cfg)
	if s.cfg.stats {
		// Stats.BytesIn/BytesOut: the engine counts what it reads and
		// writes on the connection's streams, as HTTP/2's counts frames.
		for i := range l.shared {
			c := l.cfg
			sh := &s.stats.shards[i]
			c.BytesIn, c.BytesOut = &sh.bytes.In, &sh.bytes.Out
			l.shared[i] = h3srv.NewShared(&c)
		}
	}
	st := &s.h3state
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.shut || s.shuttingDown() {
		return nil, ErrServerClosed
	}
	st.lns = append(st.lns, l)
	s.setAltSvcLocked()
	// The server clock runs while the listener does, as while Serve
	// does (server.go): each response's Date is then the second's shared
	// value, not a date formatted per request.
	clock.Acquire()
	return l, nil
}

// QUICListener is a running HTTP/3 listener of a Server (ListenQUIC), for
// the http3 module or another QUIC stack. Its connections are the Server's
// as TCP ones are: counted under MaxConns and in Stats and ConnState, sent
// GOAWAY by Shutdown and Drain, closed by Close, MaxConnAge and
// MaxRequestsPerConn applied. Its methods may be called concurrently.
type QUICListener struct {
	s      *Server
	port   int
	maxAge time.Duration
	cfg    h3srv.Config
	done   chan struct{}
	stop   sync.Once
	// shared is cfg as the engine's connections share it: one per stats
	// shard when the Server keeps Stats (each with its shard's byte
	// counters), else shared[0].
	shared [statShards]*h3srv.Shared
}

// Limits returns what the QUIC layer must be configured with.
func (l *QUICListener) Limits() QUICLimits {
	c := &l.cfg
	lim := QUICLimits{
		MaxStreams:          c.MaxStreams,
		MaxUniStreams:       c.MaxUniStreams,
		IdleTimeout:         c.IdleTimeout,
		HandshakeTimeout:    c.HandshakeTimeout,
		Allow0RTT:           c.Allow0RTT,
		StreamReceiveWindow: 1 << 20,
		ConnReceiveWindow:   1 << 20,
	}
	if h := l.s.HTTP2; h != nil {
		if h.MaxReceiveBufferPerStream > 0 {
			lim.StreamReceiveWindow = int64(h.MaxReceiveBufferPerStream)
		}
		if h.MaxReceiveBufferPerConnection > 0 {
			lim.ConnReceiveWindow = int64(h.MaxReceiveBufferPerConnection)
		}
	}
	return lim
}

// Admit takes one of the Server's MaxConns slots for a connection attempt
// (counted in Stats.Refused when none is left, and then it must be
// refused). Release, called once per slot taken, frees it when the attempt
// ends: the connection served and closed, or its handshake failed.
func (l *QUICListener) Admit() bool { return l.s.admit() }

// Release frees a slot Admit took.
func (l *QUICListener) Release() { l.s.release() }

// Done is closed when the Server stops the listener (Shutdown, Close): the
// caller accepts no more connections, lets those it serves finish and
// calls Close.
func (l *QUICListener) Done() <-chan struct{} { return l.done }

// Close unregisters the listener (Alt-Svc is no longer sent).
func (l *QUICListener) Close() {
	s := l.s
	st := &s.h3state
	st.mu.Lock()
	defer st.mu.Unlock()
	for i, x := range st.lns {
		if x == l {
			st.lns = append(st.lns[:i], st.lns[i+1:]...)
			clock.Release()
			break
		}
	}
	s.setAltSvcLocked()
}

// ServeConn serves qc, a connection the caller admitted (its handshake
// complete, or accepted with 0-RTT data), until it closes.
func (l *QUICListener) ServeConn(qc quicx.Conn) {
	s := l.s
	hc := &h3Conn{srv: s, qc: qc, nc: &h3NetConn{qc: qc}, raddr: qc.RemoteAddr().String(), laddr: qc.LocalAddr()}
	sh := l.shared[0]
	if s.cfg.stats {
		sh = l.shared[procShard()]
	}
	hc.hc = h3srv.NewConnShared(qc, sh, hc)
	s.count(statAccepted)
	hc.setState(StateNew)
	s.h3Track(hc, true)
	hc.setState(StateActive)
	if age := s.cfg.maxAge; age > 0 {
		t := time.AfterFunc(age, hc.goAway)
		defer t.Stop()
	}
	_ = hc.hc.Serve()
	s.h3Track(hc, false)
	hc.setState(StateClosed)
	s.count(statClosed)
}

// h3Track adds hc to (or removes it from) the connections Shutdown,
// Drain, Close and Stats see. One that arrives after Shutdown began is
// sent GOAWAY at once; one that arrives while draining, after its first
// request (see ServeStream).
func (s *Server) h3Track(hc *h3Conn, add bool) {
	st := &s.h3state
	st.mu.Lock()
	defer st.mu.Unlock()
	if !add {
		delete(st.conns, hc)
		s.connsDone.Done()
		return
	}
	if st.conns == nil {
		st.conns = make(map[*h3Conn]struct{})
	}
	st.conns[hc] = struct{}{}
	s.connsDone.Add(1)
	if st.shut {
		hc.goAwayLocked()
	}
}

// h3Conn is one HTTP/3 connection of a Server: the engine's Handler, which
// serves each stream with a Ctx.
type h3Conn struct {
	srv  *Server
	qc   quicx.Conn
	hc   *h3srv.Conn
	nc   *h3NetConn
	nreq atomic.Int64
	away atomic.Bool
	// The addresses and, once the handshake is complete, the TLS state
	// that compat requests share, as net/http's requests on one
	// connection do.
	raddr string
	laddr net.Addr
	tls   atomic.Pointer[tls.ConnectionState]
}

func (hc *h3Conn) setState(st ConnState) {
	if h := hc.srv.ConnState; h != nil {
		h(hc.nc, st)
	}
}

// goAway starts the connection's graceful shutdown, once: GOAWAY, the
// open streams finish, CONNECTION_CLOSE.
func (hc *h3Conn) goAway() {
	st := &hc.srv.h3state
	st.mu.Lock()
	hc.goAwayLocked()
	st.mu.Unlock()
}

func (hc *h3Conn) goAwayLocked() {
	if hc.away.Swap(true) {
		return
	}
	ctx := hc.srv.h3state.killCtxLocked()
	go hc.hc.Shutdown(ctx)
}

// h3Streams pools the stream exchanges.
var h3Streams = sync.Pool{New: func() any { return new(h3Stream) }}

// ServeStream serves one request stream (stream.go).
func (hc *h3Conn) ServeStream(st *h3srv.Stream) {
	s := hc.srv
	if max := s.cfg.maxReqs; max > 0 && hc.nreq.Add(1) >= int64(max) {
		// The last request: GOAWAY goes out before its response (as
		// Connection: close on HTTP/1.1), so that the client sends the
		// next one elsewhere; this stream is below the GOAWAY's ID.
		hc.goAway()
	}
	ex := h3Streams.Get().(*h3Stream)
	ex.start(hc, st)
	s.serveStream(ex, &s.stats.h3Streams)
	ex.end()
	h3Streams.Put(ex)
	hc.requestDone()
}

func (ex *h3Stream) isHEAD() bool { return string(ex.st.Head().Method) == "HEAD" }

// hasBody: a body of unknown length may turn out empty (the stream's end
// tells; h3srv reads no frame before the handler asks), and one of length 0
// may still be followed by trailers, read with the body's end, unless the
// stream ended with the head.
func (ex *h3Stream) hasBody(req *h1.Request) bool {
	return req.ContentLength != 0 || !ex.st.Ended()
}
func (ex *h3Stream) failed() { ex.st.Reset(h3.CodeInternalError) }

// fillRequest builds the request head into c (fillH3Request); the
// engine refused a header section over its size limit before. The
// stream's field buffers go back to the engine's pool then: the Ctx has
// its copy, and a handler that waits holds none of them.
func (ex *h3Stream) fillRequest(c *conn) int {
	err := c.fillH3Request(ex.st)
	if p := ex.st.Head().Protocol; p != nil {
		ex.proto = append(ex.proto[:0], p...) // the head's bytes go back below
	}
	ex.st.ReleaseHead()
	if err != nil {
		return 400 // the engine built the same head before: not reached
	}
	return 0
}

// fillH3Request builds the request head into the Ctx from the stream's
// decoded fields (the codec's RequestHead.Build), then copies the bytes it
// refers to into c.rbuf as an HTTP/1.1 head lies there, method first: the
// compat door makes the *http.Request's strings from that one region,
// once reqhead.Check has found every view of the request inside it. The
// target comes next, then the Host (the :authority, which no field holds),
// then the decoded fields.
func (c *conn) fillH3Request(st *h3srv.Stream) error {
	req := &c.ctx.req
	c.streamRoom(len(st.Head().Fields))
	if err := st.Head().Build(req); err != nil {
		return err
	}
	c.head, c.rbuf = copyH3Head(req, st.FieldBytes(), c.rbuf)
	c.r, c.w, c.pin = 0, 0, len(c.head.Bytes())
	return nil
}

// copyH3Head copies the request head req views (its method, target and
// Host, and fb, the decoded field bytes its fields are views of) into buf
// (grown when too small, and returned), and points req at the copy. A
// view that is not of those bytes is left where it is: the head's Check
// then refuses the request (the compat door's one check), with nothing
// taken from bytes that are not the head's.
func copyH3Head(req *h1.Request, fb, buf []byte) (reqhead.Head, []byte) {
	method, target, host := req.Method, req.Target, req.Host
	need := len(method) + len(target) + len(host) + len(fb)
	if len(buf) < need {
		buf = make([]byte, need) // kept for the next heads; putConn drops an unusually large one
	}
	b := buf
	n := copy(b, method)
	tOff := n
	n += copy(b[n:], target)
	hOff := n
	n += copy(b[n:], host)
	fOff := n
	copy(b[n:], fb)
	// within returns part, a view of whole, as the same view of whole's
	// copy at off.
	within := func(whole, part []byte, off int) []byte {
		if part == nil {
			return nil
		}
		if len(part) == 0 {
			return b[off:off:off]
		}
		i := int(uintptr(unsafe.Pointer(unsafe.SliceData(part))) - uintptr(unsafe.Pointer(unsafe.SliceData(whole))))
		if i < 0 || i+len(part) > len(whole) {
			return part
		}
		i += off
		return b[i : i+len(part) : i+len(part)]
	}
	req.Path, req.Query = within(target, req.Path, tOff), within(target, req.Query, tOff)
	req.Method = b[:len(method):len(method)]
	req.Target = b[tOff:hOff:hOff]
	if host != nil {
		req.Host = b[hOff:fOff:fOff]
	}
	for i := range req.Headers {
		h := &req.Headers[i]
		h.Name, h.Value = within(fb, h.Name, fOff), within(fb, h.Value, fOff)
	}
	return reqhead.Of(b[:need]), buf
}

// requestDone sends GOAWAY after a request when draining: a connection
// that arrived while draining has its first request answered (as HTTP/2's
// does), then goes away.
func (hc *h3Conn) requestDone() {
	if hc.srv.draining.Load() {
		hc.goAway()
	}
}

// h3Stream is an HTTP/3 request stream as the exchange of the Ctx serving
// it (exchange.go). Pooled: between start and end it is one stream's.
type h3Stream struct {
	st *h3srv.Stream
	hc *h3Conn

	fields []h1.Header // the head being sent, reused
	clen   [20]byte    // the Content-Length value
	rest   int64       // body bytes still to send of a declared length, -1 for none
	// proto: an extended CONNECT's :protocol (RFC 9220), copied before
	// the engine's head buffers are released; empty for other requests.
	proto []byte

	// mu orders closeBody, which may come from any goroutine (a compat
	// handler's Request.Body), with the end of the stream (end). Body
	// reads left to another goroutine are counted, stopped and waited for
	// by the body reader, as on HTTP/2 (bodyReader.endReads, stopBody).
	mu sync.Mutex
	// userRDL: the handler set a read deadline, which ReadBodyTimeout
	// does not replace.
	userRDL bool
}

var _ exchange = (*h3Stream)(nil)

func (ex *h3Stream) start(hc *h3Conn, st *h3srv.Stream) {
	ex.mu.Lock()
	ex.st, ex.hc = st, hc
	ex.mu.Unlock()
	ex.userRDL = false
}

func (ex *h3Stream) end() {
	ex.mu.Lock()
	ex.st, ex.hc = nil, nil
	ex.mu.Unlock()
	clear(ex.fields)
	ex.fields = ex.fields[:0]
	ex.proto = ex.proto[:0]
}

// writeHead sends the head, with the first body bytes in the same write
// when they fit (the engine keeps the head pending until the first DATA,
// Flush or the end).
func (ex *h3Stream) writeHead(oh *outHead, body []byte, end bool) error {
	ex.rest = -1
	if oh.mode == h1.BodyLength {
		ex.rest = oh.length
	}
	err := ex.st.WriteHeaders(oh.status, ex.head(oh))
	if err != nil || len(body) == 0 {
		return err
	}
	if size := ex.dataSize(len(body)); !end || size != uint64(len(body)) {
		_, err = ex.st.WriteDataSized(body, size)
		return err
	}
	// Complete: the trailers or the FIN (endStream) leave in the same
	// write.
	_, err = ex.st.WriteLastData(body)
	return err
}

// dataSize is the DATA frame size for the next n body bytes: with a
// declared Content-Length, the rest of the body from them on, so that one
// frame header covers it however the handler writes it
// (h3srv.Stream.WriteDataSized); otherwise n. It counts them as sent.
func (ex *h3Stream) dataSize(n int) uint64 {
	if ex.rest < 0 {
		return uint64(n)
	}
	size := ex.rest
	ex.rest -= int64(n)
	return uint64(max(size, int64(n)))
}

// head encodes oh as the stream's fields, views of the Ctx's buffers.
func (ex *h3Stream) head(oh *outHead) []h1.Header {
	fs := appendHeadFields(ex.fields[:0], oh, h3Field)
	if oh.mode == h1.BodyLength {
		fs = append(fs, h1.Header{Name: h3FieldContentLength, Value: strconv.AppendInt(ex.clen[:0], oh.length, 10)})
	}
	ex.fields = fs
	return fs
}

var h3FieldContentLength = []byte("content-length")

func h3Field(name, value string, _ bool) h1.Header {
	return h1.Header{Name: stringBytes(name), Value: stringBytes(value)}
}

// stringBytes views s as bytes that are only read.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// writeBody sends body bytes after the head as DATA.
func (ex *h3Stream) writeBody(p []byte) error {
	_, err := ex.st.WriteDataSized(p, ex.dataSize(len(p)))
	return err
}

// sendFile: a file goes as DATA frames, copied (writeBody).
func (ex *h3Stream) sendFile(*os.File, int64, int64) (int64, bool, error) { return 0, false, nil }

// flush writes the pending head, if any: DATA is written as it comes.
func (ex *h3Stream) flush() error { return ex.st.Flush() }

// endStream ends the stream: trailers, or the FIN; or resets it.
func (ex *h3Stream) endStream(trl *headerFields, reset bool) {
	switch {
	case reset:
		ex.st.Reset(h3.CodeInternalError)
	case trl.len() == 0:
		_ = ex.st.Close()
	default:
		ex.fields = appendFields(ex.fields[:0], trl, true, h3Field)
		_ = ex.st.WriteTrailers(ex.fields)
	}
}

// writeInformational sends a 1xx head at once.
func (ex *h3Stream) writeInformational(oh *outHead) error {
	return ex.st.WriteHeaders(oh.status, ex.head(oh))
}

// readBody reads the body from the stream's DATA frames, with
// ReadBodyTimeout for each read unless the handler set a deadline. A read
// made on another goroutine is counted by the body reader
// (bodyReader.enterRead), which keeps the stream this request's until it
// returns.
func (ex *h3Stream) readBody(p []byte) (int, error) {
	st := ex.st
	if rb := ex.hc.srv.cfg.readBody; rb > 0 && !ex.userRDL {
		_ = st.SetReadDeadline(time.Now().Add(rb))
	}
	n, err := st.Read(p)
	if err == h3srv.ErrBodyClosed {
		err = ErrBodyReadAfterClose
	}
	return n, err
}

// stopBody: a Read waiting for DATA returns and later ones fail
// (ErrBodyReadAfterClose); the client is asked to stop sending the body
// (STOP_SENDING H3_NO_ERROR), the response unaffected.
func (ex *h3Stream) stopBody() { ex.st.CloseBody() }

// appendTrailers appends the request's trailers: views of the stream's
// buffers, valid for the request's life as the Ctx's are.
func (ex *h3Stream) appendTrailers(dst []h1.Header, buf []byte) ([]h1.Header, []byte) {
	for _, f := range ex.st.Trailers() {
		dst = append(dst, h1.Header{Name: f.Name, Value: f.Value, Key: h1.Lookup(f.Name)})
	}
	return dst, buf
}

// send100Continue answers Expect: 100-continue before the first body read.
func (ex *h3Stream) send100Continue() { _ = ex.st.WriteHeaders(100, nil) }

// closeBody stops the body: a read blocked in another goroutine returns,
// and later ones fail; the response goes on. After the handler returned
// (ended) the exchange may serve another stream and is left alone.
func (ex *h3Stream) closeBody(ended *atomic.Bool) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ended.Load() || ex.st == nil {
		return
	}
	ex.st.CloseBody()
}

// setReadDeadline bounds body reads.
func (ex *h3Stream) setReadDeadline(t time.Time) error {
	ex.userRDL = !t.IsZero()
	return ex.st.SetReadDeadline(t)
}

// setWriteDeadline bounds response writes waiting for flow control.
func (ex *h3Stream) setWriteDeadline(t time.Time) error { return ex.st.SetWriteDeadline(t) }

// The disconnect watch is a callback on the stream's context, cancelled
// when the client resets or stops the stream or the connection closes
// (watchNotifier): no goroutine waits for it, so watchRead and watchStop
// are not called.
func (ex *h3Stream) watchContext() context.Context { return ex.st.Context() }
func (ex *h3Stream) watchArm() bool                { return true }
func (ex *h3Stream) watchRead() (int, error)       { return 0, os.ErrDeadlineExceeded }
func (ex *h3Stream) watchStop()                    {}

func (ex *h3Stream) remoteAddr() net.Addr     { return ex.hc.qc.RemoteAddr() }
func (ex *h3Stream) remoteAddrString() string { return ex.hc.raddr }
func (ex *h3Stream) localAddr() net.Addr      { return ex.hc.laddr }

// tlsState returns the connection's TLS state: one value per connection
// once the handshake is complete, as net/http's requests share theirs.
func (ex *h3Stream) tlsState() *tls.ConnectionState {
	hc := ex.hc
	if p := hc.tls.Load(); p != nil {
		return p
	}
	cs := hc.qc.State().TLS
	select {
	case <-hc.qc.HandshakeComplete():
		hc.tls.Store(&cs) // final: shared by the later requests
	default: // a 0-RTT request: the state is not final yet
	}
	return &cs
}

// transport: there is no net.Conn under a QUIC connection.
func (ex *h3Stream) transport() net.Conn { return nil }
func (ex *h3Stream) protoMajor() int     { return 3 }
func (ex *h3Stream) abilities() ability  { return canFullDuplex | multiplexed | onQUIC }

// errH3NetConn: an HTTP/3 connection's net.Conn (ConnState's) carries
// streams, which the server serves.
var errH3NetConn = errors.New("riptide: an HTTP/3 connection is not read or written as a net.Conn")

// h3NetConn is an HTTP/3 connection as the net.Conn that ConnState
// receives: its addresses, and Close closing it. Reads and writes fail:
// the connection carries streams, served by the server.
type h3NetConn struct{ qc quicx.Conn }

var _ net.Conn = (*h3NetConn)(nil)

func (c *h3NetConn) Read(p []byte) (int, error)         { return 0, errH3NetConn }
func (c *h3NetConn) Write(p []byte) (int, error)        { return 0, errH3NetConn }
func (c *h3NetConn) Close() error                       { return c.qc.CloseWithError(uint64(h3.CodeNoError), "") }
func (c *h3NetConn) LocalAddr() net.Addr                { return c.qc.LocalAddr() }
func (c *h3NetConn) RemoteAddr() net.Addr               { return c.qc.RemoteAddr() }
func (c *h3NetConn) SetDeadline(t time.Time) error      { return nil }
func (c *h3NetConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *h3NetConn) SetWriteDeadline(t time.Time) error { return nil }
