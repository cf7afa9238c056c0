package client

// The request side of HTTP/2: a request is one stream of an h2Conn. Its
// goroutine encodes the head into the connection's output, sends the body
// within the flow-control windows the server grants (reading a body stream
// only as fast as the windows open), waits for the head the reader hands
// over, and then reads the body from the stream's buffer, granting the
// server more window as it is consumed. Cancellation resets only the
// stream (RST_STREAM(CANCEL)); the connection goes on carrying the others.

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/h2"
)

// h2Stream is one request's stream. Stream objects are recycled by their
// connection, with the buffers they have grown.
type h2Stream struct {
	c     *h2Conn
	id    uint32
	wake  chan struct{} // signalled by the reader: head, data, window, error
	timer *time.Timer
	// The same for the body's sender (the owner, or the goroutine that
	// sends a body while the owner reads the response).
	swake  chan struct{}
	stimer *time.Timer

	// Owner's.
	ctx      context.Context
	deadline time.Time
	max      int64 // response body limit; 0: none
	n        int64 // body bytes delivered
	chunk    []byte
	bodyRead bool   // a request body stream was read from
	sendBuf  []byte // the sender goroutine's copy of a body given as bytes

	// Under c.mu.
	sendWin  int64
	wantWin  bool
	headDone bool
	eof      bool // END_STREAM received
	sentEnd  bool // END_STREAM sent
	err      error
	status   int
	cl       int64
	hraw     []byte
	hdrs     []h1.Header
	traw     []byte
	trailers []h1.Header
	buf      []byte // body bytes received and not yet read: buf[off:]
	off      int
	unacked  int   // bytes read, not yet granted back to the server
	got      int64 // body bytes received
	n1xx     int
	got100   bool // a 100 (Continue) response arrived
	isHead   bool
	connLost bool // the connection ended under the stream
	// A sender goroutine runs (sendAsync); orphan: the owner finished
	// meanwhile, and the sender recycles the stream when it ends. closer
	// is the request body to close when sending ends (RoundTrip's).
	sending, orphan bool
	closer          io.Closer
}

// signal wakes the stream's owner and its body's sender.
func (st *h2Stream) signal() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
	select {
	case st.swake <- struct{}{}:
	default:
	}
}

// failLocked records err as the stream's end (the first one counts).
func (st *h2Stream) failLocked(err error) {
	if st.err == nil {
		st.err = err
	}
	st.signal()
}

// endLocked records END_STREAM from the server.
func (st *h2Stream) endLocked() {
	st.eof = true
	if st.cl >= 0 && st.got != st.cl && st.err == nil && !st.isHead && st.status != 304 {
		// RFC 9113 §8.1.1: the data must match Content-Length.
		st.err = errH2Malformed
	}
	if st.sentEnd {
		st.c.forgetLocked(st)
	}
}

// wait waits, for the owner, for a signal, the context or the deadline.
func (st *h2Stream) wait(deadline time.Time) error {
	return st.waitOn(st.wake, st.timer, deadline)
}

// waitSend is wait for the body's sender.
func (st *h2Stream) waitSend(deadline time.Time) error {
	return st.waitOn(st.swake, st.stimer, deadline)
}

func (st *h2Stream) waitOn(wake chan struct{}, timer *time.Timer, deadline time.Time) error {
	var tc <-chan time.Time
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if d <= 0 {
			return errH2Deadline
		}
		timer.Reset(d)
		tc = timer.C
	}
	var err error
	select {
	case <-wake:
	case <-ctxDone(st.ctx):
		err = context.Cause(st.ctx)
	case <-tc:
		err = errH2Deadline
	}
	if tc != nil {
		timer.Stop()
	}
	return err
}

// errH2Deadline is a deadline of the exchange passing; the caller names it.
var errH2Deadline error = errorString("client: HTTP/2 deadline")

// newStream takes a stream object for a request on c (slot reserved).
func (c *h2Conn) newStream() *h2Stream {
	c.mu.Lock()
	var st *h2Stream
	if n := len(c.free); n > 0 {
		st = c.free[n-1]
		c.free[n-1] = nil
		c.free = c.free[:n-1]
	}
	c.mu.Unlock()
	if st == nil {
		st = &h2Stream{c: c, wake: make(chan struct{}, 1), timer: time.NewTimer(time.Hour),
			swake: make(chan struct{}, 1), stimer: time.NewTimer(time.Hour)}
		st.timer.Stop()
		st.stimer.Stop()
	}
	return st
}

// finish ends the stream for its owner: a stream still open is reset, the
// bytes it holds go back to the connection window, its slot is freed and
// the object recycled (by the body's sender when it still runs: it is told
// to stop, and a RoundTrip body it may be blocked reading is closed).
func (st *h2Stream) finish() {
	c := st.c
	c.mu.Lock()
	if st.id != 0 && c.streams[st.id] == st {
		if !st.eof || !st.sentEnd {
			code := h2.ErrCodeCancel
			if st.eof {
				code = h2.ErrCodeNo // §8.1: the response came before the whole request
			}
			c.resetLocked(st, code)
		} else {
			c.forgetLocked(st)
		}
	}
	if n := len(st.buf) - st.off; n > 0 {
		c.grantConnLocked(n)
	}
	c.releaseLocked()
	if st.sending {
		st.orphan = true
		st.failLocked(errH2StreamDone)
		closer := st.closer
		st.closer = nil
		c.mu.Unlock()
		if closer != nil {
			closer.Close()
		}
		return
	}
	st.recycleLocked()
	c.mu.Unlock()
}

// errH2StreamDone stops the body's sender after the owner finished.
var errH2StreamDone error = errorString("client: HTTP/2 stream ended")

// recycleLocked clears a finished stream and keeps it for reuse.
func (st *h2Stream) recycleLocked() {
	c := st.c
	select {
	case <-st.wake:
	default:
	}
	select {
	case <-st.swake:
	default:
	}
	st.ctx, st.err, st.id = nil, nil, 0
	st.headDone, st.eof, st.sentEnd, st.wantWin, st.bodyRead, st.connLost = false, false, false, false, false, false
	st.got100, st.orphan = false, false
	st.buf, st.off, st.unacked, st.got, st.n1xx, st.n = st.buf[:0], 0, 0, 0, 0, 0
	st.hdrs, st.trailers = st.hdrs[:0], st.trailers[:0]
	if cap(st.sendBuf) > h2MaxKeptBody {
		st.sendBuf = nil
	}
	if len(c.free) < 64 && !c.dead {
		c.free = append(c.free, st)
	}
}

// h2MaxKeptBody bounds the copy of a request body a recycled stream keeps.
const h2MaxKeptBody = 1 << 20

// start queues the request's HEADERS (and, without a body, END_STREAM).
func (st *h2Stream) start(req *Request, hasBody bool) error {
	c := st.c
	cl := c.p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waitRoom()
	if c.dead {
		return c.streamErrLocked()
	}
	if c.goAway {
		return errH2Unprocessed
	}
	st.id = c.nextID
	c.nextID += 2
	c.streams[st.id] = st
	st.sendWin = int64(c.peerWin)
	st.cl = -1
	st.isHead = isHeadMethod(req.Method())
	c.hbuf.b = c.hbuf.b[:0]
	c.field(sb(":method"), req.Method())
	if c.p.https {
		c.field(sb(":scheme"), sb("https"))
	} else {
		c.field(sb(":scheme"), sb("http"))
	}
	c.field(sb(":authority"), req.hostHeader())
	c.field(sb(":path"), req.uri)
	for rest := req.hdrs; len(rest) > 0; {
		eol := strings.IndexByte(unsafe.String(unsafe.SliceData(rest), len(rest)), '\n')
		line := rest[:eol-1]
		rest = rest[eol+1:]
		colon := slices.Index(line, ':')
		name, value := line[:colon], line[colon+2:]
		if h1.ConnectionSpecific(name) {
			continue
		}
		if h1.EqualFold(name, "te") && !h1.EqualFold(value, "trailers") {
			continue
		}
		c.fieldLower(name, value)
	}
	if cl.UserAgent != "" && !req.hasUA {
		c.field(sb("user-agent"), sb(cl.UserAgent))
	}
	if cl.Gzip && !req.hasAE && !isHeadMethod(req.Method()) {
		c.field(sb("accept-encoding"), sb("gzip"))
	}
	switch mode, n := h1.BodyFraming(req.outgoing()); mode {
	case h1.BodyLength:
		c.fieldInt("content-length", n)
	}
	if req.trailer != nil {
		v := appendTrailerField(nil, req.trailer) // "Trailer: a,b\r\n"
		c.field(sb("trailer"), v[len("Trailer: "):len(v)-2])
	}
	if req.expect100 && hasBody {
		c.field(sb("expect"), sb("100-continue"))
	}
	end := !hasBody
	st.sentEnd = end
	c.out = h2.AppendHeaders(c.out, st.id, c.hbuf.b, end, c.peerFrame)
	c.wakeWriter()
	return nil
}

// sb is a constant string's bytes, not to be modified.
func sb(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// streamErrLocked is the error of a stream started on a dead connection.
func (c *h2Conn) streamErrLocked() error {
	if c.goAway {
		return errH2Unprocessed
	}
	if c.err != nil {
		return c.err
	}
	return ErrServerClosed
}

// bodySrc is what a request body is sent from: bytes, or a stream of
// size bytes (-1: unknown) followed by trailers.
type bodySrc struct {
	body    []byte
	stream  io.Reader
	size    int64
	trailer http.Header
}

// sendRequestBody sends req's body. Bytes that the windows take at once
// are sent by the owner, before it waits for the response; a larger body
// (copied) and a body stream are sent by a goroutine while the owner reads
// the response (full duplex: a server may answer, and stream its answer,
// before the body ends). The goroutine takes RoundTrip's body
// (req.bodyCloser) and closes it when it ends.
func (st *h2Stream) sendRequestBody(req *Request) error {
	c := st.c
	src := bodySrc{body: req.body}
	if req.bodyStream == nil {
		c.mu.Lock()
		fits := int64(len(req.body)) <= min(st.sendWin, c.sendWin)
		c.mu.Unlock()
		if fits {
			return st.sendBody(src)
		}
		st.sendBuf = append(st.sendBuf[:0], req.body...)
		src.body = st.sendBuf
	} else {
		st.bodyRead = true
		src = bodySrc{stream: req.bodyStream, size: req.bodySize, trailer: req.trailer}
	}
	c.mu.Lock()
	st.sending, st.closer = true, req.bodyCloser
	c.mu.Unlock()
	req.bodyCloser, req.bodyTaken = nil, req.bodyCloser != nil
	go st.sendAsync(src)
	return nil
}

// sendAsync is the body's sender goroutine: it sends src, resets the
// stream if that fails, closes the request body (RoundTrip's) and, when
// the owner has finished meanwhile, recycles the stream.
func (st *h2Stream) sendAsync(src bodySrc) {
	err := st.sendBody(src)
	c := st.c
	c.mu.Lock()
	if err != nil && !st.orphan && st.err == nil && c.streams[st.id] == st {
		st.failLocked(err)
		c.resetLocked(st, h2.ErrCodeCancel)
	}
	closer := st.closer
	st.closer, st.sending = nil, false
	if st.orphan {
		st.recycleLocked()
	}
	c.mu.Unlock()
	if closer != nil {
		closer.Close()
	}
}

// sendBody sends the request body within the windows, then END_STREAM
// (with trailers when the request has them).
func (st *h2Stream) sendBody(src bodySrc) error {
	if src.stream == nil {
		return st.sendData(src.body, true, nil)
	}
	if st.chunk == nil {
		st.chunk = make([]byte, 16<<10)
	}
	var sent int64
	for {
		// What a read returns is sent at once (not gathered to fill the
		// chunk): a full-duplex peer may wait for it.
		n, err := src.stream.Read(st.chunk)
		sent += int64(n)
		last := err == io.EOF
		if err != nil && !last {
			return err
		}
		if n == 0 && !last {
			continue
		}
		if src.size >= 0 && (sent > src.size || last && sent != src.size) {
			return ErrBodyLength
		}
		if src.size >= 0 && sent == src.size {
			last = true
		}
		if err := st.sendData(st.chunk[:n], last, src.trailer); err != nil {
			return err
		}
		if last {
			return nil
		}
	}
}

// sendData sends p as DATA frames as the windows allow; last ends the
// stream (after the trailers, if any).
func (st *h2Stream) sendData(p []byte, last bool, trailer http.Header) error {
	c := st.c
	for len(p) > 0 || last {
		c.mu.Lock()
		if err := st.sendErrLocked(); err != nil || st.eof {
			c.mu.Unlock()
			return err // after END_STREAM from the server, finish resets
		}
		n := min(int64(len(p)), st.sendWin, c.sendWin, int64(c.peerFrame))
		if n <= 0 && len(p) > 0 {
			st.wantWin = true
			c.mu.Unlock()
			if err := st.waitSend(st.deadline); err != nil {
				return err
			}
			continue
		}
		st.wantWin = false
		c.waitRoom()
		if err := st.sendErrLocked(); err != nil {
			c.mu.Unlock()
			return err
		}
		st.sendWin -= n
		c.sendWin -= n
		end := last && int(n) == len(p) && len(trailer) == 0
		c.out = h2.AppendData(c.out, st.id, p[:n], end)
		p = p[n:]
		if last && len(p) == 0 {
			if !end {
				c.hbuf.b = c.hbuf.b[:0]
				for name, vs := range trailer {
					for _, v := range vs {
						c.field([]byte(strings.ToLower(name)), []byte(v))
					}
				}
				c.out = h2.AppendHeaders(c.out, st.id, c.hbuf.b, true, c.peerFrame)
			}
			st.sentEnd = true
			if st.eof {
				c.forgetLocked(st)
			}
			last = false
		}
		c.wakeWriter()
		c.mu.Unlock()
	}
	return nil
}

// sendErrLocked is the error that stops sending: the stream's or the
// connection's.
func (st *h2Stream) sendErrLocked() error {
	if st.err != nil {
		return st.err
	}
	if st.c.dead {
		return st.c.streamErrLocked()
	}
	return nil
}

// await100 waits up to timeout for the server's answer to "Expect:
// 100-continue": it reports whether to send the body, true after a 100
// response or when the wait times out, false when the final response came
// first (the body is then not sent, and finish resets the stream).
func (st *h2Stream) await100(timeout time.Duration) (bool, error) {
	c := st.c
	end := time.Now().Add(timeout)
	for {
		c.mu.Lock()
		got100, head, err := st.got100, st.headDone, st.err
		c.mu.Unlock()
		switch {
		case err != nil:
			return false, err
		case head:
			return false, nil
		case got100:
			return true, nil
		}
		dl := end
		if !st.deadline.IsZero() && st.deadline.Before(end) {
			dl = st.deadline
		}
		if err := st.wait(dl); err != nil {
			if err == errH2Deadline && dl.Equal(end) {
				return true, nil
			}
			return false, err
		}
	}
}

// awaitHead waits for the response head (the stream's error, or the
// deadline, ends the wait).
func (st *h2Stream) awaitHead(hdr time.Time) error {
	c := st.c
	for {
		c.mu.Lock()
		done, err := st.headDone, st.err
		c.mu.Unlock()
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		if err := st.wait(readDeadline(st.deadline, hdr)); err != nil {
			if err == errH2Deadline && !hdr.IsZero() && !time.Now().Before(hdr) && (st.deadline.IsZero() || hdr.Before(st.deadline)) {
				return ErrResponseHeaderTimeout
			}
			return err
		}
	}
}

// onBlockLocked takes the header block just decoded (c.fields): the
// response head, an interim response (its status is returned), or the
// trailers.
func (st *h2Stream) onBlockLocked(c *h2Conn) (interim int, err error) {
	if c.tooBig {
		return 0, ErrHTTP2HeaderListTooLarge
	}
	if c.badField {
		return 0, errH2Malformed
	}
	nf := len(c.fields)
	if !st.headDone {
		status := 0
		for i := range nf {
			name, value := c.fieldAt(i)
			if name[0] != ':' {
				continue
			}
			if i > 0 || string(name) != ":status" || len(value) != 3 {
				return 0, errH2Malformed
			}
			for _, d := range value {
				if d < '0' || d > '9' {
					return 0, errH2Malformed
				}
				status = status*10 + int(d-'0')
			}
		}
		if status < 100 || status == 101 {
			return 0, errH2Malformed
		}
		if status < 200 {
			if c.endStream {
				return 0, errH2Malformed
			}
			if st.n1xx++; st.n1xx > Max1xxResponses {
				return 0, ErrTooMany1xx
			}
			return status, nil
		}
		raw, hs, err := copyFields(st.hraw[:0], st.hdrs[:0], c, 1)
		st.hraw, st.hdrs = raw, hs
		if err != nil {
			return 0, err
		}
		st.status = status
		st.cl = -1
		for i := range hs {
			if hs[i].Key == h1.HeaderContentLength {
				v, ok := parseLength(hs[i].Value)
				if !ok || st.cl >= 0 && st.cl != v {
					return 0, errH2Malformed
				}
				st.cl = v
			}
		}
		st.headDone = true
		if c.endStream {
			st.endLocked()
		}
		st.signal()
		return 0, nil
	}
	if !c.endStream {
		return 0, errH2Malformed
	}
	raw, hs, err := copyFields(st.traw[:0], st.trailers[:0], c, 0)
	st.traw, st.trailers = raw, hs
	if err != nil {
		return 0, err
	}
	st.endLocked()
	st.signal()
	return 0, nil
}

// copyFields copies the regular fields of the block c decoded, from the
// from'th, into raw and hs (slices into raw): a pseudo-header, an
// upper-case or connection-specific name is malformed (RFC 9113 §8.2).
func copyFields(raw []byte, hs []h1.Header, c *h2Conn, from int) ([]byte, []h1.Header, error) {
	start := len(raw)
	for i := from; i < len(c.fields); i++ {
		name, value := c.fieldAt(i)
		if name[0] == ':' || !h1.ValidHeaderName(name) || h1.ConnectionSpecific(name) {
			return raw, hs, errH2Malformed
		}
		for _, ch := range name {
			if 'A' <= ch && ch <= 'Z' {
				return raw, hs, errH2Malformed
			}
		}
		raw = append(raw, name...)
		raw = append(raw, value...)
	}
	off := start
	for i := from; i < len(c.fields); i++ {
		n, v := c.fields[i].nameLen, c.fields[i].valueLen
		// Plain slicing: rebase finds the offset from the capacity.
		name := raw[off : off+n]
		hs = append(hs, h1.Header{Name: name, Value: raw[off+n : off+n+v], Key: h1.Lookup(name)})
		off += n + v
	}
	return raw, hs, nil
}

// parseLength parses a Content-Length value.
func parseLength(b []byte) (int64, bool) {
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

// setHead copies the head the reader stored into resp.
func (st *h2Stream) setHead(resp *Response) {
	c := st.c
	c.mu.Lock()
	defer c.mu.Unlock()
	h := &resp.head
	h.Reset()
	h.Major, h.Minor, h.Status = 2, 0, st.status
	raw := append(resp.raw[:0], st.hraw...)
	raw = append(raw, h1.StatusText(st.status)...)
	resp.raw = raw
	h.Reason = raw[len(st.hraw):]
	for _, f := range st.hdrs {
		h.Headers = append(h.Headers, h1.Header{Name: rebase(raw, st.hraw, f.Name), Value: rebase(raw, st.hraw, f.Value), Key: f.Key})
	}
	h.ContentLength = st.cl
	// Transfer-Encoding is connection-specific (refused above); dropping
	// it indexes the known fields.
	h.DelKnown(h1.HeaderTransferEncoding)
}

// read reads body bytes into p for the owner.
func (st *h2Stream) read(p []byte) (int, error) {
	c := st.c
	c.mu.Lock()
	for {
		if st.off < len(st.buf) {
			n := copy(p, st.buf[st.off:])
			st.off += n
			if st.off == len(st.buf) {
				st.buf, st.off = st.buf[:0], 0
			}
			c.grantConnLocked(n)
			st.unacked += n
			if st.unacked >= h2StreamWindow/4 && !st.eof && c.streams[st.id] == st && !c.dead {
				c.out = h2.AppendWindowUpdate(c.out, st.id, uint32(st.unacked))
				st.unacked = 0
				c.wakeWriter()
			}
			c.mu.Unlock()
			st.n += int64(n)
			if st.max > 0 && st.n > st.max {
				return n, ErrBodyTooLarge
			}
			return n, nil
		}
		if st.err != nil {
			err := st.err
			c.mu.Unlock()
			return 0, err
		}
		if st.eof {
			c.mu.Unlock()
			return 0, io.EOF
		}
		c.mu.Unlock()
		if err := st.wait(st.deadline); err != nil {
			if err == errH2Deadline {
				err = deadlineErr(st.ctx, st.deadline)
			}
			return 0, err
		}
		c.mu.Lock()
	}
}

// abort fails a read in progress (a RoundTrip body closed meanwhile).
func (st *h2Stream) abort() {
	st.c.mu.Lock()
	st.failLocked(errBodyClosed)
	st.c.mu.Unlock()
}

// readH2 is bodyReader.Read for an HTTP/2 stream.
func (b *bodyReader) readH2(p []byte) (int, error) {
	if b.done || len(p) == 0 {
		return b.ended()
	}
	n, err := b.h2.read(p)
	if err == io.EOF {
		if len(b.h2.trailers) > 0 && b.sink != nil {
			b.sink.setTrailers(b.h2.trailers)
		}
		b.finishH2(nil)
		return n, io.EOF
	}
	if err != nil {
		b.finishH2(err)
	}
	return n, err
}

// finishH2 ends an HTTP/2 body once.
func (b *bodyReader) finishH2(err error) {
	if b.done {
		return
	}
	b.done, b.err = true, err
	b.h2.finish()
}

// h2Exchange sends req on a stream of c (a slot reserved) and reads the
// response into resp. retry reports that the server did not process the
// request (GOAWAY, REFUSED_STREAM), or that the connection failed before
// any of the response arrived, so that it may be sent again.
func (c *h2Conn) exchange(ctx context.Context, req *Request, resp *Response, deadline time.Time, stream bool) (retry bool, err error) {
	cl := c.p.c
	st := c.newStream()
	st.ctx, st.deadline = ctx, deadline
	st.max = cl.bodyLimit(stream)
	var hdr time.Time
	if cl.ResponseHeaderTimeout > 0 {
		hdr = time.Now().Add(cl.ResponseHeaderTimeout)
	}
	fail := func(err error) (bool, error) {
		c.mu.Lock()
		got, lost, bodyRead := st.headDone, st.connLost, st.bodyRead
		c.mu.Unlock()
		st.finish()
		if err == errH2Deadline {
			err = deadlineErr(ctx, deadline)
		}
		if err == errH2Unprocessed {
			return !bodyRead, err
		}
		// Only a connection lost before any of the response arrived may
		// have left an idempotent request unprocessed.
		return lost && !got && !bodyRead && ctx.Err() == nil && req.idempotent(), err
	}
	hasBody := req.bodyStream != nil || len(req.body) > 0
	if err := st.start(req, hasBody); err != nil {
		return fail(err)
	}
	if hasBody {
		send := true
		if req.expect100 {
			if send, err = st.await100(cl.expectTimeout()); err != nil {
				return fail(err)
			}
		}
		if send {
			if err := st.sendRequestBody(req); err != nil {
				return fail(err)
			}
		}
	}
	if err := st.awaitHead(hdr); err != nil {
		return fail(err)
	}
	st.setHead(resp)
	resp.br = bodyReader{h2: st, mode: h1.BodyUntilClose, max: st.max, sink: resp}
	if stream {
		resp.stream = true
		return false, nil
	}
	resp.body, err = resp.br.readAll(resp.body[:0])
	if err != nil {
		return false, err
	}
	if cl.Gzip && !req.hasAE && !isHeadMethod(req.Method()) {
		if err := resp.gunzip(); err != nil {
			return false, err
		}
	}
	return false, nil
}
