package http3

// One request on an HTTP/3 client connection: its HEADERS, body and
// trailers written, the response's HEADERS decoded into the exchange, and
// its body read by the caller (reqStream is the client.HTTP3Body).

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"
	"unsafe"

	"github.com/quic-go/quic-go"
	"github.com/riptide-http/riptide/client"
	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/h3"
)

// Errors of the HTTP/3 client, besides the h3 codec's protocol errors.
var (
	// ErrResponseIncomplete: the server ended the stream before a
	// response head, or a body shorter than its content-length.
	ErrResponseIncomplete = errors.New("http3: response stream ended early")
	// ErrMalformedResponse: the response's field section breaks RFC 9114
	// §4.3.2 (a missing or repeated :status, another pseudo-header, a
	// 101, an invalid field).
	ErrMalformedResponse = errors.New("http3: malformed response")
	// ErrRequestFieldsTooLarge: the request's field section (or its
	// trailers) exceeds the server's SETTINGS_MAX_FIELD_SECTION_SIZE, as
	// RFC 9114 §4.2.2 counts it; the request is not sent.
	ErrRequestFieldsTooLarge = errors.New("http3: request field section larger than the server accepts")
)

// errUnprocessed marks a request the server did not process: a reset with
// H3_REQUEST_REJECTED, or a stream at or above a GOAWAY's identifier.
var errUnprocessed = errors.New("http3: request not processed by the server")

// reqStream is the state of one request stream.
type reqStream struct {
	t  *Transport
	cc *clientConn
	s  *quic.Stream
	id quic.StreamID

	fr       frameReader
	w        []byte // frames to write
	fields   []h3.Field
	scratch  []byte // decoded field bytes
	trailers []h1.Header
	traw     []byte
	bbuf     []byte // request body chunks

	size     uint64 // size of the field section being encoded (RFC 9114 §4.2.2)
	left     uint64 // DATA payload bytes of the current frame still unread
	got      int64  // body bytes received
	declared int64  // content-length, -1: none
	empty    int    // empty DATA frames
	unknown  uint64 // unknown frame bytes skipped
	head     bool   // HEAD request: no body expected
	eof      bool
	closed   bool
	finSent  bool

	ctx         context.Context
	unprocessed bool // the server did not process the request
	bodyRead    bool // a body stream was read from (not replayable)
	stop        func() bool
	field       func(name, value []byte)
}

func (t *Transport) getStream() *reqStream {
	if rs, ok := t.rsPool.Get().(*reqStream); ok {
		return rs
	}
	rs := &reqStream{t: t}
	rs.field = rs.addField
	return rs
}

// init prepares rs for a request on stream s of cc.
func (rs *reqStream) init(cc *clientConn, s *quic.Stream) {
	rs.cc, rs.s, rs.id = cc, s, s.StreamID()
	if cap(rs.fr.buf) == 0 {
		rs.fr.buf = make([]byte, 0, clientReadBufSize)
	}
	rs.fr = frameReader{s: s, buf: rs.fr.buf[:0]}
	rs.trailers, rs.traw = rs.trailers[:0], rs.traw[:0]
	rs.left, rs.got, rs.declared, rs.empty, rs.unknown = 0, 0, -1, 0, 0
	rs.head, rs.eof, rs.closed, rs.finSent, rs.unprocessed, rs.bodyRead = false, false, false, false, false, false
	rs.stop, rs.ctx = nil, nil
}

// release ends the stream (reset unless it ended cleanly) and returns rs
// to the pool.
func (rs *reqStream) release() {
	if rs.stop != nil {
		rs.stop()
		rs.stop = nil
	}
	if !rs.eof {
		rs.s.CancelRead(quic.StreamErrorCode(h3.CodeRequestCancelled))
	}
	if !rs.finSent {
		rs.s.CancelWrite(quic.StreamErrorCode(h3.CodeRequestCancelled))
	}
	rs.cc.done()
	rs.cc, rs.s, rs.ctx = nil, nil, nil
	rs.fr.s = nil
	if cap(rs.fr.buf) > clientReadBufSize || cap(rs.scratch) > int(rs.t.maxField()) {
		rs.fr.buf, rs.scratch = nil, nil
	}
	rs.t.rsPool.Put(rs)
}

// addField appends a request field to the section being encoded.
func (rs *reqStream) addField(name, value []byte) {
	rs.scratch = h3.AppendFieldBytes(rs.scratch, name, value, false)
	rs.size += uint64(len(name)+len(value)) + h3.FieldOverhead
}

// fits reports whether a field section of rs.size fits the server's
// SETTINGS_MAX_FIELD_SECTION_SIZE, when it announced one.
func (rs *reqStream) fits() bool {
	m := rs.cc.peerMaxField.Load()
	return m == 0 || rs.size <= m
}

// roundTrip sends x's request on rs and reads the response head into x.
func (rs *reqStream) roundTrip(ctx context.Context, x *client.HTTP3Exchange) error {
	s := rs.s
	rs.ctx = ctx
	deadline := x.Deadline()
	s.SetWriteDeadline(deadline)
	s.SetReadDeadline(earlier(deadline, x.HeaderDeadline()))
	if ctx.Done() != nil {
		rs.stop = context.AfterFunc(ctx, func() {
			s.CancelRead(quic.StreamErrorCode(h3.CodeRequestCancelled))
			s.CancelWrite(quic.StreamErrorCode(h3.CodeRequestCancelled))
		})
	}
	method := x.Method()
	rs.head = string(method) == "HEAD"
	rs.scratch, rs.size = h3.AppendFieldSectionPrefix(rs.scratch[:0]), 0
	rs.addField(sbytes(":method"), method)
	rs.addField(sbytes(":scheme"), sbytes("https"))
	rs.addField(sbytes(":authority"), x.Authority())
	rs.addField(sbytes(":path"), x.Path())
	x.Fields(rs.field)
	if !rs.fits() {
		return ErrRequestFieldsTooLarge
	}
	w := h3.AppendFrameHeader(rs.w[:0], h3.FrameHeaders, uint64(len(rs.scratch)))
	w = append(w, rs.scratch...)
	body := x.Body()
	bs, size := x.BodyStream()
	trailer := x.Trailer()
	if len(body) > 0 {
		w = h3.AppendFrameHeader(w, h3.FrameData, uint64(len(body)))
		w = append(w, body...)
	}
	rs.w = w[:0]
	if err := rs.send(w, bs, size, trailer); err != nil {
		if !stopped(err) && !stopped(context.Cause(s.Context())) {
			return rs.failed(ctx, err)
		}
		// The server answers without the rest of the request (RFC 9114
		// §4.1.2): read its response.
	}
	rs.finSent = true
	if err := rs.readHead(x); err != nil {
		return rs.failed(ctx, err)
	}
	s.SetReadDeadline(deadline)
	x.SetTLS(&rs.cc.tls)
	x.SetBody(rs)
	return nil
}

// send writes the request's first frames w, its body stream and
// trailers, and ends the stream.
func (rs *reqStream) send(w []byte, bs io.Reader, size int64, trailer http.Header) error {
	if _, err := rs.s.Write(w); err != nil {
		return err
	}
	if bs != nil {
		if err := rs.sendStream(bs, size); err != nil {
			return err
		}
	}
	if trailer != nil {
		if err := rs.sendTrailers(trailer); err != nil {
			return err
		}
	}
	return rs.s.Close()
}

// stopped reports the server's STOP_SENDING with H3_NO_ERROR: it wants
// no more of the request, and its response follows. (quic-go reports it
// from Write, and from Close as a plain error, the stream's context then
// holding it.)
func stopped(err error) bool {
	var se *quic.StreamError
	return errors.As(err, &se) && se.Remote && se.ErrorCode == quic.StreamErrorCode(h3.CodeNoError)
}

// sendStream writes a body stream as DATA frames, as fast as the stream's
// flow control takes them.
func (rs *reqStream) sendStream(bs io.Reader, size int64) error {
	if cap(rs.bbuf) == 0 {
		rs.bbuf = make([]byte, 16<<10)
	}
	const hdrRoom = 16
	var sent int64
	for {
		n, err := bs.Read(rs.bbuf[hdrRoom:])
		if n > 0 {
			rs.bodyRead = true
			sent += int64(n)
			if size >= 0 && sent > size {
				return client.ErrBodyLength
			}
			hl := h3.VarintLen(uint64(h3.FrameData)) + h3.VarintLen(uint64(n))
			h3.AppendFrameHeader(rs.bbuf[hdrRoom-hl:hdrRoom-hl], h3.FrameData, uint64(n))
			if _, werr := rs.s.Write(rs.bbuf[hdrRoom-hl : hdrRoom+n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			if size >= 0 && sent != size {
				return client.ErrBodyLength
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// sendTrailers writes the request trailers as a HEADERS frame.
func (rs *reqStream) sendTrailers(trailer http.Header) error {
	rs.scratch, rs.size = h3.AppendFieldSectionPrefix(rs.scratch[:0]), 0
	for name, vs := range trailer {
		if !h1.ValidHeaderName(name) {
			return client.ErrBadHeader
		}
		for _, v := range vs {
			if !h1.ValidHeaderValue(v) {
				return client.ErrBadHeader
			}
			rs.addField(sbytes(name), sbytes(v))
		}
	}
	if !rs.fits() {
		return ErrRequestFieldsTooLarge
	}
	f := rs.scratch
	w := h3.AppendFrameHeader(rs.w[:0], h3.FrameHeaders, uint64(len(f)))
	w = append(w, f...)
	rs.w = w[:0]
	_, err := rs.s.Write(w)
	return err
}

// failed turns the error that ended the exchange into the caller's.
func (rs *reqStream) failed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var se *quic.StreamError
	if errors.As(err, &se) && se.Remote && se.ErrorCode == quic.StreamErrorCode(h3.CodeRequestRejected) {
		rs.unprocessed = true
		return errUnprocessed
	}
	if rs.cc.unprocessedID(rs.id) {
		rs.unprocessed = true
		return errUnprocessed
	}
	var he *h3.Error
	if errors.As(err, &he) {
		if he.Conn {
			rs.cc.fail(he)
		}
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &timeoutError{err}
	}
	return err
}

// readHead reads frames up to the final response's HEADERS and fills x.
func (rs *reqStream) readHead(x *client.HTTP3Exchange) error {
	n1xx := 0
	for {
		fh, err := rs.fr.frameHeader()
		if err == io.EOF {
			return ErrResponseIncomplete
		}
		if err != nil {
			return err
		}
		switch {
		case fh.Type == h3.FrameHeaders:
		case fh.Type == h3.FrameData:
			return h3.ErrFrameUnexpected // DATA before the response head
		default:
			if err := rs.other(fh); err != nil {
				return err
			}
			continue
		}
		fields, err := rs.section(fh.Length)
		if err != nil {
			return err
		}
		status, err := parseStatus(fields)
		if err != nil {
			return err
		}
		if status < 200 {
			if n1xx++; n1xx > client.Max1xxResponses {
				return client.ErrTooMany1xx
			}
			continue
		}
		x.SetStatus(status)
		for i := 1; i < len(fields); i++ {
			f := &fields[i]
			x.AddHeader(f.Name, f.Value)
			if string(f.Name) == "content-length" {
				n, ok := parseDigits(f.Value)
				if !ok || rs.declared >= 0 && rs.declared != n {
					return ErrMalformedResponse
				}
				rs.declared = n
			}
		}
		if rs.head || status == 204 || status == 304 {
			rs.declared = -1
		}
		return nil
	}
}

// section reads a HEADERS payload of n bytes and decodes it into
// rs.fields.
func (rs *reqStream) section(n uint64) ([]h3.Field, error) {
	max := rs.t.maxField()
	if n > max {
		return nil, h3.ErrFieldSectionTooLarge
	}
	p, err := rs.fr.payload(n)
	if err != nil {
		return nil, err
	}
	if uint64(cap(rs.scratch)) < max {
		rs.scratch = make([]byte, 0, max)
	}
	fields, scratch, err := h3.DecodeFieldSection(rs.fields[:0], rs.scratch[:0], p, max)
	rs.fr.consume(len(p))
	rs.fields, rs.scratch = fields[:0], scratch[:0]
	return fields, err
}

// other handles a frame on the request stream that is neither HEADERS nor
// DATA: an unknown type is skipped within a budget; a control frame, a
// reserved HTTP/2 type or PUSH_PROMISE (push is never enabled) ends the
// connection.
func (rs *reqStream) other(fh h3.FrameHeader) error {
	switch {
	case fh.Type.ReservedHTTP2():
		return h3.ErrReservedFrameType
	case fh.Type == h3.FramePushPromise:
		return &h3.Error{Code: h3.CodeIDError, Conn: true, Reason: "PUSH_PROMISE without MAX_PUSH_ID"}
	case fh.Type == h3.FrameSettings, fh.Type == h3.FrameGoaway, fh.Type == h3.FrameMaxPushID,
		fh.Type == h3.FrameCancelPush, fh.Type == h3.FramePriorityUpdateRequest, fh.Type == h3.FramePriorityUpdatePush:
		return h3.ErrFrameUnexpected
	}
	rs.unknown += fh.Length
	if rs.unknown > clientMaxUnknownBytes {
		return &h3.Error{Code: h3.CodeExcessiveLoad, Reason: "too many unknown frame bytes"}
	}
	return rs.fr.skip(fh.Length)
}

// parseStatus checks a response field section's pseudo-headers: :status
// first and alone among them (RFC 9114 §4.3.2), then regular fields.
func parseStatus(fields []h3.Field) (int, error) {
	if len(fields) == 0 || string(fields[0].Name) != ":status" {
		return 0, ErrMalformedResponse
	}
	v := fields[0].Value
	if len(v) != 3 {
		return 0, ErrMalformedResponse
	}
	status := 0
	for _, d := range v {
		if d < '0' || d > '9' {
			return 0, ErrMalformedResponse
		}
		status = status*10 + int(d-'0')
	}
	if status < 100 || status == 101 {
		return 0, ErrMalformedResponse
	}
	if err := h3.CheckTrailers(fields[1:]); err != nil {
		return 0, ErrMalformedResponse
	}
	return status, nil
}

func parseDigits(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, d := range b {
		if d < '0' || d > '9' {
			return 0, false
		}
		n = n*10 + int64(d-'0')
	}
	return n, true
}

// Read implements client.HTTP3Body: the DATA payloads, up to the
// trailers and the end of the stream.
func (rs *reqStream) Read(p []byte) (int, error) {
	if rs.eof {
		return 0, io.EOF
	}
	for rs.left == 0 {
		if err := rs.nextData(); err != nil {
			return 0, rs.readErr(err)
		}
		if rs.eof {
			return 0, io.EOF
		}
	}
	if uint64(len(p)) > rs.left {
		p = p[:rs.left]
	}
	var n int
	if buffered := len(rs.fr.buf) - rs.fr.r; buffered > 0 {
		n = copy(p, rs.fr.buf[rs.fr.r:])
		rs.fr.r += n
	} else {
		var err error
		n, err = rs.s.Read(p)
		if n == 0 {
			if err == io.EOF {
				err = ErrResponseIncomplete // inside a DATA frame
			}
			return 0, rs.readErr(err)
		}
	}
	rs.left -= uint64(n)
	rs.got += int64(n)
	if err := h3.CheckBodyLength(rs.declared, rs.got, false); err != nil {
		return n, rs.readErr(ErrMalformedResponse)
	}
	return n, nil
}

// nextData reads frame headers up to the next DATA payload, the trailers
// or the end of the stream.
func (rs *reqStream) nextData() error {
	for {
		fh, err := rs.fr.frameHeader()
		if err == io.EOF {
			if rs.declared >= 0 && rs.got != rs.declared {
				return ErrResponseIncomplete
			}
			rs.eof = true
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case fh.Type == h3.FrameData && len(rs.trailers) == 0:
			if fh.Length == 0 {
				if rs.empty++; rs.empty > clientMaxEmptyFrames {
					return &h3.Error{Code: h3.CodeExcessiveLoad, Reason: "too many empty DATA frames"}
				}
				continue
			}
			rs.left = fh.Length
			return nil
		case fh.Type == h3.FrameHeaders && len(rs.trailers) == 0:
			fields, err := rs.section(fh.Length)
			if err != nil {
				return err
			}
			if err := h3.CheckTrailers(fields); err != nil {
				return ErrMalformedResponse
			}
			rs.setTrailers(fields)
		case fh.Type == h3.FrameData, fh.Type == h3.FrameHeaders:
			return h3.ErrFrameUnexpected // after the trailers
		default:
			if err := rs.other(fh); err != nil {
				return err
			}
		}
	}
}

// setTrailers keeps the trailer fields, copied.
func (rs *reqStream) setTrailers(fields []h3.Field) {
	rs.traw = rs.traw[:0]
	for i := range fields {
		rs.traw = append(rs.traw, fields[i].Name...)
		rs.traw = append(rs.traw, fields[i].Value...)
	}
	off := 0
	for i := range fields {
		n, v := len(fields[i].Name), len(fields[i].Value)
		name := rs.traw[off : off+n : off+n]
		rs.trailers = append(rs.trailers, h1.Header{Name: name, Value: rs.traw[off+n : off+n+v : off+n+v], Key: h1.Lookup(name)})
		off += n + v
	}
	if len(fields) == 0 {
		// An empty trailer section still ends the DATA.
		rs.trailers = append(rs.trailers, h1.Header{})
	}
}

// readErr reports a body read error, closing the connection on a
// connection error of the server.
func (rs *reqStream) readErr(err error) error {
	if rs.ctx.Err() != nil {
		return context.Cause(rs.ctx)
	}
	var he *h3.Error
	if errors.As(err, &he) && he.Conn {
		rs.cc.fail(he)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &timeoutError{err}
	}
	return err
}

// Trailers implements client.HTTP3Body.
func (rs *reqStream) Trailers() []h1.Header {
	if len(rs.trailers) == 1 && rs.trailers[0].Name == nil {
		return nil
	}
	return rs.trailers
}

// Close implements client.HTTP3Body: the stream is reset unless the body
// was read to its end, and rs goes back to the transport.
func (rs *reqStream) Close() error {
	if rs.closed {
		return nil
	}
	rs.closed = true
	rs.release()
	return nil
}

// timeoutError is a deadline that ended an exchange: a net.Error whose
// Timeout is true.
type timeoutError struct{ err error }

func (e *timeoutError) Error() string   { return "http3: timeout: " + e.err.Error() }
func (e *timeoutError) Unwrap() error   { return e.err }
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }

// earlier returns the earlier non-zero time of a and b.
func earlier(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// sbytes is a string's bytes, to be read only.
func sbytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
