package riptide

// HTTP/3 for both front doors, on the core's HTTP/3 engine
// (internal/h3srv). The QUIC side lives in the separate http3 module
// (github.com/riptide-http/riptide/http3), so that the core module never
// depends on quic-go; that module reaches this adapter through
// internal/h3hook, whose Bind this file sets, and the root package exports
// nothing for it.
//
// Each request stream is served with a Ctx as an HTTP/2 stream is
// (h2ctx.go): an engine conn is borrowed from the pool for the stream's
// life, its net.Conn and its responseWire are the stream (h3Stream), the
// request head is built by the codec straight into the Ctx's h1.Request
// (no HTTP/1.1 text in between), the body reader reads the stream's DATA
// frames and its trailers. A compat handler (FromHTTP) is a Handler on the
// Ctx, so the compat door is this same path, with net/http's semantics
// from compat.go; its requests say HTTP/3.0.
//
// QUIC connections are the unit of accounting, as TCP connections are for
// HTTP/1.1 and HTTP/2: MaxConns (admitted before the handshake), Stats,
// ConnState (the net.Conn is the QUIC connection's, h3NetConn), Shutdown
// and Drain (GOAWAY, handlers finish, CONNECTION_CLOSE), Close, MaxConnAge
// and MaxRequestsPerConn (GOAWAY).

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
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
	"github.com/riptide-http/riptide/internal/h3hook"
	"github.com/riptide-http/riptide/internal/h3srv"
	"github.com/riptide-http/riptide/internal/quicx"
)

func init() {
	h3hook.Bind = func(v any) h3hook.Server { return h3Bound{v.(*Server)} }
}

// IsHTTP3 reports whether the request arrived over HTTP/3. As for HTTP/2,
// Request() shows it as HTTP/1.1 (the :authority as Host; a body of
// unknown length has ContentLength -1).
func (x *Ctx) IsHTTP3() bool { return x.conn.ex.protoMajor() == 3 }

// h3State is a Server's HTTP/3 state: its listeners (for Alt-Svc and
// Shutdown) and live connections.
type h3State struct {
	// altSvc is the Alt-Svc advertised on HTTP/1.1 and HTTP/2 responses,
	// nil when none: no listener, or draining.
	altSvc atomic.Pointer[altSvc]

	mu    sync.Mutex
	lns   []*h3Listener
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
	var l *h3Listener
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

// h3Drain stops advertising HTTP/3 and sends the HTTP/3 connections open
// now GOAWAY; they close when their streams are done. Called by Drain.
func (s *Server) h3Drain() {
	st := &s.h3state
	st.mu.Lock()
	defer st.mu.Unlock()
	s.setAltSvcLocked()
	for hc := range st.conns {
		hc.goAwayLocked()
	}
}

// h3Shutdown closes the HTTP/3 listeners (their connections go on) and
// sends every HTTP/3 connection GOAWAY: later streams are refused with
// H3_REQUEST_REJECTED, open ones finish, then CONNECTION_CLOSE. Called by
// Shutdown.
func (s *Server) h3Shutdown() {
	st := &s.h3state
	st.mu.Lock()
	defer st.mu.Unlock()
	st.shut = true
	s.closeH3ListenersLocked()
	for hc := range st.conns {
		hc.goAwayLocked()
	}
}

// closeH3ListenersLocked stops every HTTP/3 listener and the Alt-Svc.
func (s *Server) closeH3ListenersLocked() {
	st := &s.h3state
	for _, l := range st.lns {
		go l.closeFn()
	}
	st.lns = nil
	st.altSvc.Store(nil)
}

// h3CloseAll closes the HTTP/3 listeners and connections at once. Called
// by Close and by Shutdown when its context expires.
func (s *Server) h3CloseAll() {
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

// h3CountStates adds the HTTP/3 connections to the gauges: active, as
// HTTP/2 connections are.
func (s *Server) h3CountStates(st *Stats) {
	h := &s.h3state
	h.mu.Lock()
	st.ConnsActive += int64(len(h.conns))
	h.mu.Unlock()
}

// h3Bound is a Server as the http3 module sees it (h3hook.Server).
type h3Bound struct{ s *Server }

func (b h3Bound) Config() h3srv.Config {
	s := b.s
	s.init()
	c := &s.cfg
	cfg := h3srv.Config{
		MaxHeaderBytes:    c.limits.MaxHeadBytes,
		ReadHeaderTimeout: c.readHeader,
		IdleTimeout:       c.idle,
		HandshakeTimeout:  c.readHeader,
	}
	if s.HTTP2 != nil && s.HTTP2.MaxConcurrentStreams > 0 {
		cfg.MaxStreams = int(s.HTTP2.MaxConcurrentStreams)
	}
	return cfg.Normalized()
}

func (b h3Bound) ReceiveWindows() (stream, conn int64) {
	stream, conn = 1<<20, 1<<20
	if h := b.s.HTTP2; h != nil {
		if h.MaxReceiveBufferPerStream > 0 {
			stream = int64(h.MaxReceiveBufferPerStream)
		}
		if h.MaxReceiveBufferPerConnection > 0 {
			conn = int64(h.MaxReceiveBufferPerConnection)
		}
	}
	return stream, conn
}

func (b h3Bound) MaxConns() int { return b.s.MaxConns }

func (b h3Bound) Listen(port int, maxAge time.Duration, cfg *h3srv.Config, closeFn func()) (h3hook.Listener, error) {
	s := b.s
	s.init()
	l := &h3Listener{s: s, port: port, maxAge: maxAge, cfg: cfg.Normalized(), closeFn: closeFn}
	l.shared[0] = h3srv.NewShared(&l.cfg)
	if s.cfg.stats {
		// Stats.BytesIn/BytesOut: the engine counts what it reads and
		// writes on the connection's streams, as HTTP/2's counts frames.
		for i := range l.shared {
			c := l.cfg
			sh := &s.stats.shards[i]
			c.BytesIn, c.BytesOut = &sh.bytesIn, &sh.bytesOut
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

// h3Listener is one running HTTP/3 listener of a Server.
type h3Listener struct {
	s       *Server
	port    int
	maxAge  time.Duration
	cfg     h3srv.Config
	closeFn func()
	// shared is cfg as the engine's connections share it: one per stats
	// shard when the Server keeps Stats (each with its shard's byte
	// counters), else shared[0].
	shared [statShards]*h3srv.Shared
}

// Admit reserves a connection under MaxConns.
func (l *h3Listener) Admit() bool {
	s := l.s
	if n := s.nconns.Add(1); s.MaxConns > 0 && n > int64(s.MaxConns) {
		s.nconns.Add(-1)
		s.count(statRefused)
		return false
	}
	return true
}

// Release frees a connection Admit reserved.
func (l *h3Listener) Release() { l.s.nconns.Add(-1) }

// Close unregisters the listener.
func (l *h3Listener) Close() {
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

// ServeConn serves qc until it closes.
func (l *h3Listener) ServeConn(qc quicx.Conn) {
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

// ServeStream serves one request stream with a Ctx on a borrowed engine
// conn whose exchange is the stream, as h2Door does an HTTP/2 stream.
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
	c := newConn(s, nil)
	c.ex = ex
	c.state.Store(int32(StateActive)) // state changes are the connection's, not its streams'
	x := &c.ctx
	s.stats.h3Streams.Add(1)
	c.statRequestStart()
	x.resetResponse()
	switch err := c.fillH3Request(st); {
	case err != nil:
		// The engine built the same head before: not reached.
		x.canned(400)
	case len(x.req.Headers) > c.cfg.limits.MaxHeaders:
		x.canned(431)
	case overBodyLimit(s.cfg.maxBody, x.req.ContentLength):
		x.resp.head = isHEAD(x.req.Method)
		x.canned(413)
	default:
		x.resp.head = isHEAD(x.req.Method)
		// A body of unknown length may turn out empty: the stream's end
		// tells (h3srv reads no frame before the handler asks).
		c.body.startStream(x.req.ContentLength != 0, expects100(&x.req))
		x.inHandler.Store(true)
		c.callHandler()
	}
	// A compat body read left running on another goroutine returns now,
	// before the stream and the exchange may serve another request.
	c.body.endReads()
	x.stopWatch(true)
	x.finish()
	if c.werr != nil {
		// A write failed, or the handler panicked after the head went
		// out: the client must not take the response as complete.
		st.Reset(h3.CodeInternalError)
	}
	c.statRequestDone()
	c.body.closed = true
	c.body.stream = false
	x.raceRelease() // racecheck.go: race builds only
	putConn(c)
	ex.end()
	h3Streams.Put(ex)
	hc.requestDone()
}

// fillH3Request builds the request head into the Ctx from the stream's
// decoded fields (the codec's RequestHead.Build), then copies the bytes it
// refers to into c.rbuf as an HTTP/1.1 head lies there, method first: the
// compat door makes the *http.Request's strings from that one region. The
// target comes next, then the Host (the :authority, which no field holds),
// then the decoded fields.
func (c *conn) fillH3Request(st *h3srv.Stream) error {
	req := &c.ctx.req
	if err := st.Head().Build(req); err != nil {
		return err
	}
	fb := st.FieldBytes()
	method, target, host := req.Method, req.Target, req.Host
	need := len(method) + len(target) + len(host) + len(fb)
	if len(c.rbuf) < need {
		c.rbuf = make([]byte, need) // putConn gives back an unusually large one
	}
	b := c.rbuf
	n := copy(b, method)
	tOff := n
	n += copy(b[n:], target)
	hOff := n
	n += copy(b[n:], host)
	fOff := n
	copy(b[n:], fb)
	ok := true
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
			ok = false // not a view of the decoded fields: not reached
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
	if !ok {
		return errH3Head
	}
	c.r, c.w, c.pin = 0, 0, need
	return nil
}

var errH3Head = errors.New("riptide: HTTP/3 request head outside its field buffer")

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

	// stop ends a watchRead (buffered: watchStop never blocks).
	stop chan struct{}
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
	if ex.stop == nil {
		ex.stop = make(chan struct{}, 1)
	}
}

func (ex *h3Stream) end() {
	ex.mu.Lock()
	ex.st, ex.hc = nil, nil
	ex.mu.Unlock()
	clear(ex.fields)
	ex.fields = ex.fields[:0]
}

// writeHead sends the committed response's head, with the buffered body
// in the same write when it fits (the engine keeps the head pending until
// the first DATA, Flush or the end).
func (ex *h3Stream) writeHead(x *Ctx, status int, streaming bool) {
	r := &x.resp
	c := x.conn
	body, bodyLen := x.takeBody()
	r.sent = true
	if err := ex.st.WriteHeaders(status, ex.head(x, status, streaming, bodyLen)); err != nil {
		c.werr = err
		return
	}
	if len(body) > 0 {
		r.written += int64(len(body))
		var err error
		if size := dataSize(r, len(body)); !streaming && size == uint64(len(body)) {
			// Committed at the end (finish): endResponse follows, and
			// the trailers or FIN leave in the same write.
			_, err = ex.st.WriteLastData(body)
		} else {
			_, err = ex.st.WriteDataSized(body, size)
		}
		if err != nil {
			c.werr = err
		}
	}
}

// dataSize is the DATA frame size for n body bytes just counted as
// written: with a declared Content-Length, the rest of the body from them
// on, so that one frame header covers it however the handler writes it
// (h3srv.Stream.WriteDataSized); otherwise n.
func dataSize(r *response, n int) uint64 {
	if r.clen >= 0 && r.clen >= r.written {
		return uint64(r.clen - r.written + int64(n))
	}
	return uint64(n)
}

// head builds the head fields: the handler's, Date, Server and
// Content-Length (h1.BodyFraming, Framed: an unknown length ends with the
// stream), as views of the Ctx's buffers.
func (ex *h3Stream) head(x *Ctx, status int, streaming bool, bodyLen int) []h1.Header {
	r := &x.resp
	fs := appendFieldHeaders(ex.fields[:0], &r.hdr, false)
	if status >= 200 {
		if !r.userDate {
			fs = append(fs, h1.Header{Name: h3FieldDate, Value: stringBytes(h2Date())})
		}
		if s := x.conn.srv; s.addsServerHeader(r.userServer) {
			fs = append(fs, h1.Header{Name: h3FieldServer, Value: stringBytes(s.Name)})
		}
		if n, ok := x.framedLength(status, streaming, bodyLen); ok {
			fs = append(fs, h1.Header{Name: h3FieldContentLength, Value: strconv.AppendInt(ex.clen[:0], n, 10)})
		}
	}
	ex.fields = fs
	return fs
}

// Field names the exchange adds to a head.
var (
	h3FieldDate          = []byte("date")
	h3FieldServer        = []byte("server")
	h3FieldContentLength = []byte("content-length")
)

// stringBytes views s as bytes that are only read.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// appendFieldHeaders appends the fields of h as views of its buffer;
// for trailers, without those RFC 9110 §6.5.1 forbids (framing, routing,
// authentication, controls).
func appendFieldHeaders(dst []h1.Header, h *headerFields, trailers bool) []h1.Header {
	for i := range h.len() {
		name := h.name(i)
		if trailers && forbiddenTrailer(unsafe.String(unsafe.SliceData(name), len(name))) {
			continue
		}
		dst = append(dst, h1.Header{Name: name, Value: h.value(i)})
	}
	return dst
}

// writeBody sends body bytes after the head as DATA.
func (ex *h3Stream) writeBody(x *Ctx, p []byte) (int, error) {
	c := x.conn
	if send, n, err := x.admitBody(p, c.werr); !send {
		return n, err
	}
	if _, err := ex.st.WriteDataSized(p, dataSize(&x.resp, len(p))); err != nil {
		c.werr = err
		return 0, err
	}
	return len(p), nil
}

// flush writes the pending head, if any: DATA is written as it comes.
func (ex *h3Stream) flush() error { return ex.st.Flush() }

// endResponse ends the stream after the handler: trailers, or the FIN. A
// body shorter than its declared length, or an invalid trailer, resets
// the stream instead, so that the client does not take the response as
// complete.
func (ex *h3Stream) endResponse(x *Ctx) {
	r := &x.resp
	switch {
	case r.badTrailer || x.bodyShort():
		ex.st.Reset(h3.CodeInternalError)
	case r.trl.len() == 0:
		_ = ex.st.Close()
	default:
		ex.fields = appendFieldHeaders(ex.fields[:0], &r.trl, true)
		_ = ex.st.WriteTrailers(ex.fields)
	}
}

// writeInformational sends a 1xx response at once.
func (ex *h3Stream) writeInformational(x *Ctx, code int) error {
	return ex.st.WriteHeaders(code, ex.head(x, code, true, 0))
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

// The disconnect watch: the stream's Done is closed when the client resets
// or stops the stream, or the connection closes. It reads no body bytes,
// so it may run while the body is read.
func (ex *h3Stream) watchArm() bool {
	select {
	case <-ex.stop: // a stale stop
	default:
	}
	return true
}

func (ex *h3Stream) watchRead() (int, error) {
	select {
	case <-ex.st.Done():
		return 0, io.EOF
	case <-ex.stop:
		return 0, os.ErrDeadlineExceeded
	}
}

func (ex *h3Stream) watchStop() {
	select {
	case ex.stop <- struct{}{}:
	default:
	}
}

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
func (ex *h3Stream) abilities() ability  { return canFullDuplex }

// errH3NetConn: an HTTP/3 connection's net.Conn (ConnState's) carries
// streams, which the server serves.
var errH3NetConn = errors.New("riptide: an HTTP/3 connection is not read or written as a net.Conn")

// errHijackHTTP3 is Hijack's error on an HTTP/3 stream.
var errHijackHTTP3 = errors.New("riptide: cannot hijack an HTTP/3 stream")

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
