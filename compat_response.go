package riptide

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"time"
	"unsafe"

	"github.com/riptide-http/riptide/h1"
)

// ErrHandlerReturned is what the compat door's http.ResponseWriter (and
// what http.ResponseController reaches through it: Flush, Hijack, the
// deadlines) returns when it is used after ServeHTTP returned, from a
// goroutine the handler left running. Such a call writes nothing: the
// connection's writer may be producing another response by then, and that
// response gets none of it. WriteHeader and Flush are no-ops then, and
// Header returns a map that is sent nowhere.
var ErrHandlerReturned = errors.New("riptide: ResponseWriter used after ServeHTTP returned")

// compatResponse is the http.ResponseWriter the compat door hands a
// handler: its request's compatRequest seen as a writer, so that it costs
// no allocation and belongs to that request alone, whereas the
// compatWriter behind it is pooled with the connection (on the event loop,
// with the worker) and serves the next request once this one has ended.
// Each method takes the request's lock (compatContext.mu, which the
// writer's methods need anyway) and reaches the writer only while the
// request has not ended (compatContext.ended, set under that lock when
// ServeHTTP returns): a call made after that touches nothing pooled. The
// request is never reused (unless CompatOptions.ReuseRequests), so neither
// is the lock or the flag such a late call looks at.
type compatResponse compatRequest

var (
	_ http.ResponseWriter = (*compatResponse)(nil)
	_ http.Flusher        = (*compatResponse)(nil)
	_ http.Hijacker       = (*compatResponse)(nil)
	_ io.ReaderFrom       = (*compatResponse)(nil)
	_ io.StringWriter     = (*compatResponse)(nil)
)

// writer returns the request's ResponseWriter.
func (rq *compatRequest) writer() *compatResponse { return (*compatResponse)(rq) }

// lock takes the request's lock and returns the connection's writer, which
// serves this request until unlock, once no ReadFrom is sending the body
// without the lock (compatWriter.sending). Once the request has ended it
// returns nil, and the lock is not held.
func (rw *compatResponse) lock() *compatWriter {
	cx := &rw.ctx
	cx.lock()
	for {
		if cx.ended.Load() {
			cx.unlock()
			return nil
		}
		w := &cx.x.compat.w
		if !w.sending.Load() {
			return w
		}
		w.waitSend()
	}
}

func (rw *compatResponse) unlock() { rw.ctx.unlock() }

// Header returns the response header map (compatWriter.header). After
// ServeHTTP returned it returns a new map, sent nowhere.
func (rw *compatResponse) Header() http.Header {
	w := rw.lock()
	if w == nil {
		return make(http.Header)
	}
	h := w.headerMap()
	rw.unlock()
	return h
}

// WriteHeader sends an informational (1xx other than 101) response at once,
// or records the final status and header.
func (rw *compatResponse) WriteHeader(code int) {
	w := rw.lock()
	if w == nil {
		return
	}
	defer rw.unlock()
	if w.wroteHeader && !w.hijacked {
		// Logged once per response, as net/http logs a superfluous
		// WriteHeader call.
		w.x.superfluousStatus("ResponseWriter.WriteHeader", w.status, code, 2)
	}
	w.writeHeader(code)
}

// Write writes body bytes: buffered until the server's write buffer is
// full, then streamed.
func (rw *compatResponse) Write(p []byte) (int, error) {
	w := rw.lock()
	if w == nil {
		return 0, ErrHandlerReturned
	}
	defer rw.unlock()
	return w.write(p)
}

// WriteString is Write without converting s to a []byte.
func (rw *compatResponse) WriteString(s string) (int, error) {
	// The engine only reads p during the call and never retains it.
	return rw.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// Flush sends the head, if not sent yet, and everything buffered.
func (rw *compatResponse) Flush() { rw.FlushError() }

// FlushError is Flush returning the write error, for
// http.ResponseController.
func (rw *compatResponse) FlushError() error {
	w := rw.lock()
	if w == nil {
		return ErrHandlerReturned
	}
	defer rw.unlock()
	return w.flush()
}

// ReadFrom copies src into the body. When src is a file and the response
// has a declared Content-Length, the body goes out through the exchange as
// Ctx.SendFile sends one (sendfile on a plain TCP connection) after the
// head, once the first bytes went through Write (nothing is committed for
// an empty source), and the file's offset is moved past what was sent, as
// io.Copy would; anything else goes through Write, so a small body still
// gets a Content-Length. No lock is held while src is read: src may be the
// request body. While a file's first bytes are read and while it is sent,
// the request does not end (see readUnlocked): a goroutine the handler left
// copying a file when it returned finishes the response.
func (rw *compatResponse) ReadFrom(src io.Reader) (int64, error) {
	f, outer := fileSource(src)
	if f == nil {
		return rw.copyFrom(src)
	}
	w := rw.lock()
	if w == nil {
		return 0, ErrHandlerReturned
	}
	var n int64
	if !w.hijacked && !w.x.resp.committed {
		// As net/http: the first bytes go through Write, so that nothing
		// is committed before the source has a byte to send (an empty
		// file leaves the status and header open) and Content-Type can
		// be sniffed from them. They are read into a buffer of
		// sniffBufs only when nothing is buffered: a commit in Write
		// then sniffs from them (in a buffer of its own); otherwise into
		// the ReadFrom buffer.
		var sb *[sniffLen]byte
		var buf []byte
		taken := len(w.x.resp.body) > 0
		if taken {
			buf = w.takeCopyBuf()[:sniffLen]
		} else {
			sb = sniffBufs.Get().(*[sniffLen]byte)
			buf = sb[:]
		}
		k, err := w.readUnlocked(src, buf)
		n = int64(k)
		var werr error
		if k > 0 {
			_, werr = w.write(buf[:k])
		}
		if taken {
			w.st.copyBuf = buf[:cap(buf)]
		} else {
			sniffBufs.Put(sb)
		}
		if werr != nil {
			rw.unlock()
			return n, werr
		}
		if err != nil {
			rw.unlock()
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				err = nil
			}
			return n, err
		}
	}
	if !w.sendsFile() {
		rw.unlock()
		m, err := rw.copyFrom(src)
		return n + m, err
	}
	r := &w.x.resp
	if !r.committed {
		w.commit(true, nil)
	}
	remaining := r.clen - r.written
	if outer != nil {
		remaining = min(remaining, outer.N)
	}
	if remaining <= 0 {
		rw.unlock()
		return n, nil
	}
	// A file that cannot seek (a pipe) is read as it comes and copied
	// through the exchange, through the connection's ReadFrom buffer.
	var buf []byte
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		off, buf = -1, w.takeCopyBuf()
	}
	// Only this goroutine writes the response: the exchange is ours
	// until the next engine write, which needs the lock and waits for
	// sending (compatResponse.lock, compatWriter.waitSend).
	m, err := w.sendUnlocked(f, off, remaining, buf)
	if buf != nil {
		w.st.copyBuf = buf
	}
	if outer != nil {
		outer.N -= m
	}
	r.written += m
	if c := w.x.conn; err != nil && c.werr == nil {
		// The head is out and the body is short: the connection cannot
		// be reused.
		c.closeAfter = true
	}
	rw.unlock()
	return n + m, err
}

// readUnlocked reads src into buf (io.ReadFull) and sendUnlocked sends n
// bytes of f from off through the exchange, with the request's lock
// released, which they are called with and hold again when they return.
// Meanwhile the writer is sending: the request does not end (waitSend), so
// that a goroutine the handler left reading a file or sending it when
// ServeHTTP returned finishes the response, and no other call uses the
// writer (compatResponse.lock), so that buf may be the writer's own.
// Should the read panic, the writer stops sending without the lock, so
// that the request can still end.
func (w *compatWriter) readUnlocked(src io.Reader, buf []byte) (int, error) {
	w.startSending()
	defer w.stopSending()
	n, err := io.ReadFull(src, buf)
	w.cx.lock()
	w.endSending()
	return n, err
}

func (w *compatWriter) sendUnlocked(f *os.File, off, n int64, buf []byte) (int64, error) {
	ex := w.x.conn.ex
	w.startSending()
	defer w.stopSending()
	var m int64
	var err error
	if off >= 0 {
		// sendsFile: the exchange takes files; f's offset is moved past
		// what was sent, as a read would have.
		m, _, err = ex.sendFile(f, off, n)
		if _, serr := f.Seek(off+m, io.SeekStart); err == nil {
			err = serr
		}
	} else {
		m, err = copyToExchange(ex, f, n, buf)
	}
	w.cx.lock()
	w.endSending()
	return m, err
}

// copyToExchange sends at most n bytes read from src, through buf, as
// body bytes after what is buffered, each read's at once (src may be a
// pipe whose writer waits for what it wrote before to arrive).
func copyToExchange(ex exchange, src io.Reader, n int64, buf []byte) (int64, error) {
	if err := ex.flush(); err != nil {
		return 0, err
	}
	var sent int64
	for sent < n {
		k, rerr := src.Read(buf[:min(n-sent, int64(len(buf)))])
		if k > 0 {
			if err := ex.writeBody(buf[:k]); err != nil {
				return sent, err
			}
			if err := ex.flush(); err != nil {
				return sent, err
			}
			sent += int64(k)
		}
		if rerr == io.EOF {
			return sent, nil
		}
		if rerr != nil {
			return sent, rerr
		}
	}
	return sent, nil
}

// startSending marks the writer sending and releases the lock.
func (w *compatWriter) startSending() {
	if w.send == nil {
		w.send = new(sendWait)
		w.send.done.L = &w.send.mu
	}
	w.sending.Store(true)
	w.cx.unlock()
}

// endSending marks the writer no longer sending and wakes waitSend.
func (w *compatWriter) endSending() {
	sw := w.send
	sw.mu.Lock()
	w.sending.Store(false)
	sw.done.Broadcast()
	sw.mu.Unlock()
}

// stopSending is endSending for a read that panicked (deferred; a read
// that returned has ended sending already).
func (w *compatWriter) stopSending() {
	if w.sending.Load() {
		w.endSending()
	}
}

// copyFrom is ReadFrom through Write, with the buffer kept per connection
// (taken while in use: see takeCopyBuf).
func (rw *compatResponse) copyFrom(src io.Reader) (int64, error) {
	w := rw.lock()
	if w == nil {
		return 0, ErrHandlerReturned
	}
	buf := w.takeCopyBuf()
	rw.unlock()
	var n int64
	var err error
	for {
		k, rerr := src.Read(buf)
		if k > 0 {
			m, werr := rw.Write(buf[:k])
			n += int64(m)
			if werr != nil {
				err = werr
				break
			}
		}
		if rerr != nil {
			if rerr != io.EOF {
				err = rerr
			}
			break
		}
	}
	rw.putCopyBuf(buf)
	return n, err
}

// putCopyBuf gives the ReadFrom buffer back to the connection, unless the
// request has ended meanwhile (ServeHTTP returned while a goroutine it left
// was still copying): then the buffer is dropped, since the connection may
// be serving another request, which makes a buffer of its own.
func (rw *compatResponse) putCopyBuf(buf []byte) {
	if w := rw.lock(); w != nil {
		w.st.copyBuf = buf[:cap(buf)]
		rw.unlock()
	}
}

// takeCopyBuf returns the connection's ReadFrom buffer, made on first
// use, and takes it from the connection until putCopyBuf: src is read
// into it without the lock, so a source read that outlives the request
// (ServeHTTP returned meanwhile) must not fill a buffer the connection's
// next request uses. The request's lock is held.
func (w *compatWriter) takeCopyBuf() []byte {
	buf := w.st.copyBuf
	w.st.copyBuf = nil
	if buf == nil {
		buf = make([]byte, 32<<10)
	}
	return buf
}

// fileSource returns the file src reads, itself or behind an
// io.LimitedReader (io.CopyN, http.ServeContent: outer), or nil.
func fileSource(src io.Reader) (f *os.File, outer *io.LimitedReader) {
	if lr, ok := src.(*io.LimitedReader); ok {
		outer, src = lr, lr.R
	}
	if f, ok := src.(*os.File); ok {
		return f, outer
	}
	return nil, nil
}

// sendsFile reports whether the body's rest can be sent as a file through
// the exchange (exchange.sendFile): a declared Content-Length, a body to
// send and a transport that takes files. ReadFrom calls it once the
// status is set, with the lock held.
func (w *compatWriter) sendsFile() bool {
	if w.hijacked || !w.wroteHeader {
		return false
	}
	r := &w.x.resp
	return r.clen >= 0 && !r.head && h1.BodyAllowed(w.status) && w.x.conn.ex.abilities()&canSendfile != 0
}

// Hijack hands the connection to the handler, after sending the head it
// has written (a 101 Switching Protocols, say). The returned reader holds
// any bytes the server had already read past the request head. Over
// HTTP/2 and HTTP/3 only a CONNECT stream can be hijacked (Ctx.Hijack):
// its head (200 unless written) goes out and the stream is the
// connection.
func (rw *compatResponse) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w := rw.lock()
	if w == nil {
		return nil, nil, ErrHandlerReturned
	}
	defer rw.unlock()
	if w.hijacked {
		return nil, nil, http.ErrHijacked
	}
	x := w.x
	tunnel := x.conn.ex.abilities()&canHijack == 0 && string(x.req.Method) == http.MethodConnect
	if x.conn.ex.abilities()&canHijack == 0 && !tunnel {
		// An HTTP/2 stream: net/http's ResponseWriter there is no
		// http.Hijacker, which ResponseController reports so.
		return nil, nil, http.ErrNotSupported
	}
	if tunnel && !w.wroteHeader {
		w.writeHeader(http.StatusOK) // a CONNECT stream's tunnel opens with a 2xx head
	}
	if w.wroteHeader && !x.resp.committed {
		w.commit(true, nil)
	}
	// The engine ends the disconnect watch on Hijack; the Context then
	// stays live until ServeHTTP returns, as in net/http.
	rw.ctx.setFlag(ctxHijack, true)
	nc, buffered, err := x.Hijack()
	if err != nil {
		rw.ctx.setFlag(ctxHijack, false)
		return nil, nil, err
	}
	w.hijacked = true
	br := bufio.NewReaderSize(&prefixReader{buf: buffered, r: nc}, max(4<<10, len(buffered)))
	if len(buffered) > 0 {
		// Make the bytes visible through Buffered, as net/http's are.
		br.Peek(len(buffered))
	}
	return nc, bufio.NewReadWriter(br, bufio.NewWriterSize(nc, 4<<10)), nil
}

// SetReadDeadline sets the connection's read deadline for the rest of the
// request (http.ResponseController).
func (rw *compatResponse) SetReadDeadline(t time.Time) error {
	return rw.setDeadline((*Ctx).SetReadDeadline, t)
}

// SetWriteDeadline sets the connection's write deadline for the rest of
// the request (http.ResponseController).
func (rw *compatResponse) SetWriteDeadline(t time.Time) error {
	return rw.setDeadline((*Ctx).SetWriteDeadline, t)
}

func (rw *compatResponse) setDeadline(set func(*Ctx, time.Time) error, t time.Time) error {
	w := rw.lock()
	if w == nil {
		return ErrHandlerReturned
	}
	defer rw.unlock()
	if w.hijacked {
		return http.ErrHijacked
	}
	return set(w.x, t)
}

// EnableFullDuplex reports success: riptide never discards the unread
// request body when the response starts, so a handler may always
// interleave reading the body and writing the response. Body reads and
// response writes made from two goroutines at once are serialised: a write
// (or Header) waits for a body read that is blocked on the network.
func (rw *compatResponse) EnableFullDuplex() error {
	if rw.ctx.ended.Load() {
		return ErrHandlerReturned
	}
	return nil
}

// CloseNotify implements the deprecated http.CloseNotifier: the channel
// receives true when the request's Context is done.
func (rw *compatResponse) CloseNotify() <-chan bool {
	ch := make(chan bool, 1)
	done := rw.ctx.Done()
	go func() {
		<-done
		ch <- true
	}()
	return ch
}
