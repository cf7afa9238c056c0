package riptide

// HTTP/2 streams served by a Ctx: a Ctx serves a stream of the engine
// (internal/h2) with no HTTP/1.1 text in between. The request head is
// filled straight from the decoded fields (pseudo-headers to method,
// target and Host; fields in order) into the Ctx's h1.Request view; the
// stream is the Ctx's exchange (h2Exchange): the body is read from it with
// flow-control backpressure, its trailers reach Ctx.Trailers, and the
// response goes to it as a head of fields and DATA.
//
// The Ctx runs on a conn of the stream pool (newStreamConn: no HTTP/1.1
// write buffer, a body buffer only while one is buffered) for the
// stream's life, for its buffers and body reader; the conn has no
// net.Conn.

import (
	"crypto/tls"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/h2"
)

// h2Door serves the streams of a Server (stream.go).
type h2Door struct {
	srv *Server
}

// ServeStream runs the Handler for the stream.
func (d *h2Door) ServeStream(st *h2.Stream) {
	d.srv.serveStream((*h2Exchange)(st), &d.srv.stats.h2Streams)
}

// h2Exchange is an HTTP/2 stream as the exchange of the Ctx serving it
// (exchange.go). It is the stream itself under another name, so that the
// exchange value needs no allocation and stays this stream's after the
// conn serving it is reused.
type h2Exchange h2.Stream

var _ exchange = (*h2Exchange)(nil)

func (e *h2Exchange) st() *h2.Stream { return (*h2.Stream)(e) }

func (e *h2Exchange) isHEAD() bool             { return e.st().Method() == "HEAD" }
func (e *h2Exchange) hasBody(*h1.Request) bool { return e.st().HasBody() }

// failed: the engine resets a stream its handler left without an end
// (internal/h2 handlerDone).
func (e *h2Exchange) failed() {}

// fillRequest copies the request head into c.rbuf and points the Ctx's
// h1.Request at it; the engine refuses a header list over its limit, and
// more than MaxHeaders fields before copying them (431, the rule of
// serveStream), and a target h1 refuses (400).
func (e *h2Exchange) fillRequest(c *conn) int {
	if n := len(e.st().Fields()); n <= c.cfg.limits.MaxHeaders {
		c.streamRoom(n)
	}
	buf, head, code := e.st().FillRequest(&c.ctx.req, c.rbuf, c.cfg.limits.MaxHeaders)
	c.rbuf = buf
	if code == 0 {
		c.head = head
		c.r, c.w, c.pin = 0, 0, len(head.Bytes())
	}
	return code
}

// writeHead sends the HEADERS, with the first body bytes in the same
// batch; a complete body without trailers ends the stream with it.
func (e *h2Exchange) writeHead(oh *outHead, body []byte, end bool) error {
	h := e.head(oh)
	return e.st().WriteHead(&h, body, end && !oh.trailers)
}

// head encodes oh as the stream's head: its fields as views of the Ctx's
// buffers, the Content-Length apart (an unknown length ends with the
// stream).
func (e *h2Exchange) head(oh *outHead) h2.Head {
	fs := e.st().FieldBuf()
	*fs = appendHeadFields((*fs)[:0], oh, h2Field)
	h := h2.Head{Status: oh.status, ContentLength: -1, Fields: *fs}
	if oh.mode == h1.BodyLength {
		h.ContentLength = oh.length
	}
	return h
}

func h2Field(name, value string, view bool) h2.Field {
	return h2.Field{Name: name, Value: value, View: view}
}

// writeBody sends body bytes after the head as DATA.
func (e *h2Exchange) writeBody(p []byte) error { return e.st().WriteData(p, false) }

// sendFile: a file goes as DATA frames, copied (writeBody).
func (e *h2Exchange) sendFile(*os.File, int64, int64) (int64, bool, error) { return 0, false, nil }

// flush has nothing to do: body bytes are queued as they are written, and
// the connection's writer sends them.
func (e *h2Exchange) flush() error { return e.st().Err() }

// endStream ends the stream: trailers, or an empty DATA frame with
// END_STREAM; or resets it.
func (e *h2Exchange) endStream(trl *headerFields, reset bool) {
	switch {
	case reset:
		e.st().Reset()
	case trl.len() == 0:
		_ = e.st().EndStream()
	default:
		fs := e.st().FieldBuf()
		*fs = appendFields((*fs)[:0], trl, true, h2Field)
		_ = e.st().WriteTrailers(*fs)
	}
}

// writeInformational sends a 1xx head.
func (e *h2Exchange) writeInformational(oh *outHead) error {
	h := e.head(oh)
	return e.st().WriteHead(&h, nil, false)
}

// readBody reads the stream's body.
func (e *h2Exchange) readBody(p []byte) (int, error) {
	n, err := e.st().ReadBody(p)
	if err == h2.ErrBodyClosed {
		err = ErrBodyReadAfterClose
	}
	return n, err
}

// appendTrailers copies the stream's trailers (final once END_STREAM is
// in) into buf, as h1.Header fields.
func (e *h2Exchange) appendTrailers(dst []h1.Header, buf []byte) ([]h1.Header, []byte) {
	ts := e.st().Trailers()
	size := 0
	for _, f := range ts {
		size += len(f.Name) + len(f.Value)
	}
	if cap(buf) < size {
		buf = make([]byte, 0, size)
	}
	b := buf[:0]
	for _, f := range ts {
		var name, value []byte
		name, b = h2.AppendView(b, f.Name)
		value, b = h2.AppendView(b, f.Value)
		dst = append(dst, h1.Header{Name: name, Value: value, Key: h1.Lookup(name)})
	}
	return dst, buf
}

func (e *h2Exchange) send100Continue()             { e.st().Send100Continue() }
func (e *h2Exchange) closeBody(ended *atomic.Bool) { e.st().CloseBody(ended) }

// stopBody: a ReadBody waiting for DATA returns (with bytes already
// received, io.EOF, or ErrBodyReadAfterClose), and later ones fail once
// those bytes are taken; the engine discards the rest of the body when
// the stream's handler is done.
func (e *h2Exchange) stopBody() { e.st().StopBody() }

func (e *h2Exchange) setReadDeadline(t time.Time) error  { return e.st().SetReadDeadline(t) }
func (e *h2Exchange) setWriteDeadline(t time.Time) error { return e.st().SetWriteDeadline(t) }

// The disconnect watch: the stream's Read blocks until it is reset or its
// connection ends (io.EOF), or watchStop's deadline passes. It reads no
// body bytes, so it may run while the body is read.
func (e *h2Exchange) watchArm() bool          { return true }
func (e *h2Exchange) watchRead() (int, error) { return e.st().Read(nil) }
func (e *h2Exchange) watchStop()              { e.st().SetReadDeadline(aLongTimeAgo) }

func (e *h2Exchange) remoteAddr() net.Addr           { return e.st().RemoteAddr() }
func (e *h2Exchange) remoteAddrString() string       { return e.st().RemoteAddrString() }
func (e *h2Exchange) localAddr() net.Addr            { return e.st().LocalAddr() }
func (e *h2Exchange) tlsState() *tls.ConnectionState { return e.st().TLS() }
func (e *h2Exchange) transport() net.Conn            { return e.st().NetConn() }
func (e *h2Exchange) protoMajor() int                { return 2 }
func (e *h2Exchange) abilities() ability {
	if e.st().OverTLS() {
		return canFullDuplex | multiplexed | overTLS
	}
	return canFullDuplex | multiplexed
}
