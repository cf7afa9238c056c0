package client

// HTTP/2 connections (RFC 9113), client role. One h2Conn multiplexes the
// requests of many goroutines on one connection to an origin: a reader
// goroutine takes frames off the connection (internal/h2's frame reader)
// and hands each stream its head, data and trailers; a writer goroutine
// writes what requests and the reader queue in the connection's output
// buffer, many frames per write. Everything a server can make the client
// hold is bounded per connection: the header list (h2MaxHeaderList), the
// HPACK table (the default 4 KiB, never raised), the data buffered for
// streams nobody reads (the connection window, h2ConnWindow), the control
// frames queued in answer to the server's (h2MaxControl per write).

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/textproto"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/h2"
	"golang.org/x/net/http2/hpack"
)

const (
	// h2StreamWindow is the receive window of each stream (sent as
	// SETTINGS_INITIAL_WINDOW_SIZE): the most response body bytes the
	// client buffers for a stream its caller does not read.
	h2StreamWindow = 256 << 10
	// h2ConnWindow is the connection's receive window: the most response
	// body bytes buffered for all its streams together.
	h2ConnWindow = 1 << 20
	// h2MaxHeaderList bounds a response's header list (and trailers) as
	// HPACK counts it, name + value + 32 per field (sent as
	// SETTINGS_MAX_HEADER_LIST_SIZE).
	h2MaxHeaderList = 64 << 10
	// h2MaxOutput bounds the frames queued for writing; requests wait for
	// the writer beyond it.
	h2MaxOutput = 256 << 10
	// h2MaxControl bounds the control frames (SETTINGS and PING
	// acknowledgements) the server makes the client queue between two
	// writes: a server flooding them without reading is sent
	// GOAWAY(ENHANCE_YOUR_CALM) and the connection ends.
	h2MaxControl = 64 << 10
	// h2DefaultMaxStreams is the number of concurrent streams assumed
	// until the server's SETTINGS say otherwise.
	h2DefaultMaxStreams = 100
	// h2MaxIntern bounds the strings a connection keeps for its HPACK
	// encoder's dynamic table (field names and values sent before).
	h2MaxIntern = 512
	// h2MaxEmptyFrames bounds the frames that carry nothing (empty DATA
	// without END_STREAM, empty CONTINUATION) a connection accepts.
	h2MaxEmptyFrames = 1024
)

// h2Conn is one HTTP/2 connection.
type h2Conn struct {
	p   *hostPool
	nc  net.Conn
	tls *tls.ConnectionState

	// Reader goroutine only.
	fr       *h2.FrameReader
	hdec     *h2.HeaderDecoder
	emitFn   func(name, value []byte) // c.emit, bound once
	block    []byte                   // the header block being received
	fraw     []byte                   // its decoded fields' bytes
	fields   []fieldRef               // its fields, in fraw
	listLeft int                      // header list bytes still allowed
	tooBig   bool                     // the block went over h2MaxHeaderList
	badField bool                     // the block holds a malformed field
	empty    int                      // frames that carried nothing

	lastRead atomic.Int64 // unix nanoseconds of the last frame read

	mu        sync.Mutex
	room      *sync.Cond // signalled when the writer takes the output
	streams   map[uint32]*h2Stream
	free      []*h2Stream
	nextID    uint32
	active    int    // streams open, reserved or not yet released
	maxActive uint32 // the server's SETTINGS_MAX_CONCURRENT_STREAMS
	peerWin   int32  // the server's SETTINGS_INITIAL_WINDOW_SIZE
	peerFrame int    // the server's SETTINGS_MAX_FRAME_SIZE
	sendWin   int64  // connection send window
	recvAck   int    // connection bytes received and not yet granted back
	acked     int    // connection bytes consumed, not yet sent in WINDOW_UPDATE
	endStream bool   // the HEADERS frame of the block being read ends its stream
	num       []byte // scratch for decimal field values
	goAway    bool   // the server sent GOAWAY: no new streams
	lastID    uint32 // from GOAWAY
	dead      bool
	err       error // why the connection ended
	out       []byte
	spare     []byte
	ctl       int // control bytes queued since the last write
	henc      *hpack.Encoder
	hbuf      hpackBuf
	intern    map[string]string
	lower     []byte
	pingOut   bool
	pingAt    time.Time
	idleAt    time.Time
	timer     *time.Timer // keep-alive PING and idle close
	wake      chan struct{}
	closeOnce sync.Once
	// settings is closed when the server's first SETTINGS arrive (or the
	// connection ends): until then the connection carries only the
	// request that dialed it, as the server's stream limit is unknown.
	settings    chan struct{}
	gotSettings bool
}

// hpackBuf is the io.Writer the HPACK encoder writes a block to.
type hpackBuf struct{ b []byte }

func (w *hpackBuf) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// newH2Conn starts HTTP/2 on nc, just dialed (after TLS with ALPN h2, or
// plain for h2c with prior knowledge): it queues the preface and the
// client's settings and starts the reader and writer.
func newH2Conn(p *hostPool, nc net.Conn, ts *tls.ConnectionState) *h2Conn {
	c := &h2Conn{
		p: p, nc: nc, tls: ts,
		streams:   make(map[uint32]*h2Stream),
		nextID:    1,
		maxActive: h2DefaultMaxStreams,
		peerWin:   65535,
		peerFrame: h2.DefaultMaxFrameSize,
		sendWin:   65535,
		intern:    make(map[string]string),
		wake:      make(chan struct{}, 1),
		settings:  make(chan struct{}),
		out:       make([]byte, 0, 4<<10),
		spare:     make([]byte, 0, 4<<10),
	}
	c.room = sync.NewCond(&c.mu)
	c.fr = h2.NewFrameReader(nc, h2.DefaultMaxFrameSize)
	c.hdec = h2.NewHeaderDecoder(4096, 2*h2MaxHeaderList)
	c.emitFn = c.emit
	c.henc = hpack.NewEncoder(&c.hbuf)
	c.lastRead.Store(time.Now().UnixNano())
	c.out = append(c.out, h2.ClientPreface...)
	c.out = h2.AppendSettings(c.out, []h2.Setting{
		{ID: h2.SettingEnablePush, Val: 0},
		{ID: h2.SettingInitialWindowSize, Val: h2StreamWindow},
		{ID: h2.SettingMaxHeaderListSize, Val: h2MaxHeaderList},
	})
	c.out = h2.AppendWindowUpdate(c.out, 0, h2ConnWindow-65535)
	c.idleAt = time.Now()
	c.timer = time.AfterFunc(c.tick(), c.onTimer)
	c.wakeWriter()
	go c.writeLoop()
	go c.readLoop()
	return c
}

// tick is the period of the connection's timer: the keep-alive interval,
// or the idle timeout when keep-alive is off.
func (c *h2Conn) tick() time.Duration {
	if d := c.p.c.HTTP2ReadIdleTimeout; d > 0 {
		return d
	}
	return c.p.idleTimeout()
}

func (c *h2Conn) pingTimeout() time.Duration {
	if d := c.p.c.HTTP2PingTimeout; d > 0 {
		return d
	}
	return DefaultHTTP2PingTimeout
}

// onTimer closes the connection when it has been idle (no stream) for the
// idle timeout, and, with HTTP2ReadIdleTimeout, sends a PING when nothing
// was read for that long, closing the connection when no frame arrives
// within HTTP2PingTimeout after it.
func (c *h2Conn) onTimer() {
	now := time.Now()
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return
	}
	if c.active == 0 && now.Sub(c.idleAt) >= c.p.idleTimeout() {
		c.mu.Unlock()
		c.close(errH2Idle)
		return
	}
	next := c.tick()
	if d := c.p.c.HTTP2ReadIdleTimeout; d > 0 {
		last := time.Unix(0, c.lastRead.Load())
		switch {
		case c.pingOut && last.Before(c.pingAt) && now.Sub(c.pingAt) >= c.pingTimeout():
			c.mu.Unlock()
			c.close(ErrHTTP2PingTimeout)
			return
		case c.pingOut && last.Before(c.pingAt):
			next = c.pingAt.Add(c.pingTimeout()).Sub(now)
		case now.Sub(last) >= d:
			c.pingOut, c.pingAt = true, now
			c.out = h2.AppendPing(c.out, false, h2PingData)
			c.wakeWriter()
			next = c.pingTimeout()
		default:
			c.pingOut = false
			next = d - now.Sub(last)
		}
	}
	c.timer.Reset(next)
	c.mu.Unlock()
}

var h2PingData = [8]byte{'r', 'i', 'p', 't', 'i', 'd', 'e', 'c'}

var errH2Idle error = errorString("client: idle HTTP/2 connection closed")

// wakeWriter tells the writer that output is queued. It runs with c.mu
// held (or before the connection's goroutines start): close closes the
// channel only after marking the connection dead under c.mu.
func (c *h2Conn) wakeWriter() {
	if c.dead {
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// writeLoop writes the queued output until the connection ends.
func (c *h2Conn) writeLoop() {
	for range c.wake {
		// Let the goroutines that are ready queue their frames too: one
		// write then carries many requests (a write per request was most
		// of the client's CPU under load).
		runtime.Gosched()
		c.mu.Lock()
		for len(c.out) > 0 && !c.dead {
			buf := c.out
			c.out, c.spare = c.spare[:0], nil
			c.ctl = 0
			c.room.Broadcast()
			c.mu.Unlock()
			_, err := c.nc.Write(buf)
			c.mu.Lock()
			c.spare = buf[:0]
			if err != nil {
				c.mu.Unlock()
				c.close(err)
				c.mu.Lock()
			}
		}
		dead := c.dead
		c.mu.Unlock()
		if dead {
			return
		}
	}
}

// waitRoom waits, with c.mu held, until the output has room or the
// connection is dead.
func (c *h2Conn) waitRoom() {
	for len(c.out) > h2MaxOutput && !c.dead {
		c.room.Wait()
	}
}

// control queues a control frame the server caused; false (the
// connection ended) past h2MaxControl queued bytes.
func (c *h2Conn) controlLocked(n int) bool {
	c.ctl += n
	if c.ctl <= h2MaxControl {
		return true
	}
	c.out = h2.AppendGoAway(c.out, 0, h2.ErrCodeEnhanceYourCalm)
	c.wakeWriter()
	return false
}

// close ends the connection: every stream fails with err (unless it has
// its response already and only the body is lost: then the body fails).
func (c *h2Conn) close(err error) {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.dead = true
		c.err = err
		if !c.gotSettings {
			c.gotSettings = true
			close(c.settings)
		}
		_, protoErr := err.(*HTTP2Error)
		for _, st := range c.streams {
			// Lost to an I/O error or a close, not to the server's
			// protocol error: the request may be sent again.
			st.connLost = !protoErr
			st.failLocked(c.streamErr(st, err))
		}
		c.room.Broadcast()
		c.mu.Unlock()
		c.timer.Stop()
		c.nc.Close()
		close(c.wake)
		c.p.dropH2(c)
		c.p.releaseSlot()
	})
}

// streamErr is the error a stream gets when the connection ends with err:
// one the server did not process after GOAWAY is retried.
func (c *h2Conn) streamErr(st *h2Stream, err error) error {
	if c.goAway && st.id > c.lastID {
		return errH2Unprocessed
	}
	return err
}

// reserve takes a stream slot if the connection can open one more.
func (c *h2Conn) reserve() bool {
	ok, _ := c.tryReserve()
	return ok
}

// tryReserve takes a stream slot if the connection can open one more; if
// it cannot only because the server's first SETTINGS have not arrived, it
// returns the channel closed when they do. Both are decided under one
// lock: checking for the settings after a failed reserve let them arrive
// in between, and the pool then dialed a second connection for a request
// the first had room for (TestH2PickNoDialRace).
func (c *h2Conn) tryReserve() (bool, chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead || c.goAway || uint32(c.active) >= c.maxActive || c.nextID >= 1<<31-1 {
		return false, nil
	}
	if !c.gotSettings && c.active > 0 {
		return false, c.settings
	}
	c.active++
	return true, nil
}

// release frees a stream slot; an idle connection after GOAWAY closes.
func (c *h2Conn) releaseLocked() {
	c.active--
	if c.active == 0 {
		c.idleAt = time.Now()
		if c.goAway && !c.dead {
			go c.close(ErrServerClosed)
		}
	}
}

// readLoop reads frames until the connection ends.
func (c *h2Conn) readLoop() {
	defer c.fr.Release()
	var f h2.Frame
	for {
		err := c.fr.ReadFrame(&f)
		if err == nil {
			c.lastRead.Store(time.Now().UnixNano())
			err = c.onFrame(&f)
		}
		if err != nil {
			var ce connErr
			code, _, ok := h2.ErrorCode(err)
			if errors.As(err, &ce) {
				code, ok = h2.ErrCode(ce), true
			}
			if ok {
				c.mu.Lock()
				c.out = h2.AppendGoAway(c.out, 0, code)
				c.wakeWriter()
				c.mu.Unlock()
				err = &HTTP2Error{Code: uint32(code), GoAway: true}
				c.drainWriter()
			} else if err == io.EOF {
				err = ErrServerClosed
			}
			c.close(err)
			return
		}
	}
}

// drainWriter gives the writer a moment to send a final GOAWAY.
func (c *h2Conn) drainWriter() {
	c.nc.SetWriteDeadline(time.Now().Add(time.Second))
	for range 100 {
		c.mu.Lock()
		done := len(c.out) == 0 || c.dead
		c.mu.Unlock()
		if done {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// connErr is a connection error (RFC 9113 §5.4.1) the client detected.
type connErr h2.ErrCode

func (e connErr) Error() string { return "client: HTTP/2 connection error " + h2.ErrCode(e).String() }

// onFrame handles one frame.
func (c *h2Conn) onFrame(f *h2.Frame) error {
	switch f.Type {
	case h2.FrameData:
		return c.onData(f)
	case h2.FrameHeaders, h2.FrameContinuation:
		return c.onHeaderFrame(f)
	case h2.FrameRSTStream:
		c.mu.Lock()
		if st := c.streams[f.StreamID]; st != nil && f.Code == h2.ErrCodeNo && st.eof {
			// The response is complete and the server wants no more of
			// the request (RFC 9113 §8.1): the request body stops, the
			// response stands.
			c.forgetLocked(st)
			st.signal()
		} else if st != nil {
			err := error(&HTTP2Error{Code: uint32(f.Code), Remote: true})
			if f.Code == h2.ErrCodeRefusedStream {
				err = errH2Unprocessed
			}
			st.failLocked(err)
			c.forgetLocked(st)
		} else if f.StreamID >= c.nextID {
			c.mu.Unlock()
			return connErr(h2.ErrCodeProtocol)
		}
		c.mu.Unlock()
	case h2.FrameSettings:
		return c.onSettings(f)
	case h2.FramePing:
		if f.Ack {
			return nil
		}
		c.mu.Lock()
		ok := c.controlLocked(17)
		if ok {
			c.out = h2.AppendPing(c.out, true, f.Ping)
			c.wakeWriter()
		}
		c.mu.Unlock()
		if !ok {
			return connErr(h2.ErrCodeEnhanceYourCalm)
		}
	case h2.FrameGoAway:
		c.mu.Lock()
		if !c.goAway || f.N < c.lastID {
			c.lastID = f.N
		}
		c.goAway = true
		for _, st := range c.streams {
			if st.id > c.lastID {
				st.failLocked(errH2Unprocessed)
				c.forgetLocked(st)
			}
		}
		idle := c.active == 0
		c.mu.Unlock()
		c.p.dropH2(c) // no new streams here
		if f.Code != h2.ErrCodeNo {
			return &HTTP2Error{Code: uint32(f.Code), GoAway: true, Remote: true}
		}
		if idle {
			return ErrServerClosed
		}
	case h2.FrameWindowUpdate:
		return c.onWindowUpdate(f)
	}
	// PRIORITY, PRIORITY_UPDATE and unknown types are ignored (§5.5).
	return nil
}

// forgetLocked removes st from the connection's streams; its slot is freed
// when its owner releases it.
func (c *h2Conn) forgetLocked(st *h2Stream) {
	if c.streams[st.id] == st {
		delete(c.streams, st.id)
	}
}

func (c *h2Conn) onSettings(f *h2.Frame) error {
	if f.Ack {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	defer func() {
		if !c.gotSettings {
			c.gotSettings = true
			close(c.settings)
		}
	}()
	for i := range f.NumSettings() {
		s := f.Setting(i)
		if err := s.Valid(); err != nil {
			return err
		}
		switch s.ID {
		case h2.SettingMaxConcurrentStreams:
			c.maxActive = s.Val
		case h2.SettingInitialWindowSize:
			delta := int64(s.Val) - int64(c.peerWin)
			for _, st := range c.streams {
				if st.sendWin+delta > h2.MaxWindow {
					return connErr(h2.ErrCodeFlowControl)
				}
				st.sendWin += delta
				st.signal()
			}
			c.peerWin = int32(s.Val)
		case h2.SettingMaxFrameSize:
			c.peerFrame = int(s.Val)
		case h2.SettingHeaderTableSize:
			c.henc.SetMaxDynamicTableSizeLimit(min(s.Val, 4096))
		}
	}
	if !c.controlLocked(9) {
		return connErr(h2.ErrCodeEnhanceYourCalm)
	}
	c.out = h2.AppendSettingsAck(c.out)
	c.wakeWriter()
	return nil
}

func (c *h2Conn) onWindowUpdate(f *h2.Frame) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.StreamID == 0 {
		if c.sendWin+int64(f.N) > h2.MaxWindow {
			return connErr(h2.ErrCodeFlowControl)
		}
		c.sendWin += int64(f.N)
		for _, st := range c.streams {
			if st.wantWin {
				st.signal()
			}
		}
		return nil
	}
	st := c.streams[f.StreamID]
	if st == nil {
		return nil
	}
	if st.sendWin+int64(f.N) > h2.MaxWindow {
		st.failLocked(&HTTP2Error{Code: uint32(h2.ErrCodeFlowControl)})
		c.resetLocked(st, h2.ErrCodeFlowControl)
		return nil
	}
	st.sendWin += int64(f.N)
	st.signal()
	return nil
}

// resetLocked sends RST_STREAM for st and forgets it.
func (c *h2Conn) resetLocked(st *h2Stream, code h2.ErrCode) {
	if !c.dead {
		c.out = h2.AppendRSTStream(c.out, st.id, code)
		c.wakeWriter()
	}
	c.forgetLocked(st)
}

// onData hands a DATA frame's bytes to its stream, within the windows the
// client granted.
func (c *h2Conn) onData(f *h2.Frame) error {
	n := int(f.Length) // padding counts against the windows (§6.9.1)
	if n == 0 && !f.EndStream {
		if c.empty++; c.empty > h2MaxEmptyFrames {
			return connErr(h2.ErrCodeEnhanceYourCalm)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.StreamID >= c.nextID {
		return connErr(h2.ErrCodeProtocol)
	}
	c.recvAck += n
	if c.recvAck > h2ConnWindow {
		return connErr(h2.ErrCodeFlowControl)
	}
	st := c.streams[f.StreamID]
	if st == nil || st.eof {
		// A stream reset or done: its bytes are given back at once.
		c.grantConnLocked(n)
		if st != nil {
			return connErr(h2.ErrCodeStreamClosed)
		}
		return nil
	}
	if !st.headDone {
		c.grantConnLocked(n)
		st.failLocked(errH2Malformed)
		c.resetLocked(st, h2.ErrCodeProtocol)
		return nil
	}
	if len(st.buf)-st.off+st.unacked+n > h2StreamWindow {
		return connErr(h2.ErrCodeFlowControl)
	}
	if padded := n - len(f.Data); padded > 0 {
		st.unacked += padded // given back with the data
	}
	st.buf = append(st.buf, f.Data...)
	st.got += int64(len(f.Data))
	if f.EndStream {
		st.endLocked()
	}
	st.signal()
	return nil
}

// grantConnLocked gives n bytes back to the connection window.
func (c *h2Conn) grantConnLocked(n int) {
	c.recvAck -= n
	c.acked += n
	if c.acked >= h2ConnWindow/4 && !c.dead {
		c.out = h2.AppendWindowUpdate(c.out, 0, uint32(c.acked))
		c.acked = 0
		c.wakeWriter()
	}
}

// onHeaderFrame collects a HEADERS or CONTINUATION frame's fragment; at
// the end of the block it is decoded and the stream gets its head or
// trailers.
func (c *h2Conn) onHeaderFrame(f *h2.Frame) error {
	if f.Type == h2.FrameHeaders {
		c.block = c.block[:0]
		c.endStream = f.EndStream
	} else if len(f.Data) == 0 && !f.Flags.Has(h2.FlagEndHeaders) {
		if c.empty++; c.empty > h2MaxEmptyFrames {
			return connErr(h2.ErrCodeEnhanceYourCalm)
		}
	}
	// A block far past the limit ends the connection (the CONTINUATION
	// flood): it is not collected further.
	if len(c.block)+len(f.Data) > 2*h2MaxHeaderList {
		return connErr(h2.ErrCodeEnhanceYourCalm)
	}
	c.block = append(c.block, f.Data...)
	if !f.Flags.Has(h2.FlagEndHeaders) {
		return nil
	}
	c.fraw, c.fields = c.fraw[:0], c.fields[:0]
	c.listLeft, c.tooBig, c.badField = h2MaxHeaderList, false, false
	err := c.hdec.Decode(c.block, c.emitFn)
	if cap(c.block) > 16<<10 {
		c.block = nil // a large block's buffer is not kept
	}
	if err != nil {
		return err
	}
	c.mu.Lock()
	if f.StreamID >= c.nextID || f.StreamID%2 == 0 {
		c.mu.Unlock()
		return connErr(h2.ErrCodeProtocol)
	}
	st := c.streams[f.StreamID]
	if st == nil {
		c.mu.Unlock()
		return nil // a stream reset: the block only updated the table
	}
	interim, err := st.onBlockLocked(c)
	if err != nil {
		st.failLocked(err)
		c.resetLocked(st, h2.ErrCodeProtocol)
	}
	var hook func(int, textproto.MIMEHeader) error
	if interim != 0 {
		hook = got1xxHook(st.ctx)
	}
	c.mu.Unlock()
	if hook != nil {
		// The caller's hook sees the interim response before the reader
		// goes on (as in net/http); an error from it fails the request.
		h := make(textproto.MIMEHeader, len(c.fields)-1)
		for i := 1; i < len(c.fields); i++ {
			name, value := c.fieldAt(i)
			k := textproto.CanonicalMIMEHeaderKey(string(name))
			h[k] = append(h[k], string(value))
		}
		if err := hook(interim, h); err != nil {
			c.mu.Lock()
			if c.streams[f.StreamID] == st {
				st.failLocked(err)
				c.resetLocked(st, h2.ErrCodeCancel)
			}
			c.mu.Unlock()
			return nil
		}
	}
	if interim == 100 {
		// The body waiting for it goes (after the hook saw the 100).
		c.mu.Lock()
		if c.streams[f.StreamID] == st {
			st.got100 = true
			st.signal()
		}
		c.mu.Unlock()
	}
	return nil
}

// fieldRef is a decoded field: its name and value in h2Conn.fraw.
type fieldRef struct{ off, nameLen, valueLen int }

// field returns the i'th field of the block just decoded.
func (c *h2Conn) fieldAt(i int) (name, value []byte) {
	r := c.fields[i]
	return c.fraw[r.off : r.off+r.nameLen], c.fraw[r.off+r.nameLen : r.off+r.nameLen+r.valueLen]
}

// emit takes one decoded field (the decoder's emit function), within
// h2MaxHeaderList as HPACK counts a list (RFC 7541 §4.1).
func (c *h2Conn) emit(name, value []byte) {
	size := len(name) + len(value) + 32
	if c.tooBig || size > c.listLeft {
		c.tooBig = true
		return
	}
	c.listLeft -= size
	if !h1.ValidHeaderValue(value) || len(name) == 0 {
		c.badField = true
	}
	c.fields = append(c.fields, fieldRef{len(c.fraw), len(name), len(value)})
	c.fraw = append(c.fraw, name...)
	c.fraw = append(c.fraw, value...)
}

// str returns b as a string the HPACK encoder may keep in its dynamic
// table, and whether it may: strings sent before are kept (up to
// h2MaxIntern), others are passed without a copy, to be sent without
// indexing.
func (c *h2Conn) str(b []byte) (string, bool) {
	if s, ok := c.intern[string(b)]; ok {
		return s, true
	}
	if len(c.intern) < h2MaxIntern && len(b) <= 256 {
		s := string(b)
		c.intern[s] = s
		return s, true
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), false
}

// field encodes one header field into c.hbuf.
func (c *h2Conn) field(name, value []byte) {
	n, nok := c.str(name)
	v, vok := c.str(value)
	c.henc.WriteField(hpack.HeaderField{Name: n, Value: v, Sensitive: !nok || !vok})
}

// fieldLower encodes a field whose name may have upper-case letters.
func (c *h2Conn) fieldLower(name, value []byte) {
	c.lower = c.lower[:0]
	for _, ch := range name {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		c.lower = append(c.lower, ch)
	}
	c.field(c.lower, value)
}

// fieldInt encodes a field with a decimal value.
func (c *h2Conn) fieldInt(name string, v int64) {
	c.num = strconv.AppendInt(c.num[:0], v, 10)
	c.field(unsafe.Slice(unsafe.StringData(name), len(name)), c.num)
}

// ctxDone is a context's Done channel, nil for one never done.
func ctxDone(ctx context.Context) <-chan struct{} {
	if ctx == nil {
		return nil
	}
	return ctx.Done()
}
