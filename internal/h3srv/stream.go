package h3srv

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/h3"
	"github.com/riptide-http/riptide/quicx"
)

// Buffer sizes of the pooled buffers a Stream borrows; larger buffers a
// stream grew are not kept.
const (
	readBufSize  = 512
	fieldBufSize = 4 << 10
	writeBufSize = 4 << 10
	keepBufSize  = 16 << 10
	// headRoom is room before a HEADERS payload for its frame header
	// (type 1 byte, length up to 8), written once the length is known.
	headRoom = 9
)

// Stream is one request stream: the request's head and body, and the
// response's writes. A Handler uses it from one goroutine; only Done may
// be watched from others. Nothing of it (the request's bytes included) may
// be kept after ServeStream returns.
//
// A Stream holds its buffers only while they hold something: the read
// buffer while bytes read from the stream are unconsumed, the field
// buffers while the request's head is read and used (until ReleaseHead,
// or the trailers' until the stream ends), the write buffer while a
// response head or frame is encoded or pending. A stream whose handler
// waits, with nothing buffered either way, holds none of them.
type Stream struct {
	c  *Conn
	qs quicx.Stream

	rd reader // its buffer (rd.b) a *readBuf's, or nil
	rs h3.RequestStream
	// clen is the request's content-length, -1 when absent: kept after
	// ReleaseHead, for the body's checks (the head itself, Head, lies in
	// the field buffers).
	clen int64
	// req is the head as an h1.Request, pooled: from readHead (which
	// validates with it) to ReleaseHead or the stream's end.
	req *h1.Request

	hb       *headBufs // the field buffers, while lent (takeHead)
	reserved int64     // header budget held
	trailers []h3.Field

	dataLeft uint64 // payload bytes left in the current DATA frame
	got      int64  // body bytes received
	bodyErr  error  // sticky: io.EOF at the body's end

	wb        *writeBufs // the write buffer, while lent (takeWrite)
	pending   []byte     // a response HEADERS (and DATA) not yet written: a slice of wb.b
	wroteHead bool       // final response HEADERS written or pending
	done      bool       // the response ended (FIN or reset)
	// outLeft: payload bytes the last DATA frame written declared and
	// were not written yet (WriteDataSized).
	outLeft uint64
	headDL  bool // a read deadline was set for the head
	// userWDL: the handler set the write deadline, which WriteTimeout
	// does not replace.
	userWDL bool

	// bodyClosed: CloseBody was called (from any goroutine).
	bodyClosed atomic.Bool
}

var streamPool = sync.Pool{New: func() any { return new(Stream) }}

// readBuf is a request stream's read buffer, lent from readBufs while it
// holds unconsumed bytes.
type readBuf [readBufSize]byte

var readBufs = sync.Pool{New: func() any { return new(readBuf) }}

// headBufs are the buffers a field section is read and decoded into,
// and the request head validated from it (Head), lent from headPool
// (takeHead): a stream whose handler runs after ReleaseHead holds none of
// them.
type headBufs struct {
	hbuf   []byte     // a HEADERS payload being read
	fields []h3.Field // decoded request fields, into dbuf
	dbuf   []byte
	head   h3.RequestHead
}

var headPool = sync.Pool{New: func() any {
	return &headBufs{fields: make([]h3.Field, 0, 32), dbuf: make([]byte, 0, fieldBufSize)}
}}

// writeBufs is the buffer a response head (and a small DATA frame after
// it) is encoded into, and the field lines last encoded into it (kept
// with the buffer, for whichever stream borrows it next), lent from
// writePool (takeWrite).
type writeBufs struct {
	b     []byte
	lines lineCache
}

var writePool = sync.Pool{New: func() any { return &writeBufs{b: make([]byte, 0, writeBufSize)} }}

// reqPool holds the h1.Requests readHead builds, each with room for
// reqHeaders fields to start with (it grows for a larger head and keeps
// what it grew): a stream's head is held only until the Ctx copies it.
var reqPool = sync.Pool{New: func() any { return &h1.Request{Headers: make([]h1.Header, 0, reqHeaders)} }}

const reqHeaders = 16

func getStream(c *Conn, qs quicx.Stream) *Stream {
	st := streamPool.Get().(*Stream)
	st.c, st.qs = c, qs
	st.rd = reader{r: qs, in: c.cfg.BytesIn}
	return st
}

func putStream(st *Stream) {
	st.dropRead(true)
	st.ReleaseHead()
	st.dropHead()
	st.pending = nil
	st.dropWrite()
	st.c, st.qs, st.rd = nil, nil, reader{}
	st.rs, st.clen = h3.RequestStream{}, 0
	st.trailers = nil
	st.dataLeft, st.got, st.bodyErr = 0, 0, nil
	st.wroteHead, st.done, st.headDL, st.userWDL = false, false, false, false
	st.outLeft = 0
	if st.bodyClosed.Load() {
		st.bodyClosed.Store(false) // a locked exchange: only when set
	}
	streamPool.Put(st)
}

// takeRead gives the reader a buffer, unless it has one.
func (st *Stream) takeRead() {
	if st.rd.b == nil {
		st.rd.b = readBufs.Get().(*readBuf)[:]
		st.rd.i, st.rd.n = 0, 0
	}
}

// dropRead gives the reader's buffer back once it holds nothing unread
// (or always, at the stream's end).
func (st *Stream) dropRead(always bool) {
	if st.rd.b != nil && (always || st.rd.i == st.rd.n) {
		readBufs.Put((*readBuf)(st.rd.b))
		st.rd.b = nil
		st.rd.i, st.rd.n = 0, 0
	}
}

// takeHead lends the stream the field buffers, unless it has them.
func (st *Stream) takeHead() *headBufs {
	if st.hb == nil {
		st.hb = headPool.Get().(*headBufs)
	}
	return st.hb
}

// dropHead gives the field buffers back: the fields decoded (the head's,
// then the trailers' after them in the same array unless it was full; a
// decoding that failed cleared what it wrote, readFields) are cleared.
func (st *Stream) dropHead() {
	hb := st.hb
	if hb == nil {
		return
	}
	st.hb = nil
	hb.head = h3.RequestHead{}
	clear(hb.fields[:min(cap(hb.fields), len(hb.fields)+len(st.trailers))])
	hb.fields = hb.fields[:0]
	if cap(hb.hbuf) > keepBufSize {
		hb.hbuf = nil
	}
	if cap(hb.dbuf) > keepBufSize {
		hb.dbuf = make([]byte, 0, fieldBufSize)
	}
	headPool.Put(hb)
}

// ReleaseHead tells the stream that its request head is no longer used
// (the Handler copied what it needs): the head's field buffers and
// h1.Request go back to their pools, and Head (but for its
// ContentLength), Request and FieldBytes must not be used after. Trailers, read later, are decoded into buffers
// lent then.
func (st *Stream) ReleaseHead() {
	if st.req != nil {
		st.req.Reset()
		reqPool.Put(st.req)
		st.req = nil
	}
	// The body is still checked against the content-length (st.clen).
	if len(st.trailers) == 0 {
		st.dropHead()
	} else if st.hb != nil {
		st.hb.head = h3.RequestHead{}
	}
}

// takeWrite lends the stream the write buffer, unless it has it.
func (st *Stream) takeWrite() *writeBufs {
	if st.wb == nil {
		st.wb = writePool.Get().(*writeBufs)
	}
	return st.wb
}

// dropWrite gives the write buffer back once nothing in it is pending.
func (st *Stream) dropWrite() {
	if st.wb == nil || len(st.pending) > 0 {
		return
	}
	if cap(st.wb.b) > keepBufSize {
		st.wb.b = make([]byte, 0, writeBufSize)
	}
	writePool.Put(st.wb)
	st.wb = nil
}

// ID returns the QUIC stream ID.
func (st *Stream) ID() int64 { return st.qs.StreamID() }

// Request returns the request head. Its slices point into the stream's
// buffers. It is nil after ReleaseHead.
func (st *Stream) Request() *h1.Request { return st.req }

// Head returns the request's validated field section, with the fields an
// h1.Request does not hold (:scheme, :authority). After ReleaseHead only
// its ContentLength is kept (the rest is empty; the field buffers holding
// it went back to their pool).
func (st *Stream) Head() *h3.RequestHead {
	if hb := st.hb; hb != nil && st.req != nil {
		return &hb.head
	}
	return &h3.RequestHead{ContentLength: st.clen} // after ReleaseHead: not the engine's path
}

// FieldBytes returns the buffer the request's field section was decoded
// into: every byte slice of Request and Head (method, target, authority,
// field names and values) points into it. Read before the body: trailers
// may be decoded into another buffer.
func (st *Stream) FieldBytes() []byte { return st.hb.dbuf }

// Conn returns the engine serving the stream's connection.
func (st *Stream) Conn() *Conn { return st.c }

// Context is cancelled when the stream is reset or stopped by the peer,
// or its connection closes: Done's context.
func (st *Stream) Context() context.Context { return st.qs.Context() }

// Done is closed when the response can no longer be sent: the client
// reset the stream or stopped reading it, or the connection closed.
func (st *Stream) Done() <-chan struct{} { return st.qs.Context().Done() }

// SetReadDeadline sets the deadline for reading the body.
func (st *Stream) SetReadDeadline(t time.Time) error { return st.qs.SetReadDeadline(t) }

// SetWriteDeadline sets the deadline for writing the response, in place
// of Config.WriteTimeout for the rest of the stream (a zero t: none).
func (st *Stream) SetWriteDeadline(t time.Time) error {
	st.userWDL = true
	return st.qs.SetWriteDeadline(t)
}

// readHead reads frames up to the request's HEADERS, decodes and validates
// them into st.req. It reports false when the stream was answered or reset
// instead (or the connection closed).
func (st *Stream) readHead() bool {
	ok := st.readHeadBuffered()
	st.dropRead(false)
	return ok
}

func (st *Stream) readHeadBuffered() bool {
	c := st.c
	st.takeRead()
	if c.cfg.ReadHeaderTimeout > 0 {
		st.qs.SetReadDeadline(time.Now().Add(c.cfg.ReadHeaderTimeout))
		st.headDL = true
	}
	for {
		h, err := st.rd.frameHeader()
		if err != nil {
			st.readFailed(err)
			return false
		}
		part, err := st.rs.Check(h, &c.lim)
		if err != nil {
			st.fail(err)
			return false
		}
		if part == h3.PartSkip {
			if err := st.rd.skip(h.Length); err != nil {
				st.readFailed(err)
				return false
			}
			continue
		}
		// part is PartHeaders: Check refused DATA and trailers before it.
		hb := st.takeHead()
		fs, err := st.readFields(h.Length, hb.fields[:0], hb.dbuf[:0])
		if err != nil {
			st.failAny(err)
			return false
		}
		hb.fields = fs
		if err := hb.head.Parse(fs, c.cfg.EnableConnectProtocol); err != nil {
			st.fail(err)
			return false
		}
		st.clen = hb.head.ContentLength
		st.req = reqPool.Get().(*h1.Request)
		if err := hb.head.Build(st.req); err != nil {
			if err == h1.ErrBadTarget {
				err = h3.ErrBadPath
			}
			st.fail(err)
			return false
		}
		break
	}
	if st.headDL && !st.rd.eof {
		// Clear the head's deadline for the body, unless the request
		// ended with its head (a GET's FIN comes with its HEADERS):
		// then no read can block.
		st.qs.SetReadDeadline(time.Time{})
	}
	return true
}

// readFields reads a HEADERS payload of n bytes (Check bounded n by
// MaxHeaderBytes) within the header budget and decodes it, appending to
// fields and buf, in the field buffers (takeHead). On success st.hb.dbuf
// holds the decoded bytes.
func (st *Stream) readFields(n uint64, fields []h3.Field, buf []byte) ([]h3.Field, error) {
	c := st.c
	if !c.reserve(int64(n)) {
		return fields, errBudget
	}
	st.reserved = int64(n)
	defer st.unreserve()
	hb := st.hb
	if uint64(cap(hb.hbuf)) < n {
		hb.hbuf = make([]byte, n)
	}
	p := hb.hbuf[:n]
	if err := st.rd.readFull(p); err != nil {
		return fields, err
	}
	max := uint64(c.cfg.MaxHeaderBytes)
	fs, b, err := h3.DecodeFieldSection(fields, buf, p, max)
	if err == h3.ErrFieldSectionTooLarge && uint64(cap(buf)-len(buf)) < max {
		// Decoded bytes beyond the pooled buffer: decode again into one
		// with room for the limit. Fields already in hb.dbuf (the head's,
		// when these are trailers) stay in the old one.
		buf = make([]byte, 0, max)
		fs, b, err = h3.DecodeFieldSection(fields, buf, p, max)
	}
	if err != nil {
		// The decoder may have filled part of fields' spare room: clear
		// it, so that the pooled Stream keeps no view of a buffer.
		clear(fields[len(fields):cap(fields)])
		return fields, err
	}
	hb.dbuf = b
	return fs, nil
}

func (st *Stream) unreserve() {
	st.c.release(st.reserved)
	st.reserved = 0
}

// errBudget refuses a stream whose HEADERS do not fit the header budget.
var errBudget = &h3.Error{Code: h3.CodeRequestRejected, Reason: "header budget spent"}

// errIncomplete resets a stream that ended or timed out before a complete
// request (RFC 9114 §4.1.2).
var errIncomplete = &h3.Error{Code: h3.CodeRequestIncomplete, Reason: "request incomplete"}

// readFailed handles a read error on the request stream: its end inside
// the request, or a deadline, is H3_REQUEST_INCOMPLETE; a reset by the
// peer or the connection's close ends the stream quietly.
func (st *Stream) readFailed(err error) {
	if st.bodyClosed.Load() {
		return // CloseBody stopped the read: the response goes on
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF || errors.Is(err, os.ErrDeadlineExceeded) {
		st.fail(errIncomplete)
		return
	}
	st.Reset(h3.CodeRequestCancelled)
}

// failAny answers a protocol error or a read error.
func (st *Stream) failAny(err error) {
	var e *h3.Error
	if errors.As(err, &e) {
		st.fail(err)
	} else {
		st.readFailed(err)
	}
}

// fail answers a protocol error on the stream: a connection error closes
// the connection; a stream error with a status is answered with it when
// no response was started, and reading stops with its code; otherwise the
// stream is reset with it.
func (st *Stream) fail(err error) {
	var e *h3.Error
	if !errors.As(err, &e) {
		st.Reset(h3.CodeInternalError)
		return
	}
	if e.Conn {
		st.c.closeWith(err)
		st.done = true
		return
	}
	if e.Status != 0 && !st.wroteHead && !st.done {
		st.respond(e.Status)
		st.qs.CancelRead(uint64(e.Code))
		st.bodyErr = err
		return
	}
	st.Reset(e.Code)
}

// emptyBody is the head of a response without a body.
var emptyBody = []h1.Header{{Name: []byte("content-length"), Value: []byte("0"), Key: h1.Lookup([]byte("content-length"))}}

// respond sends a response with no body and ends the stream.
func (st *Stream) respond(status int) {
	if st.WriteHeaders(status, emptyBody) == nil {
		st.Close()
	}
}

// Read reads the request body: the payload of DATA frames. It returns
// io.EOF at the body's end, after which Trailers holds the trailer fields.
// A body whose length differs from its content-length resets the stream
// with H3_MESSAGE_ERROR and returns h3.ErrBodyLength.
func (st *Stream) Read(p []byte) (int, error) {
	n, err := st.readBody(p)
	st.dropRead(false)
	return n, err
}

func (st *Stream) readBody(p []byte) (int, error) {
	if st.bodyClosed.Load() {
		return 0, ErrBodyClosed
	}
	for st.dataLeft == 0 {
		if st.bodyErr != nil {
			return 0, st.bodyErr
		}
		if err := st.nextFrame(); err != nil {
			return 0, err
		}
	}
	if len(p) == 0 {
		return 0, nil
	}
	n, err := st.rd.read(p[:min(uint64(len(p)), st.dataLeft)])
	st.dataLeft -= uint64(n)
	st.got += int64(n)
	if n == 0 && err != nil {
		st.bodyFailed(eofIn(err, true))
		return 0, st.bodyErr
	}
	return n, nil
}

// nextFrame reads the next frame header of the body: a DATA frame sets
// dataLeft, trailers are read whole, unknown frames skipped, the stream's
// end checked against the content-length.
func (st *Stream) nextFrame() error {
	st.takeRead()
	h, err := st.rd.frameHeader()
	if err == io.EOF {
		if err := h3.CheckBodyLength(st.clen, st.got, true); err != nil {
			st.fail(err)
			return err
		}
		st.bodyErr = io.EOF
		return io.EOF
	}
	if err != nil {
		st.bodyFailed(err)
		return st.bodyErr
	}
	part, err := st.rs.Check(h, &st.c.lim)
	if err == nil {
		switch part {
		case h3.PartSkip:
			if err := st.rd.skip(h.Length); err != nil {
				st.bodyFailed(eofIn(err, true))
				return st.bodyErr
			}
		case h3.PartData:
			// Refuse a body over its content-length before reading it.
			err = h3.CheckBodyLength(st.clen, st.got+int64(min(h.Length, 1<<62)), false)
			st.dataLeft = h.Length
		case h3.PartTrailers:
			var fs []h3.Field
			hb := st.takeHead()
			fs, err = st.readFields(h.Length, hb.fields[len(hb.fields):], hb.dbuf)
			if err == nil {
				err = h3.CheckTrailers(fs)
				st.trailers = fs
			}
		}
	}
	if err != nil {
		st.failAny(err)
		if st.bodyErr == nil || st.bodyErr == errReset {
			st.bodyErr = err
		}
		return st.bodyErr
	}
	return nil
}

// bodyFailed records a read error of the body and answers it.
func (st *Stream) bodyFailed(err error) {
	if st.bodyClosed.Load() {
		st.bodyErr = ErrBodyClosed
		return
	}
	st.readFailed(err)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	st.bodyErr = err
}

// ErrBodyClosed is Read's error after CloseBody.
var ErrBodyClosed = errors.New("h3srv: request body closed")

// CloseBody stops reading the request body, from any goroutine while the
// handler runs: a Read blocked in another goroutine returns ErrBodyClosed,
// and so do later ones; the rest of the body is refused with STOP_SENDING
// (H3_NO_ERROR). The response is not affected.
func (st *Stream) CloseBody() {
	if st.bodyClosed.CompareAndSwap(false, true) {
		st.qs.CancelRead(uint64(h3.CodeNoError))
	}
}

// Ended reports whether the request ended with its head: the stream's end
// was read with nothing after the HEADERS (no DATA, no trailers). A request
// declaring content-length 0 may still carry trailers: only Ended tells it
// has no body to read.
func (st *Stream) Ended() bool { return st.rd.eof && st.rd.i == st.rd.n }

// Trailers returns the request's trailer fields, once Read returned
// io.EOF. They point into the stream's buffers.
func (st *Stream) Trailers() []h3.Field { return st.trailers }

// WriteHeaders sends a response head: a 1xx interim response at once, or
// the final response's HEADERS, kept to leave in one write with the first
// DATA (or Flush, or Close). Field names are sent lower case;
// connection-specific fields (RFC 9114 §4.2) are dropped.
func (st *Stream) WriteHeaders(status int, fields []h1.Header) error {
	if st.wroteHead || st.done {
		return errWroteHead
	}
	if status < 100 || status > 999 || status == 101 {
		return errBadStatus
	}
	wb := st.takeWrite()
	b := wb.b[:headRoom]
	b = h3.AppendFieldSectionPrefix(b)
	if status == 200 {
		b = append(b, status200...)
	} else {
		b = h3.AppendStatus(b, status)
	}
	for i := range fields {
		f := &fields[i]
		if h1.ConnectionSpecific(f.Name) {
			continue
		}
		b = wb.lines.append(b, f.Name, f.Value)
	}
	wb.b = b[:0]
	n := uint64(len(b) - headRoom)
	start := headRoom - 1 - h3.VarintLen(n)
	h3.AppendFrameHeader(b[start:start], h3.FrameHeaders, n)
	if status < 200 {
		_, err := st.write(b[start:])
		st.dropWrite()
		return err
	}
	st.wroteHead = true
	st.pending = b[start:]
	return nil
}

// status200 is the field line of :status 200 (a static table index).
var status200 = h3.AppendStatus(nil, 200)

// lineCache keeps the last field lines a pooled Stream encoded for the
// fields whose values usually repeat from one response to the next (Date
// for a second, Content-Type, Server, Content-Length of a fixed body, ...;
// see repeats), by name and value: encoding them (static-table lookups,
// Huffman coding) was the largest part of a small response's head. Other
// fields are encoded each time, at no extra cost.
type lineCache struct {
	e    [lineCacheSize]cachedLine
	next int // the entry replaced next
}

type cachedLine struct {
	name, value []byte // as given to WriteHeaders
	line        []byte // their field line; nil: an empty entry
}

const (
	lineCacheSize = 6
	// maxCachedLine bounds the name and value a cached line may have, so
	// that a pooled Stream keeps no large handler-set field.
	maxCachedLine = 64
)

// append appends the field line of name: value, a kept one when it has
// the same name and value.
func (lc *lineCache) append(b, name, value []byte) []byte {
	if !repeats(name) || len(name)+len(value) > maxCachedLine {
		return h3.AppendFieldBytes(b, name, value, true)
	}
	for i := range lc.e {
		e := &lc.e[i]
		if e.line != nil && string(e.value) == string(value) && string(e.name) == string(name) {
			return append(b, e.line...)
		}
	}
	start := len(b)
	b = h3.AppendFieldBytes(b, name, value, true)
	e := &lc.e[lc.next]
	lc.next = (lc.next + 1) % lineCacheSize
	e.name = append(e.name[:0], name...)
	e.value = append(e.value[:0], value...)
	e.line = append(e.line[:0], b[start:]...)
	return b
}

// repeats reports whether name is a response field whose value usually
// repeats across responses (as the server and the compat door spell it:
// lower case or canonical), the only ones lineCache keeps.
func repeats(name []byte) bool {
	switch string(name) {
	case "date", "Date", "server", "Server", "content-type", "Content-Type",
		"content-length", "Content-Length", "cache-control", "Cache-Control",
		"vary", "Vary", "alt-svc", "Alt-Svc", "content-encoding", "Content-Encoding":
		return true
	}
	return false
}

var (
	errWroteHead = errors.New("h3srv: response head already written")
	errBadStatus = errors.New("h3srv: invalid status code")
	errNoHead    = errors.New("h3srv: response data before its head")
	errDone      = errors.New("h3srv: response already ended")
	// errFrameOverrun: more body than the open DATA frame declared.
	errFrameOverrun = errors.New("h3srv: body beyond the declared DATA frame size")
	// errFrameShort: the response ended inside a DATA frame.
	errFrameShort = errors.New("h3srv: response ended before its DATA frame was complete")
)

// WriteData sends p as a DATA frame, together with the pending response
// head if any: in one write when p fits the stream's buffer. While a
// frame WriteDataSized opened is incomplete, p continues it.
func (st *Stream) WriteData(p []byte) (int, error) {
	return st.WriteDataSized(p, uint64(len(p)))
}

// WriteDataSized sends p as body bytes: as the start of a DATA frame of
// size bytes (size >= len(p)) when no earlier frame is still open, or as
// the next bytes of the open one, which p must not overrun. With a known
// Content-Length, one frame header then covers the whole body however the
// handler writes it, and each later call is one stream write of p as it
// is (no frame header written on its own). A response ended before an
// open frame is complete is reset (Close), not ended with a FIN.
func (st *Stream) WriteDataSized(p []byte, size uint64) (int, error) {
	return st.writeData(p, size, false)
}

// WriteLastData is WriteData for a response's whole body when its end
// (Close or WriteTrailers) follows with nothing else in between: a DATA
// frame that fits in the stream's buffer after the pending head stays
// pending, so that head, body and trailers leave in one write. quic-go
// would otherwise be free to send the trailers in a later packet, and a
// client that takes a body complete at its Content-Length may then fail
// the request (Chromium does, ERR_CONNECTION_CLOSED, when it is loaded).
func (st *Stream) WriteLastData(p []byte) (int, error) {
	return st.writeData(p, uint64(len(p)), true)
}

// writeData is WriteDataSized, keeping the frame pending when hold and it
// fits.
func (st *Stream) writeData(p []byte, size uint64, hold bool) (int, error) {
	if st.done {
		return 0, errDone
	}
	if !st.wroteHead {
		return 0, errNoHead
	}
	if len(p) == 0 {
		return 0, nil
	}
	if st.outLeft > 0 {
		if uint64(len(p)) > st.outLeft {
			return 0, errFrameOverrun
		}
		st.outLeft -= uint64(len(p))
		return st.write(p)
	}
	size = max(size, uint64(len(p)))
	st.outLeft = size - uint64(len(p))
	b := st.pending
	if len(b) == 0 {
		b = st.takeWrite().b[:0]
	}
	b = h3.AppendFrameHeader(b, h3.FrameData, size)
	if len(b)+len(p) <= cap(b) {
		b = append(b, p...)
		if hold {
			st.pending = b
			return len(p), nil
		}
		st.pending = nil
		_, err := st.write(b)
		st.dropWrite()
		if err != nil {
			return 0, err
		}
		return len(p), nil
	}
	st.pending = nil
	_, err := st.write(b)
	st.dropWrite()
	if err != nil {
		return 0, err
	}
	return st.write(p)
}

// write writes b to the stream, counted in Config.BytesOut, within
// Config.WriteTimeout unless the handler set a deadline. A write past its
// deadline (a client that grants no flow control) resets the stream: part
// of b may have gone out, and no later write may wait again.
func (st *Stream) write(b []byte) (int, error) {
	c := st.c
	if d := c.cfg.WriteTimeout; d > 0 && !st.userWDL {
		st.qs.SetWriteDeadline(time.Now().Add(d))
	}
	n, err := st.qs.Write(b)
	c.wrote(n)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		st.qs.CancelWrite(uint64(h3.CodeInternalError))
		st.done = true
	}
	return n, err
}

// Flush writes the pending response head, if any.
func (st *Stream) Flush() error {
	if len(st.pending) == 0 {
		return nil
	}
	b := st.pending
	st.pending = nil
	_, err := st.write(b)
	st.dropWrite()
	return err
}

// WriteTrailers sends the trailer fields and ends the response.
func (st *Stream) WriteTrailers(fields []h1.Header) error {
	if st.done {
		return errDone
	}
	if !st.wroteHead {
		return errNoHead
	}
	if st.outLeft > 0 {
		st.Close() // reset: the DATA frame is incomplete
		return errFrameShort
	}
	// The trailers follow what is pending (the head and the last DATA
	// of a response committed at its end) in the same write.
	wb := st.takeWrite()
	b := st.pending
	if len(b) == 0 {
		b = wb.b[:0]
	}
	st.pending = nil
	off := len(b)
	b = append(b, make([]byte, headRoom)...)
	b = h3.AppendFieldSectionPrefix(b)
	for i := range fields {
		if !h1.ConnectionSpecific(fields[i].Name) {
			b = h3.AppendFieldBytes(b, fields[i].Name, fields[i].Value, true)
		}
	}
	if off == 0 {
		wb.b = b[:0] // keep a grown buffer
	}
	n := uint64(len(b) - off - headRoom)
	start := off + headRoom - 1 - h3.VarintLen(n)
	h3.AppendFrameHeader(b[start:start], h3.FrameHeaders, n)
	b = b[:off+copy(b[off:], b[start:])]
	_, err := st.write(b)
	st.dropWrite()
	if err != nil {
		return err
	}
	return st.Close()
}

// Close ends the response (FIN), writing the pending head first; a
// response whose last DATA frame is incomplete (WriteDataSized) is reset
// with H3_INTERNAL_ERROR instead, so that the peer does not take it as
// complete.
func (st *Stream) Close() error {
	if st.done {
		return nil
	}
	err := st.Flush()
	if err == nil && st.outLeft > 0 {
		err = errFrameShort
	}
	st.done = true
	if err != nil {
		st.qs.CancelWrite(uint64(h3.CodeInternalError))
		return err
	}
	return st.qs.Close()
}

// Reset abandons the stream in both directions with code.
func (st *Stream) Reset(code h3.ErrorCode) {
	st.qs.CancelRead(uint64(code))
	if !st.done {
		st.qs.CancelWrite(uint64(code))
		st.done = true
	}
	if st.bodyErr == nil {
		st.bodyErr = errReset
	}
}

var errReset = errors.New("h3srv: stream reset")

// finish ends the stream after the handler: the response (a 200 with no
// body if none was written), reading the rest of the body if its end was
// not read (stopped with H3_NO_ERROR, RFC 9114 §4.1.2) and, last, the
// stream credit, so that the peer can open a stream in its place only now.
func (st *Stream) finish() {
	if !st.done {
		if !st.wroteHead {
			st.respond(200)
		} else {
			st.Close()
		}
	}
	if st.bodyErr == nil && !st.rd.eof {
		// Unless the stream's end was read (its receive side is then
		// complete, and quic-go would send no STOP_SENDING).
		st.qs.CancelRead(uint64(h3.CodeNoError))
	}
	if st.reserved != 0 {
		st.unreserve()
	}
	st.qs.ReleaseStreamCredit()
}
