package h2

// The engine's API: what a server gives a connection (Config, Handler) and
// what a Handler gets for each stream (Stream). Nothing here names a
// net/http type, and nothing above the engine reaches into its state.

import (
	"crypto/tls"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
	"github.com/riptide-http/riptide/internal/reqhead"
	"golang.org/x/net/http2/hpack"
)

// Config configures the connections of a server. It is shared by them
// and must not change once one is served.
type Config struct {
	// Handler serves every stream.
	Handler Handler
	// MaxConcurrentStreams is SETTINGS_MAX_CONCURRENT_STREAMS (zero:
	// DefaultMaxConcurrentStreams); MaxReadFrameSize SETTINGS_MAX_FRAME_SIZE
	// (16 KiB to 16 MiB, else 16 KiB); the receive buffers are the
	// flow-control windows granted to the client (zero: 1 MiB each).
	MaxConcurrentStreams          uint32
	MaxReadFrameSize              uint32
	MaxReceiveBufferPerConnection int32
	MaxReceiveBufferPerStream     int32
	// SendPingTimeout sends a keepalive PING after that long without a
	// frame from the client (zero: none); a PING unanswered for
	// PingTimeout (zero: 15 s) ends the connection.
	SendPingTimeout time.Duration
	PingTimeout     time.Duration
	// InlineHandlers runs the streams whose request is complete when
	// their HEADERS arrive on the connection's reading goroutine.
	InlineHandlers bool
	// MaxHeaderBytes bounds a request's header list (431 beyond).
	MaxHeaderBytes int
	// IdleTimeout closes a connection with no stream for that long;
	// WriteTimeout bounds each connection write and each wait of a
	// response write for window; ReadBodyTimeout each body read that
	// waits, unless the handler set a read deadline; MaxConnAge and
	// MaxRequests send GOAWAY. Zero: no limit.
	IdleTimeout     time.Duration
	WriteTimeout    time.Duration
	ReadBodyTimeout time.Duration
	MaxConnAge      time.Duration
	MaxRequests     int
	// ParkDelay is how long a connection stays quiet (no stream, no
	// output) before it parks, with a Parker (park.go): a client sending
	// its requests one after another then does not make its connection
	// park and resume between every two. Zero parks at once.
	ParkDelay time.Duration
	// Resets counts the RST_STREAM frames sent, ClientResets those
	// received (nil: not counted).
	Resets       *atomic.Uint64
	ClientResets *atomic.Uint64
	// EnableConnectProtocol sends SETTINGS_ENABLE_CONNECT_PROTOCOL=1 and
	// accepts extended CONNECT requests (RFC 8441: :method CONNECT with
	// :protocol, :scheme, :path and :authority); without it a request
	// with :protocol is malformed.
	EnableConnectProtocol bool
}

// DefaultMaxConcurrentStreams is the default SETTINGS_MAX_CONCURRENT_STREAMS.
const DefaultMaxConcurrentStreams = 100

// Preface is the HTTP/2 client connection preface (RFC 9113 §3.4).
const Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// h2Preface is Preface under the name the engine's code uses.
const h2Preface = Preface

// aLongTimeAgo is a deadline in the past: it ends a blocked read.
var aLongTimeAgo = time.Unix(1, 0)

// Handler serves the streams of a connection. ServeStream runs on a
// worker goroutine (or, with InlineHandlers, on the connection's reading
// goroutine) and must complete the response before it returns: the
// stream is reset otherwise, and is reused once it has returned.
type Handler interface {
	ServeStream(st *Stream)
}

// ResetNotifier is told, under the connection's lock, when its stream is
// reset (by either side) or its connection ends.
type ResetNotifier interface {
	StreamReset()
}

// GoAwayAfterFirst makes a connection send GOAWAY once its first stream
// has started (a connection accepted while the server drains).
func (hc *Conn) GoAwayAfterFirst() {
	hc.mu.Lock()
	hc.goAwayAfterFirst = true
	hc.mu.Unlock()
}

// Upgrade is an "Upgrade: h2c" request (RFC 7540 §3.2), which becomes
// stream 1 of the connection, half-closed: its body was read whole.
type Upgrade struct {
	Settings                []byte // the HTTP2-Settings payload
	Method, Authority, Path string
	Fields                  []hpack.HeaderField
	Body                    []byte
}

// NewUpgrade takes an HTTP/1.1 upgrade request apart (copying what it
// keeps): its connection-specific fields, Host, HTTP2-Settings and
// Content-Length do not become HTTP/2 fields.
func NewUpgrade(req *h1.Request, settings, body []byte) *Upgrade {
	up := &Upgrade{Settings: settings, Method: string(req.Method), Authority: string(req.Host), Path: string(req.Target), Body: body}
	for _, f := range req.Headers {
		switch f.Key {
		case h1.HeaderConnection, h1.HeaderUpgrade, h1.HeaderHost, h1.HeaderTransferEncoding, h1.HeaderContentLength:
			continue
		}
		if upgradeDropped(f.Name) {
			continue
		}
		name := make([]byte, len(f.Name))
		for i, c := range f.Name {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			name[i] = c
		}
		up.Fields = append(up.Fields, hpack.HeaderField{Name: string(name), Value: string(f.Value)})
	}
	return up
}

// upgradeDropped reports the fields of an upgrade request that stream 1
// does not carry.
func upgradeDropped(name []byte) bool {
	for _, n := range [...]string{"connection", "upgrade", "http2-settings", "host", "keep-alive", "proxy-connection", "transfer-encoding", "te", "content-length"} {
		if ascii.EqualFold(name, n) {
			return true
		}
	}
	return false
}

// The request.

// Method, Scheme, Authority and Path return the request's pseudo-header
// fields (checked by h1.PseudoHead.Check).
func (st *Stream) Method() string    { return st.method }
func (st *Stream) Scheme() string    { return st.scheme }
func (st *Stream) Authority() string { return st.authority }
func (st *Stream) Path() string      { return st.path }

// Protocol is the :protocol of an extended CONNECT (RFC 8441), "" for any
// other request.
func (st *Stream) Protocol() string { return st.protocol }

// Fields returns the request's regular fields, in order (lower-case
// names). They stay valid while the handler runs.
func (st *Stream) Fields() []hpack.HeaderField { return st.fields }

// ContentLength returns the declared content-length, -1 if none.
func (st *Stream) ContentLength() int64 { return st.declLen }

// HasBody reports whether the request may have a body: its HEADERS did
// not end the stream.
func (st *Stream) HasBody() bool { return !st.endAtOpen }

// HeadTooLarge reports a header list over MaxHeaderBytes (answer 431).
func (st *Stream) HeadTooLarge() bool { return st.tooLarge }

// RemoteAddrString returns the client's address as a string.
func (st *Stream) RemoteAddrString() string { return st.hc.remoteAddr }

// TLS returns the connection's TLS state, nil for h2c. The first call on
// a connection makes it (OverTLS asks without making it).
func (st *Stream) TLS() *tls.ConnectionState { return st.hc.tlsState() }

// OverTLS reports whether the connection runs over TLS.
func (st *Stream) OverTLS() bool {
	_, ok := st.hc.nc.(*tls.Conn)
	return ok
}

// Trailers returns the request's trailers, complete once ReadBody has
// returned io.EOF.
func (st *Stream) Trailers() []hpack.HeaderField {
	hc := st.hc
	hc.mu.Lock()
	defer hc.mu.Unlock()
	return st.trailers
}

// FillRequest copies the request head into buf (grown when too small) and
// points req at it, as an HTTP/1.1 request with the :authority as Host.
// It returns the buffer, the head it holds at its start (the method,
// the target, the :authority, then each field's name and value: the
// contract reqhead.Head names), and 0 or the status for a request to
// refuse: 431 for a header list over the limit or more than maxHeaders
// fields, 400 for a request line h1 refuses.
func (st *Stream) FillRequest(req *h1.Request, buf []byte, maxHeaders int) ([]byte, reqhead.Head, int) {
	if st.tooLarge || len(st.fields) > maxHeaders {
		return buf, reqhead.Head{}, 431
	}
	target := st.path
	if st.method == "CONNECT" && st.protocol == "" {
		target = st.authority
	}
	n := len(st.method) + len(target) + len(st.authority)
	for _, f := range st.fields {
		n += len(f.Name) + len(f.Value)
	}
	if n > len(buf) {
		buf = make([]byte, n)
	}
	b := buf[:0]
	req.Reset()
	method, b := AppendView(b, st.method)
	tgt, b := AppendView(b, target)
	var err error
	if st.protocol != "" {
		err = req.SetExtendedConnectLine(method, tgt)
	} else {
		err = req.SetRequestLine(method, tgt, 1)
	}
	if err != nil {
		return buf, reqhead.Head{}, 400
	}
	req.Host, b = AppendView(b, st.authority)
	for _, f := range st.fields {
		var name, value []byte
		name, b = AppendView(b, f.Name)
		value, b = AppendView(b, f.Value)
		req.AddHeader(name, value)
		if len(req.Host) == 0 && req.Headers[len(req.Headers)-1].Key == h1.HeaderHost {
			req.Host = value
		}
	}
	switch {
	case st.declLen >= 0:
		req.ContentLength = st.declLen
	case st.endAtOpen:
		req.ContentLength = 0
	default:
		req.ContentLength = -1 // unknown; HTTP/2 has no Transfer-Encoding
	}
	return buf, reqhead.Of(b), 0
}

// AppendView appends s to b, which has room for it, and returns the copy.
func AppendView(b []byte, s string) ([]byte, []byte) {
	start := len(b)
	b = append(b, s...)
	return b[start:len(b):len(b)], b
}

// ReadBody reads request body bytes, waiting for the client within the
// read deadline (ReadBodyTimeout by default); io.EOF at the end of the
// stream, io.ErrUnexpectedEOF once it is reset, ErrBodyClosed after
// CloseBody or the handler's end.
func (st *Stream) ReadBody(p []byte) (int, error) { return st.readBody(p) }

// CloseBody makes later body reads fail and discards the rest of the
// body (granting its window back), unless ended is set: the handler has
// returned and the stream may serve another request already. A ReadBody
// blocked in another goroutine returns at once.
func (st *Stream) CloseBody(ended *atomic.Bool) {
	hc := st.hc
	hc.mu.Lock()
	// ended is stored before handlerDone takes hc.mu, and the stream is
	// only reused after handlerDone: if ended is still false here, st is
	// still this request's stream.
	if !ended.Load() {
		st.bodyClosed = true
		n := len(st.rbuf) - st.roff
		st.bodyDrained()
		if n > 0 {
			hc.consumed(st, n)
		}
		hc.cond.Broadcast()
	}
	hc.mu.Unlock()
}

// StopBody makes a body read in flight on another goroutine return at
// once (with the bytes already received, io.EOF, or ErrBodyClosed); no
// more body is kept, so later reads fail once those bytes are taken. The
// root calls it (its exchange's stopBody) when the handler has returned
// and such a read is in flight, then waits for the read before it gives
// the stream back.
func (st *Stream) StopBody() {
	hc := st.hc
	hc.mu.Lock()
	st.bodyClosed = true
	hc.cond.Broadcast()
	hc.mu.Unlock()
}

// OnReset registers n to be told when the stream is reset; if it already
// is, n is told at once.
func (st *Stream) OnReset(n ResetNotifier) {
	hc := st.hc
	hc.mu.Lock()
	st.onReset = n
	if st.reset {
		n.StreamReset()
	}
	hc.mu.Unlock()
}

// Err returns nil while the stream can still be written to.
func (st *Stream) Err() error {
	hc := st.hc
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if st.reset || hc.dead {
		return errH2StreamClosed
	}
	return nil
}

// The stream as a net.Conn, for a handler that wants one (the native
// door's Ctx): Read is the disconnect watch.

// Read blocks until the stream is reset or the connection ends (io.EOF),
// or the read deadline passes. Body bytes are read with ReadBody, never
// here.
func (st *Stream) Read(p []byte) (int, error) {
	hc := st.hc
	hc.mu.Lock()
	defer hc.mu.Unlock()
	for !st.reset && !hc.dead {
		if !st.waitUntil(st.readDeadline) {
			return 0, os.ErrDeadlineExceeded
		}
	}
	return 0, io.EOF
}

// ErrNotWritable is returned by Write: responses go through WriteHead and
// WriteData.
var ErrNotWritable = errNotWritable{}

type errNotWritable struct{}

func (errNotWritable) Error() string { return "h2: a stream is written by WriteHead and WriteData" }

// Write fails with ErrNotWritable.
func (st *Stream) Write(p []byte) (int, error) { return 0, ErrNotWritable }

// Close is a no-op: the stream ends when its handler returns.
func (st *Stream) Close() error { return nil }

// LocalAddr returns the connection's local address.
func (st *Stream) LocalAddr() net.Addr { return st.hc.localAddr }

// RemoteAddr returns the client's address.
func (st *Stream) RemoteAddr() net.Addr { return st.hc.nc.RemoteAddr() }

// NetConn returns the connection's socket (a *tls.Conn over TLS).
func (st *Stream) NetConn() net.Conn { return st.hc.nc }

// SetDeadline sets both deadlines.
func (st *Stream) SetDeadline(t time.Time) error {
	_ = st.SetReadDeadline(t)
	return st.SetWriteDeadline(t)
}

// SetReadDeadline bounds body reads and the disconnect watch.
func (st *Stream) SetReadDeadline(t time.Time) error {
	hc := st.hc
	hc.mu.Lock()
	st.readDeadline, st.deadlineSet = t, true
	hc.cond.Broadcast()
	hc.mu.Unlock()
	return nil
}

// SetWriteDeadline bounds response writes waiting for flow control.
func (st *Stream) SetWriteDeadline(t time.Time) error {
	hc := st.hc
	hc.mu.Lock()
	st.writeDeadline = t
	hc.cond.Broadcast()
	hc.mu.Unlock()
	return nil
}

// The response.

// Field is a response header or trailer field.
type Field struct {
	Name, Value string
	// View: Name and Value are views of buffers the caller reuses. The
	// name is lower-cased and connection-specific fields are dropped; a
	// known field's value is sent as an indexable copy when it repeats
	// the field's last value on the connection, any other value is sent
	// never-indexed (the encoder keeps no reference to it). Otherwise
	// Name is lower case and both are strings the encoder may keep.
	View bool
}

// Head is a response head.
type Head struct {
	Status int
	Fields []Field
	// ContentLength is sent after the fields when not negative.
	ContentLength int64
}

// FieldBuf is a field list kept with the stream for its handler to build
// a head or trailers in before WriteHead or WriteTrailers, so that doing
// so allocates nothing once it has grown. The fields it holds when the
// stream ends are cleared.
func (st *Stream) FieldBuf() *[]Field { return &st.out }

// WriteHead sends the response head (a 1xx one, or the final one), and
// then body; with end set the body is the whole response and the stream
// ends with it. It waits while the output or a window is full, within
// the write deadline (WriteTimeout by default).
func (st *Stream) WriteHead(h *Head, body []byte, end bool) error {
	hc := st.hc
	if !st.lockToSend() {
		return errH2StreamClosed
	}
	defer hc.mu.Unlock()
	st.encodeHead(h)
	endNow := end && len(body) == 0 && h.Status >= 200
	hc.queueHeaders(st.id, endNow)
	switch {
	case h.Status == 100:
		st.sent100 = true
	case h.Status >= 200:
		st.headSent = true
	}
	if h.Status < 200 {
		return nil
	}
	if endNow {
		st.endSent()
		return nil
	}
	return st.writeDataLocked(body, end)
}

// Send100Continue sends "100 Continue" unless a 100 or the final head
// went out already.
func (st *Stream) Send100Continue() {
	hc := st.hc
	if !st.lockToSend() {
		return
	}
	defer hc.mu.Unlock()
	if st.headSent || st.sent100 {
		return
	}
	st.sent100 = true
	hc.encodeField(":status", "100")
	hc.queueHeaders(st.id, false)
}

// WriteData sends p as DATA frames within the flow-control windows,
// ending the stream after it when end is set. It blocks while a window
// is empty or the connection's output is full, within the write deadline.
func (st *Stream) WriteData(p []byte, end bool) error { return st.writeData(p, end) }

// EndStream ends the response with an empty DATA frame, unless it has
// ended already.
func (st *Stream) EndStream() error {
	hc := st.hc
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if st.sendEnd {
		return nil
	}
	return st.writeDataLocked(nil, true)
}

// WriteTrailers ends the response with a HEADERS frame of trailers
// (possibly none), unless it has ended already.
func (st *Stream) WriteTrailers(fields []Field) error {
	hc := st.hc
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if st.sendEnd {
		return nil
	}
	if st.reset || hc.dead || !hc.waitOutput() || st.reset {
		return errH2StreamClosed
	}
	st.encodeFields(fields)
	hc.queueHeaders(st.id, true)
	st.endSent()
	return nil
}

// Reset resets the stream with INTERNAL_ERROR unless the response is
// complete or the stream is over: the client must not take what was sent
// as a whole response.
func (st *Stream) Reset() {
	hc := st.hc
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if !st.sendEnd && st.inTable && !st.reset && !hc.dead {
		hc.closeStream(st, ErrCodeInternal, true)
	}
}

// encodeHead encodes :status, the fields and the content-length into
// hc.hbuf (hc.mu held).
func (st *Stream) encodeHead(h *Head) {
	hc := st.hc
	hc.encodeStatus(h.Status)
	st.encodeFields(h.Fields)
	if h.ContentLength >= 0 {
		b := strconv.AppendInt(st.clenBuf[:0], h.ContentLength, 10)
		hc.encodeContentLength(unsafe.String(&b[0], len(b)))
	}
}

// encodeStatus encodes :status (hc.mu held). A code of the static table
// (RFC 7541 Appendix A, entries 8 to 14) is its index, one byte, as the
// encoder would write it after searching its tables; unless the encoder
// owes a table size update, which must come first in the block.
func (hc *Conn) encodeStatus(code int) {
	if i := staticStatus(code); i != 0 && !hc.encUpdate {
		hc.hbuf.b = append(hc.hbuf.b, 0x80|i) // indexed field (§6.1)
		return
	}
	hc.encodeField(":status", statusText(code))
}

// staticStatus returns the static table's index for ":status: code", 0
// if it has none.
func staticStatus(code int) byte {
	switch code {
	case 200:
		return 8
	case 204:
		return 9
	case 206:
		return 10
	case 304:
		return 11
	case 400:
		return 12
	case 404:
		return 13
	case 500:
		return 14
	}
	return 0
}

// encodeContentLength encodes content-length: digits (hc.mu held), never
// indexed, for they are a view of a reused buffer: a literal never
// indexed with the static table's name (entry 28, RFC 7541 §6.2.3) and
// the value Huffman-coded where that is shorter, the bytes the encoder
// writes for that field, without searching its tables.
func (hc *Conn) encodeContentLength(digits string) {
	if hc.encUpdate {
		hc.writeField(hpack.HeaderField{Name: "content-length", Value: digits, Sensitive: true})
		return
	}
	// 0001 + index 28 on 4 bits: 15, then 28-15 (§5.1). At most 20
	// digits: the length fits the 7-bit prefix.
	b := append(hc.hbuf.b, 0x10|15, 28-15)
	if n := hpack.HuffmanEncodeLength(digits); n < uint64(len(digits)) {
		b = append(b, 0x80|byte(n))
		b = hpack.AppendHuffmanString(b, digits)
	} else {
		b = append(b, byte(len(digits)))
		b = append(b, digits...)
	}
	hc.hbuf.b = b
}

// encodeFields encodes fields into hc.hbuf (hc.mu held).
func (st *Stream) encodeFields(fields []Field) {
	hc := st.hc
	for _, f := range fields {
		if !f.View {
			hc.encodeField(f.Name, f.Value)
			continue
		}
		name := unsafe.Slice(unsafe.StringData(f.Name), len(f.Name))
		if h1.ConnectionSpecific(name) {
			continue
		}
		hf := hpack.HeaderField{Value: f.Value, Sensitive: true}
		if k := h1.Lookup(name); k != h1.Unknown {
			hf.Name = k.Lower()
			if v := hc.knownValue(k, f.Value); v != "" {
				hf.Value, hf.Sensitive = v, false
			}
		} else {
			lower := st.lowerName(name)
			hf.Name = unsafe.String(unsafe.SliceData(lower), len(lower))
		}
		hc.writeField(hf)
	}
}

// lowerName returns name in lower case, in a buffer of the stream's.
func (st *Stream) lowerName(name []byte) []byte {
	b := st.lower[:0]
	for _, ch := range name {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		b = append(b, ch)
	}
	st.lower = b
	return b
}

// knownValue returns a string for the value of a known field that the
// connection can index: the same as the last value of that field (made
// once), or a new one for the next time (hc.mu held).
func (hc *Conn) knownValue(k h1.Known, v string) string {
	b := hc.bufs // nil once the connection is over
	if b == nil || int(k) >= len(b.lastValues) {
		return ""
	}
	last := b.lastValues[k]
	if last == v {
		return last
	}
	if len(v) <= 64 {
		b.lastValues[k] = strings.Clone(v) // v is a view
	}
	return ""
}

// statusText returns the :status value for code.
func statusText(code int) string {
	switch code {
	case 200:
		return "200"
	case 204:
		return "204"
	case 206:
		return "206"
	case 301:
		return "301"
	case 302:
		return "302"
	case 304:
		return "304"
	case 400:
		return "400"
	case 404:
		return "404"
	case 500:
		return "500"
	}
	return strconv.Itoa(code)
}
