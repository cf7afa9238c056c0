package http3

// The HTTP/3 client: Transport carries a client.Client's requests over
// quic-go connections, one per origin (more when the server's stream limit
// is reached), framing them with riptide's h3 codec. The client package
// keeps the request and response types, limits, gzip and the Alt-Svc
// cache; this side speaks QUIC and HTTP/3.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/riptide-http/riptide/client"
	"github.com/riptide-http/riptide/h3"
)

// Defaults of Transport's fields.
const (
	DefaultClientIdleTimeout               = 30 * time.Second
	DefaultClientHandshakeTimeout          = 10 * time.Second
	DefaultClientMaxFieldSectionSize       = 64 << 10
	DefaultClientStreamReceiveWindow       = 1 << 20
	DefaultClientConnReceiveWindow         = 4 << 20
	clientMaxEmptyFrames                   = 1024
	clientMaxUnknownBytes                  = 64 << 10
	clientReadBufSize                      = 16 << 10
	clientMaxRetries                       = 3
	clientMaxIncomingUniStreams      int64 = 8
)

// NewClient returns a client.Client that sends every request over HTTP/3
// through t (a nil t is a zero Transport): the native API (Do, DoStream
// with client.Request and client.Response) and RoundTrip, with the
// Client's timeouts, limits and options. http URLs fail with
// client.ErrBadURL: HTTP/3 needs TLS. For HTTP/3 only where a server offers
// it in Alt-Svc, set a client.Client's HTTP3 to &client.HTTP3{Transport: t}
// instead.
func NewClient(t *Transport) *client.Client {
	if t == nil {
		t = new(Transport)
	}
	return &client.Client{HTTP3: &client.HTTP3{Transport: t, Always: true}}
}

// Transport is riptide's HTTP/3 client transport on quic-go
// (client.HTTP3Transport). It keeps one QUIC connection per server address
// and name, multiplexing requests as streams, and opens another when the
// server's stream limit is reached. 0-RTT is never used. Request bodies are
// written only as fast as QUIC's flow control allows; response bodies are
// buffered only up to the receive windows. Its zero value is ready to use.
// Configure it before its first request.
type Transport struct {
	// TLSConfig is cloned for each connection; NextProtos is set to "h3"
	// and ServerName, when empty, to the origin's host.
	TLSConfig *tls.Config
	// QUICConfig, if set, is used as given (cloned) for each connection,
	// in place of the one this Transport builds from its own fields.
	QUICConfig *quic.Config
	// IdleTimeout closes a connection that carried nothing for that long
	// (QUIC's max_idle_timeout, the lower of both sides'). 0:
	// DefaultClientIdleTimeout.
	IdleTimeout time.Duration
	// HandshakeTimeout bounds the QUIC handshake. 0:
	// DefaultClientHandshakeTimeout.
	HandshakeTimeout time.Duration
	// MaxFieldSectionSize bounds a response's field section and its
	// trailers, as HTTP/3 counts them (RFC 9114 §4.2.2), and is sent in
	// SETTINGS_MAX_FIELD_SECTION_SIZE. 0:
	// DefaultClientMaxFieldSectionSize.
	MaxFieldSectionSize uint64
	// StreamReceiveWindow and ConnReceiveWindow bound the response body
	// bytes buffered for a stream and for a connection that the caller has
	// not read yet. 0: DefaultClientStreamReceiveWindow and
	// DefaultClientConnReceiveWindow.
	StreamReceiveWindow int64
	ConnReceiveWindow   int64

	mu     sync.Mutex
	pools  map[poolKey]*h3pool
	closed bool
	rsPool sync.Pool
	dials  atomic.Int64 // connections dialled (tests)
}

var _ client.HTTP3Transport = (*Transport)(nil)

// poolKey names the connections that may carry a request: the address
// dialled and the TLS server name.
type poolKey struct{ addr, name string }

// h3pool holds the connections of one poolKey.
type h3pool struct {
	conns  []*clientConn
	dialCh chan struct{} // closed when the dial in progress ends
}

// clientConn is one QUIC connection carrying HTTP/3 requests.
type clientConn struct {
	t   *Transport
	key poolKey
	qc  *quic.Conn
	tls tls.ConnectionState

	uniMu sync.Mutex // serialises UniStreams.Accept across the stream readers

	// under t.mu
	active   int
	goaway   bool
	goawayID uint64
	dead     bool

	// peerMaxField is the server's SETTINGS_MAX_FIELD_SECTION_SIZE, 0
	// while it has announced none.
	peerMaxField atomic.Uint64
}

func (t *Transport) maxField() uint64 {
	if t.MaxFieldSectionSize > 0 {
		return t.MaxFieldSectionSize
	}
	return DefaultClientMaxFieldSectionSize
}

func (t *Transport) quicConfig() *quic.Config {
	if t.QUICConfig != nil {
		c := t.QUICConfig.Clone()
		c.Allow0RTT = false
		return c
	}
	c := &quic.Config{
		MaxIdleTimeout:        t.IdleTimeout,
		HandshakeIdleTimeout:  t.HandshakeTimeout,
		MaxIncomingStreams:    -1, // a server opens no request streams
		MaxIncomingUniStreams: clientMaxIncomingUniStreams,
	}
	if c.MaxIdleTimeout <= 0 {
		c.MaxIdleTimeout = DefaultClientIdleTimeout
	}
	if c.HandshakeIdleTimeout <= 0 {
		c.HandshakeIdleTimeout = DefaultClientHandshakeTimeout
	}
	sw, cw := t.StreamReceiveWindow, t.ConnReceiveWindow
	if sw <= 0 {
		sw = DefaultClientStreamReceiveWindow
	}
	if cw <= 0 {
		cw = DefaultClientConnReceiveWindow
	}
	setWindows(c, sw, cw)
	return c
}

// RoundTripHTTP3 implements client.HTTP3Transport.
func (t *Transport) RoundTripHTTP3(ctx context.Context, addr string, x *client.HTTP3Exchange) error {
	key := poolKey{addr, x.ServerName()}
	for attempt := 0; ; attempt++ {
		cc, s, err := t.openStream(ctx, key)
		if err != nil {
			return err
		}
		rs := t.getStream()
		rs.init(cc, s)
		err = rs.roundTrip(ctx, x)
		if err == nil {
			return nil
		}
		unprocessed, bodyRead := rs.unprocessed, rs.bodyRead
		rs.release()
		if !unprocessed || bodyRead || attempt >= clientMaxRetries || ctx.Err() != nil {
			return err
		}
	}
}

// CloseIdleConnections closes the connections that carry no request.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	var idle []*clientConn
	for _, p := range t.pools {
		for _, cc := range p.conns {
			if cc.active == 0 {
				idle = append(idle, cc)
			}
		}
	}
	t.mu.Unlock()
	for _, cc := range idle {
		cc.close(h3.CodeNoError, "idle")
	}
}

// Close closes every connection; requests in flight fail. Later requests
// fail with net.ErrClosed.
func (t *Transport) Close() error {
	t.mu.Lock()
	t.closed = true
	var all []*clientConn
	for _, p := range t.pools {
		all = append(all, p.conns...)
	}
	t.mu.Unlock()
	for _, cc := range all {
		cc.close(h3.CodeNoError, "client closed")
	}
	return nil
}

// Conns returns the number of open connections (for tests and metrics).
func (t *Transport) Conns() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, p := range t.pools {
		n += len(p.conns)
	}
	return n
}

// openStream opens a request stream on a connection of key, dialling one
// when none has room.
func (t *Transport) openStream(ctx context.Context, key poolKey) (*clientConn, *quic.Stream, error) {
	for {
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			return nil, nil, net.ErrClosed
		}
		p := t.pools[key]
		if p == nil {
			p = new(h3pool)
			if t.pools == nil {
				t.pools = make(map[poolKey]*h3pool)
			}
			t.pools[key] = p
		}
		for _, cc := range p.conns {
			if cc.dead || cc.goaway {
				continue
			}
			s, err := cc.qc.OpenStream()
			if err == nil {
				cc.active++
				t.mu.Unlock()
				return cc, s, nil
			}
			var limit quic.StreamLimitReachedError
			if !errors.As(err, &limit) {
				cc.dead = true
			}
		}
		if ch := p.dialCh; ch != nil {
			t.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, nil, context.Cause(ctx)
			}
		}
		ch := make(chan struct{})
		p.dialCh = ch
		t.mu.Unlock()
		cc, err := t.dial(ctx, key)
		t.mu.Lock()
		p.dialCh = nil
		close(ch)
		if err == nil {
			p.conns = append(p.conns, cc)
		}
		t.mu.Unlock()
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, context.Cause(ctx)
			}
			return nil, nil, fmt.Errorf("%w: %w", client.ErrHTTP3Unreachable, err)
		}
	}
}

// dial opens a connection to key and its control stream.
func (t *Transport) dial(ctx context.Context, key poolKey) (*clientConn, error) {
	t.dials.Add(1)
	var tc *tls.Config
	if t.TLSConfig != nil {
		tc = t.TLSConfig.Clone()
	} else {
		tc = new(tls.Config)
	}
	tc.NextProtos = []string{"h3"}
	if tc.ServerName == "" {
		tc.ServerName = key.name
	}
	qc, err := quic.DialAddr(ctx, key.addr, tc, t.quicConfig())
	if err != nil {
		return nil, err
	}
	cc := &clientConn{t: t, key: key, qc: qc, tls: qc.ConnectionState().TLS}
	ctrl, err := qc.OpenUniStream()
	if err != nil {
		qc.CloseWithError(quic.ApplicationErrorCode(h3.CodeInternalError), "")
		return nil, err
	}
	b := h3.AppendVarint(nil, uint64(h3.StreamControl))
	b = h3.AppendSettings(b, &h3.Settings{MaxFieldSectionSize: t.maxField(), HasMaxFieldSectionSize: true})
	if _, err := ctrl.Write(b); err != nil {
		qc.CloseWithError(quic.ApplicationErrorCode(h3.CodeInternalError), "")
		return nil, err
	}
	go cc.acceptUni()
	return cc, nil
}

// close closes the connection with code and takes it out of its pool.
func (cc *clientConn) close(code h3.ErrorCode, reason string) {
	cc.remove()
	cc.qc.CloseWithError(quic.ApplicationErrorCode(code), reason)
}

// fail closes the connection on the server's protocol error err.
func (cc *clientConn) fail(err error) {
	reason := ""
	var e *h3.Error
	if errors.As(err, &e) {
		reason = e.Reason
	}
	cc.close(h3.CodeOf(err), reason)
}

// remove takes cc out of its pool: it carries no new request.
func (cc *clientConn) remove() {
	t := cc.t
	t.mu.Lock()
	defer t.mu.Unlock()
	cc.dead = true
	if p := t.pools[cc.key]; p != nil {
		if i := slices.Index(p.conns, cc); i >= 0 {
			p.conns = slices.Delete(p.conns, i, i+1)
		}
		if len(p.conns) == 0 && p.dialCh == nil {
			delete(t.pools, cc.key)
		}
	}
}

// done ends a request stream of cc; a draining connection closes after
// its last one.
func (cc *clientConn) done() {
	t := cc.t
	t.mu.Lock()
	cc.active--
	last := cc.active == 0 && cc.goaway
	t.mu.Unlock()
	if last {
		cc.close(h3.CodeNoError, "")
	}
}

// acceptUni reads the server's unidirectional streams until the
// connection ends.
func (cc *clientConn) acceptUni() {
	ctx := cc.qc.Context()
	var uni h3.UniStreams
	for {
		s, err := cc.qc.AcceptUniStream(ctx)
		if err != nil {
			cc.remove()
			return
		}
		go cc.readUni(s, &uni)
	}
}

// readUni reads one unidirectional stream of the server: its control
// stream, or a QPACK stream (which, with a dynamic table of capacity 0,
// carries almost nothing).
func (cc *clientConn) readUni(s *quic.ReceiveStream, uni *h3.UniStreams) {
	r := frameReader{s: s, buf: make([]byte, 0, 1024)}
	typ, err := r.varint()
	if err != nil {
		return
	}
	cc.uniMu.Lock()
	err = uni.Accept(h3.StreamType(typ))
	cc.uniMu.Unlock()
	if h3.StreamType(typ) == h3.StreamPush {
		err = &h3.Error{Code: h3.CodeIDError, Conn: true, Reason: "push stream without MAX_PUSH_ID"}
	}
	if err == h3.ErrUnknownStreamType {
		s.CancelRead(quic.StreamErrorCode(h3.CodeStreamCreationError))
		return
	}
	if err != nil {
		cc.fail(err)
		return
	}
	switch h3.StreamType(typ) {
	case h3.StreamControl:
		err = cc.readControl(&r)
	case h3.StreamQPACKEncoder:
		err = r.drain(h3.DrainEncoderStream, h3.ErrEncoderStream)
	default:
		err = r.drain(h3.DrainDecoderStream, h3.ErrDecoderStream)
	}
	if err != nil {
		cc.fail(err)
	}
}

var errCriticalClosed = &h3.Error{Code: h3.CodeClosedCriticalStream, Conn: true, Reason: "critical stream closed"}

// readControl reads the server's control stream: SETTINGS, then GOAWAY.
func (cc *clientConn) readControl(r *frameReader) error {
	var cs h3.ControlStream
	var lim h3.Limits
	for {
		fh, err := r.frameHeader()
		if err != nil {
			if cc.qc.Context().Err() != nil {
				return nil
			}
			return errCriticalClosed
		}
		switch fh.Type {
		case h3.FrameMaxPushID, h3.FramePriorityUpdateRequest, h3.FramePriorityUpdatePush:
			// A client's frames (RFC 9114 §7.2.7, RFC 9218 §7.1).
			return h3.ErrFrameUnexpected
		}
		skip, err := cs.Check(fh, &lim)
		if err != nil {
			return err
		}
		if skip {
			if err := r.skip(fh.Length); err != nil {
				return errCriticalClosed
			}
			continue
		}
		p, err := r.payload(fh.Length)
		if err != nil {
			return errCriticalClosed
		}
		if err := cs.Apply(fh, p); err != nil {
			return err
		}
		r.consume(len(p))
		if fh.Type == h3.FrameSettings && cs.Settings.HasMaxFieldSectionSize {
			cc.peerMaxField.Store(max(cs.Settings.MaxFieldSectionSize, 1))
		}
		if fh.Type == h3.FrameGoaway {
			if cs.GoawayID%4 != 0 {
				return &h3.Error{Code: h3.CodeIDError, Conn: true, Reason: "GOAWAY names no request stream"}
			}
			cc.onGoaway(cs.GoawayID)
		}
	}
}

// onGoaway records the server's GOAWAY: requests on streams from id on
// were not processed and go to another connection; no new one starts here.
func (cc *clientConn) onGoaway(id uint64) {
	t := cc.t
	t.mu.Lock()
	first := !cc.goaway
	cc.goaway, cc.goawayID = true, id
	idle := cc.active == 0
	t.mu.Unlock()
	if first {
		cc.remove()
	}
	if idle {
		cc.close(h3.CodeNoError, "")
	}
}

// unprocessedID reports whether the server's GOAWAY says that stream id
// was not processed.
func (cc *clientConn) unprocessedID(id quic.StreamID) bool {
	t := cc.t
	t.mu.Lock()
	defer t.mu.Unlock()
	return cc.goaway && uint64(id) >= cc.goawayID
}

// frameReader reads HTTP/3 frames off a QUIC stream through a buffer.
type frameReader struct {
	s    io.Reader
	buf  []byte // buf[r:] is unread
	r    int
	fill int // bytes read into buf in total (for nothing but tests)
}

// more reads at least one more byte into buf, growing it up to max.
func (f *frameReader) more(max int) error {
	if f.r > 0 {
		n := copy(f.buf, f.buf[f.r:])
		f.buf, f.r = f.buf[:n], 0
	}
	if len(f.buf) == cap(f.buf) {
		if cap(f.buf) >= max {
			return h3.ErrFieldSectionTooLarge
		}
		f.buf = slices.Grow(f.buf, min(max, 2*cap(f.buf))-len(f.buf))
	}
	n, err := f.s.Read(f.buf[len(f.buf):cap(f.buf)])
	f.buf = f.buf[:len(f.buf)+n]
	f.fill += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// varint reads a variable-length integer.
func (f *frameReader) varint() (uint64, error) {
	for {
		v, n, err := h3.ParseVarint(f.buf[f.r:])
		if err == nil {
			f.r += n
			return v, nil
		}
		if err := f.more(cap(f.buf)); err != nil {
			return 0, err
		}
	}
}

// frameHeader reads a frame header; io.EOF at a clean end of stream.
func (f *frameReader) frameHeader() (h3.FrameHeader, error) {
	for {
		fh, n, err := h3.ParseFrameHeader(f.buf[f.r:])
		if err == nil {
			f.r += n
			return fh, nil
		}
		if err != h3.ErrNeedMore {
			return fh, err
		}
		err = f.more(max(cap(f.buf), 64))
		if err == io.EOF && f.r < len(f.buf) {
			err = io.ErrUnexpectedEOF // a truncated frame header
		}
		if err != nil {
			return fh, err
		}
	}
}

// payload returns the next n bytes, read in full into buf (n is bounded
// by the caller); consume them after use.
func (f *frameReader) payload(n uint64) ([]byte, error) {
	for uint64(len(f.buf)-f.r) < n {
		if f.r == 0 && uint64(cap(f.buf)) < n {
			f.buf = slices.Grow(f.buf, int(n)-len(f.buf))
		}
		if err := f.more(max(cap(f.buf), int(n))); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return f.buf[f.r : f.r+int(n)], nil
}

func (f *frameReader) consume(n int) { f.r += n }

// skip discards n bytes.
func (f *frameReader) skip(n uint64) error {
	for n > 0 {
		if f.r == len(f.buf) {
			if err := f.more(cap(f.buf)); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return err
			}
		}
		k := min(n, uint64(len(f.buf)-f.r))
		f.r += int(k)
		n -= k
	}
	return nil
}

// drain reads a QPACK stream to its end through check.
func (f *frameReader) drain(check func([]byte) (int, error), bad error) error {
	for {
		n, err := check(f.buf[f.r:])
		f.r += n
		if err != nil {
			return err
		}
		if len(f.buf)-f.r >= 64 {
			// A partial instruction this long is no valid one.
			return bad
		}
		if err := f.more(cap(f.buf)); err != nil {
			if err == io.EOF {
				return errCriticalClosed
			}
			return nil // the connection ended
		}
	}
}
