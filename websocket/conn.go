package websocket

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/riptide-http/riptide/internal/takeover"
	"github.com/riptide-http/riptide/ws"
)

// MessageType is a message's (or control frame's) opcode, numbered as in
// RFC 6455 and gorilla/websocket.
type MessageType int

// Message and control types.
const (
	TextMessage   MessageType = 1
	BinaryMessage MessageType = 2
	CloseMessage  MessageType = 8
	PingMessage   MessageType = 9
	PongMessage   MessageType = 10
)

// CloseError is what reading returns once the peer's close frame arrived
// (Code ws.CloseNoStatus when it carried no code), or after the connection
// was failed for a protocol error (the code this side sent).
type CloseError struct {
	Code int
	Text string
}

func (e *CloseError) Error() string {
	return "websocket: closed: " + strconv.Itoa(e.Code) + " " + e.Text
}

// CloseStatus returns the close code of a *CloseError in err's chain, -1 if
// there is none.
func CloseStatus(err error) int {
	var ce *CloseError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return -1
}

// ErrClosed is returned by writes after the close frame was sent, and by
// reads after Close.
var ErrClosed = errors.New("websocket: connection closed")

// errWriterOpen is a write while a NextWriter's message is still open on
// the same goroutine's conn.
var errWriterOpen = errors.New("websocket: previous NextWriter not closed")

// retainMax is the largest ReadMessage buffer a connection keeps between
// messages; a larger one is dropped after the message.
const retainMax = 64 << 10

// Conn is a WebSocket connection over a byte stream (a hijacked HTTP/1.1
// connection or a dialled one).
//
// One goroutine may read (NextReader, ReadMessage) while another writes
// (NextWriter, WriteMessage); Ping, Pong, WriteControl and Close may be
// called from any goroutine. Control frames that arrive are handled while
// reading: a ping is answered with a pong (SetPingHandler changes that), a
// close frame is answered and ends reading with a *CloseError, so an
// application must keep reading for them to be seen.
type Conn struct {
	nc           net.Conn
	cnt          *takeover.Counters // the server's Stats.BytesIn and BytesOut (takeover.Bytes), nil for none
	client       bool
	subprotocol  string
	compress     bool // permessage-deflate negotiated
	closeTimeout time.Duration
	readTimeout  time.Duration

	// Read side: one goroutine.
	rbuf      []byte
	r, w      int
	rs        ws.Reader
	frame     ws.Header
	remain    int64 // payload bytes left in the current data frame
	maskPos   int
	msgActive bool // a message's reader is open
	rerr      error
	inflater  ws.Inflater
	payload   payloadReader
	msg       messageReader
	msgBuf    []byte
	ctrl      [ws.MaxControlPayload]byte
	onPing    func([]byte) error
	onPong    func([]byte) error
	rmu       sync.Mutex    // held by whoever reads: NextReader, ReadMessage, a message reader's Read, CloseWith
	readEnded chan struct{} // closed when reading ends (rerr set)

	// Write side.
	wmu         sync.Mutex
	wsize       int    // write buffer size
	wbuf        []byte // the write buffer when wsize is not the pooled size
	zbuf        []byte
	compressor  ws.Compressor
	writer      messageWriter
	werr        error
	closeSent   bool
	pinger      *time.Timer
	closeOnce   sync.Once
	closeErr    error
	wcompress   bool
	compressMin int
}

// newConn wraps nc, whose first len(buffered) bytes already arrived.
func newConn(nc net.Conn, client bool, buffered []byte, o *Options, subprotocol string, deflate *ws.DeflateParams) *Conn {
	rsize, wsize := o.readBufferSize(), o.writeBufferSize()
	c := &Conn{
		nc:           nc,
		client:       client,
		subprotocol:  subprotocol,
		closeTimeout: o.closeTimeout(),
		rbuf:         make([]byte, max(rsize, len(buffered))),
		wsize:        wsize,
		readEnded:    make(chan struct{}),
	}
	if o != nil {
		c.compressMin = o.CompressionThreshold
		c.readTimeout = o.ReadTimeout
	}
	c.w = copy(c.rbuf, buffered)
	c.rs = ws.Reader{Client: client, MaxFrame: o.readLimit(), MaxMessage: o.readLimit()}
	if deflate != nil {
		c.compress, c.wcompress = true, true
		c.rs.Deflate = true
		if client {
			c.compressor.Takeover = !deflate.ClientNoContextTakeover
			c.compressor.HuffmanOnly = ws.HuffmanOnly(deflate.ClientMaxWindowBits)
			c.inflater.Takeover = !deflate.ServerNoContextTakeover
		} else {
			c.compressor.Takeover = !deflate.ServerNoContextTakeover
			c.compressor.HuffmanOnly = ws.HuffmanOnly(deflate.ServerMaxWindowBits)
			c.inflater.Takeover = !deflate.ClientNoContextTakeover
		}
	}
	c.payload.c = c
	c.msg.c = c
	c.writer.c = c
	if o != nil && o.PingInterval > 0 {
		every := o.PingInterval
		c.wmu.Lock() // orders the assignment before the timer's reads
		c.pinger = time.AfterFunc(every, func() {
			if c.Ping(nil) == nil {
				c.wmu.Lock()
				c.pinger.Reset(every)
				c.wmu.Unlock()
			}
		})
		c.wmu.Unlock()
	}
	return c
}

// Subprotocol is the negotiated subprotocol, "" if none.
func (c *Conn) Subprotocol() string { return c.subprotocol }

// Compressed reports whether permessage-deflate was negotiated.
func (c *Conn) Compressed() bool { return c.compress }

// EnableWriteCompression turns compression of outgoing messages on or off
// (when permessage-deflate was negotiated; it is on by default).
func (c *Conn) EnableWriteCompression(on bool) {
	c.wmu.Lock()
	c.wcompress = on && c.compress
	c.wmu.Unlock()
}

// NetConn is the underlying connection.
func (c *Conn) NetConn() net.Conn { return c.nc }

// LocalAddr and RemoteAddr are the underlying connection's addresses.
func (c *Conn) LocalAddr() net.Addr { return c.nc.LocalAddr() }

// RemoteAddr is the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }

// SetReadDeadline sets the deadline for reads (and for the peer's close
// frame); a read past it fails and the connection is unusable.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.nc.SetReadDeadline(t) }

// SetWriteDeadline sets the deadline for writes: a write blocked by a peer
// that does not read fails at t and the connection is unusable. This is
// the bound on a slow reader: a Conn never buffers more than its write
// buffer, the socket's buffers hold the rest and the writer blocks.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.nc.SetWriteDeadline(t) }

// SetReadLimit bounds a message's size (after decompression) and a frame's
// payload; a larger one fails the connection with close code 1009.
func (c *Conn) SetReadLimit(n int64) {
	c.rs.MaxMessage = n
	c.rs.MaxFrame = n
}

// SetPingHandler sets what is done with a ping's payload (valid only during
// the call); nil restores the default, a pong with the same payload.
func (c *Conn) SetPingHandler(h func(appData []byte) error) { c.onPing = h }

// SetPongHandler sets what is done with a pong's payload (valid only during
// the call); nil ignores pongs (the default).
func (c *Conn) SetPongHandler(h func(appData []byte) error) { c.onPong = h }

// ---- reading ----

// fill reads until at least n bytes are buffered (n <= len(c.rbuf)).
func (c *Conn) fill(n int) error {
	if c.w-c.r >= n {
		return nil
	}
	if c.r > 0 {
		c.w = copy(c.rbuf, c.rbuf[c.r:c.w])
		c.r = 0
	}
	for c.w < n {
		m, err := c.nc.Read(c.rbuf[c.w:])
		countIn(c.cnt, m)
		c.w += m
		if err != nil {
			if c.w >= n {
				return nil
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// endRead makes err the sticky read error (the first one wins) and tells a
// CloseWith waiting for the end of reading.
func (c *Conn) endRead(err error) {
	if c.rerr == nil {
		c.rerr = err
		close(c.readEnded)
	}
}

// fail sends a close frame for a protocol error and closes the connection;
// reads from now on return the error.
func (c *Conn) fail(err error) error {
	var pe *ws.Error
	code := ws.CloseProtocolError
	if errors.As(err, &pe) {
		code = pe.Code
	} else {
		// A network error: there is no one to tell.
		c.endRead(err)
		c.closeConn()
		return c.rerr
	}
	c.sendClose(code, pe.Msg)
	c.endRead(err)
	c.closeConn()
	return c.rerr
}

// nextFrame reads frame headers, handling control frames, until a data
// frame's header; its payload is then read through c.payload.
func (c *Conn) nextFrame() error {
	for {
		if err := c.fill(2); err != nil {
			return err
		}
		h, n, err := ws.ParseHeader(c.rbuf[c.r:c.w])
		if err != nil {
			return c.fail(err)
		}
		if n == 0 {
			if err := c.fill(c.w - c.r + 1); err != nil {
				return err
			}
			continue
		}
		if err := c.rs.Frame(&h); err != nil {
			return c.fail(err)
		}
		c.r += n
		if !h.Op.IsControl() {
			c.frame, c.remain, c.maskPos = h, h.Length, 0
			return nil
		}
		if err := c.fill(int(h.Length)); err != nil {
			return err
		}
		p := c.ctrl[:h.Length]
		copy(p, c.rbuf[c.r:])
		c.r += int(h.Length)
		if h.Masked {
			ws.Mask(h.Key, 0, p)
		}
		if err := c.control(h.Op, p); err != nil {
			return err
		}
		if !c.msgActive {
			c.armReadTimeout() // a control frame between messages keeps the connection alive
		}
	}
}

// armReadTimeout gives the next message Options.ReadTimeout to arrive whole.
func (c *Conn) armReadTimeout() {
	if c.readTimeout > 0 {
		c.nc.SetReadDeadline(time.Now().Add(c.readTimeout))
	}
}

// control handles a control frame that arrived while reading.
func (c *Conn) control(op ws.Opcode, p []byte) error {
	switch op {
	case ws.OpPing:
		if c.onPing != nil {
			return c.onPing(p)
		}
		if err := c.WriteControl(PongMessage, p, time.Now().Add(c.closeTimeout)); err != nil && err != ErrClosed {
			return err
		}
	case ws.OpPong:
		if c.onPong != nil {
			return c.onPong(p)
		}
	case ws.OpClose:
		code, reason, err := ws.ParseClose(p)
		if err != nil {
			return c.fail(err)
		}
		ce := &CloseError{Code: code, Text: string(reason)}
		reply := code
		if reply == ws.CloseNoStatus {
			reply = ws.CloseNormal
		}
		c.sendClose(reply, "")
		c.endRead(ce)
		c.closeConn()
		return c.rerr
	}
	return nil
}

// readPayload reads the current message's raw payload (still compressed
// for a compressed message) across its frames; io.EOF ends the message.
func (c *Conn) readPayload(p []byte) (int, error) {
	for c.remain == 0 {
		if c.frame.Fin {
			return 0, io.EOF
		}
		if err := c.nextFrame(); err != nil {
			return 0, err
		}
	}
	if int64(len(p)) > c.remain {
		p = p[:c.remain]
	}
	var n int
	if c.r < c.w {
		n = copy(p, c.rbuf[c.r:c.w])
		c.r += n
	} else if len(p) >= len(c.rbuf) {
		m, err := c.nc.Read(p)
		countIn(c.cnt, m)
		if m == 0 && err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		n = m
	} else {
		if err := c.fill(1); err != nil {
			return 0, err
		}
		n = copy(p, c.rbuf[c.r:c.w])
		c.r += n
	}
	if c.frame.Masked {
		c.maskPos = ws.Mask(c.frame.Key, c.maskPos, p[:n])
	}
	c.remain -= int64(n)
	return n, nil
}

// payloadReader is readPayload as an io.Reader, the inflater's source.
type payloadReader struct{ c *Conn }

func (r *payloadReader) Read(p []byte) (int, error) { return r.c.readPayload(p) }

// messageReader reads the current message.
type messageReader struct{ c *Conn }

func (m *messageReader) Read(p []byte) (int, error) {
	m.c.rmu.Lock()
	defer m.c.rmu.Unlock()
	return m.c.readMessage(p)
}

// unlockedReader is messageReader for a caller that holds c.rmu.
type unlockedReader struct{ c *Conn }

func (u unlockedReader) Read(p []byte) (int, error) { return u.c.readMessage(p) }

// readMessage reads the current message; the caller holds c.rmu.
func (c *Conn) readMessage(p []byte) (int, error) {
	if !c.msgActive {
		if c.rerr != nil {
			return 0, c.rerr
		}
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var err error
	if c.rs.Compressed() {
		n, err = c.inflater.Read(p)
	} else {
		n, err = c.readPayload(p)
	}
	if n > 0 {
		if perr := c.rs.Payload(p[:n]); perr != nil {
			c.msgActive = false
			c.inflater.End()
			return 0, c.fail(perr)
		}
	}
	if err == io.EOF {
		c.msgActive = false
		if _, perr := c.rs.End(); perr != nil {
			return 0, c.fail(perr)
		}
		return n, io.EOF
	}
	if err != nil {
		c.msgActive = false
		c.inflater.End()
		var pe *ws.Error
		if errors.As(err, &pe) && c.rerr == nil {
			return n, c.fail(err)
		}
		if c.rerr == nil {
			c.endRead(err)
			c.closeConn()
		}
		return n, c.rerr
	}
	return n, nil
}

// NextReader returns the next data message's type and a reader for it,
// valid until the next call; what the previous reader left unread is
// discarded. Control frames met on the way are handled. After the peer's
// close frame it returns a *CloseError; after any error, the same error.
func (c *Conn) NextReader() (MessageType, io.Reader, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	return c.nextReader()
}

// nextReader is NextReader for a caller that holds c.rmu.
func (c *Conn) nextReader() (MessageType, io.Reader, error) {
	if c.msgActive {
		if _, err := io.Copy(io.Discard, unlockedReader{c}); err != nil {
			return 0, nil, err
		}
	}
	if c.rerr != nil {
		return 0, nil, c.rerr
	}
	c.armReadTimeout()
	if err := c.nextFrame(); err != nil {
		if c.rerr == nil {
			c.endRead(err)
			c.closeConn()
		}
		return 0, nil, c.rerr
	}
	c.msgActive = true
	if c.rs.Compressed() {
		c.inflater.Begin(&c.payload)
	}
	return MessageType(c.rs.Op()), &c.msg, nil
}

// ReadMessage reads the next data message whole. The returned slice is the
// connection's buffer, valid until the next ReadMessage: copy what must
// outlive it. Steady state it allocates nothing.
func (c *Conn) ReadMessage() (MessageType, []byte, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	mt, _, err := c.nextReader()
	if err != nil {
		return 0, nil, err
	}
	b := c.msgBuf[:0]
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := c.readMessage(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, nil, err
		}
	}
	if cap(b) <= retainMax {
		c.msgBuf = b
	} else {
		c.msgBuf = nil
	}
	return mt, b, nil
}

// ---- writing ----

// wbufPool holds write buffers of DefaultBufferSize: a Conn borrows one
// for each frame, so an idle connection holds none.
var wbufPool sync.Pool // *[]byte

// writeBuffer borrows the write buffer; release gives it back.
func (c *Conn) writeBuffer() *[]byte {
	if c.wsize != DefaultBufferSize {
		if c.wbuf == nil {
			c.wbuf = make([]byte, 0, c.wsize)
		}
		return &c.wbuf
	}
	if b, ok := wbufPool.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, DefaultBufferSize)
	return &b
}

func (c *Conn) releaseWriteBuffer(b *[]byte) {
	if c.wsize == DefaultBufferSize {
		wbufPool.Put(b)
	}
}

// writeFrame writes one frame; the caller holds c.wmu.
func (c *Conn) writeFrame(fin bool, op ws.Opcode, rsv uint8, p []byte) error {
	if c.werr != nil {
		return c.werr
	}
	wb := c.writeBuffer()
	defer c.releaseWriteBuffer(wb)
	h := ws.Header{Fin: fin, Op: op, RSV: rsv, Masked: c.client, Length: int64(len(p))}
	if c.client {
		h.Key = ws.KeyUint32(rand.Uint32())
	}
	b := ws.AppendHeader((*wb)[:0], h)
	if !c.client && len(p) > cap(b)-len(b) {
		// Large server payload: no copy, two writes.
		if err := c.write(b); err != nil {
			return c.writeFailed(err)
		}
		if err := c.write(p); err != nil {
			return c.writeFailed(err)
		}
		return nil
	}
	pos := 0
	for {
		k := min(len(p), cap(b)-len(b))
		start := len(b)
		b = append(b, p[:k]...)
		if c.client {
			pos = ws.Mask(h.Key, pos, b[start:])
		}
		p = p[k:]
		if err := c.write(b); err != nil {
			return c.writeFailed(err)
		}
		if len(p) == 0 {
			return nil
		}
		b = (*wb)[:0]
	}
}

// writeFailed makes a write error sticky for writers; reading goes on (a
// close frame the peer sent may still be buffered).
func (c *Conn) writeFailed(err error) error {
	c.werr = err
	return err
}

// WriteMessage writes p as one message, compressed when permessage-deflate
// was negotiated (and p is at least Options.CompressionThreshold long).
func (c *Conn) WriteMessage(mt MessageType, p []byte) error {
	if mt != TextMessage && mt != BinaryMessage {
		return c.WriteControl(mt, p, time.Time{})
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closeSent {
		return ErrClosed
	}
	if c.writer.open {
		return errWriterOpen
	}
	if c.wcompress && len(p) >= c.compressMin {
		z, err := c.compressor.Compress(c.zbuf[:0], p)
		if err != nil {
			return err
		}
		err = c.writeFrame(true, ws.Opcode(mt), ws.RSV1, z)
		c.keepZ(z)
		return err
	}
	return c.writeFrame(true, ws.Opcode(mt), 0, p)
}

// keepZ keeps the compression buffer for the next message unless it grew
// past retainMax.
func (c *Conn) keepZ(z []byte) {
	if cap(z) <= retainMax {
		c.zbuf = z[:0]
	} else {
		c.zbuf = nil
	}
}

// WriteControl writes a close, ping or pong frame (payload at most 125
// bytes), waiting for a write in progress; a non-zero deadline bounds the
// write. Any goroutine may call it.
func (c *Conn) WriteControl(mt MessageType, data []byte, deadline time.Time) error {
	if mt != CloseMessage && mt != PingMessage && mt != PongMessage {
		return errors.New("websocket: not a control message type")
	}
	if len(data) > ws.MaxControlPayload {
		return errors.New("websocket: control payload over 125 bytes")
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closeSent {
		return ErrClosed
	}
	if !deadline.IsZero() {
		c.nc.SetWriteDeadline(deadline)
		defer c.nc.SetWriteDeadline(time.Time{})
	}
	if mt == CloseMessage {
		c.closeSent = true
	}
	return c.writeFrame(true, ws.Opcode(mt), 0, data)
}

// Ping sends a ping with data (at most 125 bytes).
func (c *Conn) Ping(data []byte) error {
	return c.WriteControl(PingMessage, data, time.Now().Add(c.closeTimeout))
}

// sendClose sends a close frame once.
func (c *Conn) sendClose(code int, reason string) {
	var p [ws.MaxControlPayload]byte
	_ = c.WriteControl(CloseMessage, ws.AppendClose(p[:0], code, reason), time.Now().Add(c.closeTimeout))
}

// messageWriter streams one message in frames of the write buffer's size.
type messageWriter struct {
	c          *Conn
	open       bool
	op         ws.Opcode
	compressed bool
	started    bool // a frame went out
	buf        []byte
}

// NextWriter starts a message of type mt and returns its writer: each Write
// sends a frame once the write buffer fills, Close sends the last one. One
// writer at a time: no WriteMessage or second NextWriter until Close.
// Control frames (pongs the reader answers, Ping, Close) may go out between
// the message's frames.
func (c *Conn) NextWriter(mt MessageType) (io.WriteCloser, error) {
	if mt != TextMessage && mt != BinaryMessage {
		return nil, errors.New("websocket: NextWriter takes text or binary")
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	switch {
	case c.writer.open:
		return nil, errWriterOpen
	case c.closeSent:
		return nil, ErrClosed
	case c.werr != nil:
		return nil, c.werr
	}
	w := &c.writer
	w.open, w.op, w.started, w.compressed = true, ws.Opcode(mt), false, c.wcompress
	if w.compressed {
		c.compressor.Begin(c.zbuf[:0])
	} else {
		w.buf = c.zbuf[:0]
	}
	return w, nil
}

// frameSize is the payload of each streamed frame.
func (w *messageWriter) frameSize() int { return max(w.c.wsize-ws.MaxHeaderLen, 512) }

func (w *messageWriter) send(fin bool, p []byte) error {
	op, rsv := w.op, uint8(0)
	if w.started {
		op = ws.OpContinuation
	} else if w.compressed {
		rsv = ws.RSV1
	}
	w.started = true
	c := w.c
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closeSent {
		return ErrClosed
	}
	return c.writeFrame(fin, op, rsv, p)
}

func (w *messageWriter) Write(p []byte) (int, error) {
	if !w.open {
		return 0, ErrClosed
	}
	c := w.c
	if w.compressed {
		if _, err := c.compressor.Write(p); err != nil {
			return 0, err
		}
		if z := c.compressor.Buffered(); len(z) > w.frameSize()+4 {
			// Keep the last four bytes: they may begin the tail Finish strips.
			if err := w.send(false, z[:len(z)-4]); err != nil {
				return 0, err
			}
			c.compressor.Drop(len(z) - 4)
		}
		return len(p), nil
	}
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), w.frameSize()-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == w.frameSize() && len(p) > 0 {
			if err := w.send(false, w.buf); err != nil {
				return 0, err
			}
			w.buf = w.buf[:0]
		}
	}
	return n, nil
}

// Close sends the message's last frame and releases the writer.
func (w *messageWriter) Close() error {
	if !w.open {
		return ErrClosed
	}
	c := w.c
	var err error
	if w.compressed {
		var z []byte
		if z, err = c.compressor.Finish(); err == nil {
			err = w.send(true, z)
		}
		c.keepZ(z)
	} else {
		err = w.send(true, w.buf)
		c.keepZ(w.buf)
		w.buf = nil
	}
	w.open = false
	return err
}

// ---- closing ----

// Close runs the closing handshake with code 1000: see CloseWith.
func (c *Conn) Close() error { return c.CloseWith(ws.CloseNormal, "") }

// CloseWith sends a close frame with code and reason, waits up to the close
// timeout (Options.CloseTimeout) for the peer's close frame, and closes the
// connection. If no other goroutine is reading it reads (and discards
// messages) itself; otherwise it waits for that reader to see the end.
func (c *Conn) CloseWith(code int, reason string) error {
	c.sendClose(code, reason)
	if c.rmu.TryLock() {
		if c.rerr == nil {
			c.nc.SetReadDeadline(time.Now().Add(c.closeTimeout))
			for {
				if _, _, err := c.nextReader(); err != nil {
					break
				}
			}
		}
		c.rmu.Unlock()
	} else {
		t := time.NewTimer(c.closeTimeout)
		select {
		case <-c.readEnded:
		case <-t.C:
		}
		t.Stop()
	}
	return c.closeConn()
}

// closeConn closes the underlying connection once and releases pooled
// state.
func (c *Conn) closeConn() error {
	c.closeOnce.Do(func() {
		if c.pinger != nil {
			c.pinger.Stop()
		}
		c.closeErr = c.nc.Close()
	})
	return c.closeErr
}

// write writes b to the connection, counted in the server's BytesOut.
func (c *Conn) write(b []byte) error {
	n, err := c.nc.Write(b)
	countOut(c.cnt, n)
	return err
}

// countIn adds n to c's bytes in (the server's Stats.BytesIn;
// takeover.Bytes); c may be nil (no statistics).
func countIn(c *takeover.Counters, n int) {
	if c != nil && n > 0 {
		c.In.Add(uint64(n))
	}
}

// countOut adds n to c's bytes out; c may be nil (no statistics).
func countOut(c *takeover.Counters, n int) {
	if c != nil && n > 0 {
		c.Out.Add(uint64(n))
	}
}
