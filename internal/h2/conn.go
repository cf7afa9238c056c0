// Package h2 is riptide's HTTP/2 server connection engine (RFC 9113):
// frames, the stream table, flow control, HPACK, the writer, PING and
// GOAWAY, the limits and the attack defences. It knows no Server, Ctx or
// net/http type: the root package adapts it (h2.go) and serves each
// stream through a [Handler] (the native Ctx door, or the compat door).
//
// Everything is here: the frame reader and appenders (frame.go), the
// connection state machine, the stream table, header blocks and HPACK
// (headers.go, with golang.org/x/net/http2/hpack), flow control
// (flow.go), SETTINGS, PING, GOAWAY, RST_STREAM, and the writer
// (write.go). It imports no net/http package (layering_test.go).
//
// Goroutines: the connection's own goroutine reads and processes frames;
// one writer goroutine writes batches of frames; each stream's handler runs
// on a pooled worker goroutine (stream.go). All connection and stream
// state is guarded by Conn.mu. On an engine that offers a [Parker] (the
// event loop), an idle connection parks: neither goroutine nor any buffer
// while no stream is open (park.go).
//
// The client role (package client's HTTP/2) shares the frame reader and
// appenders and has its own HPACK decoder into reused bytes (client.go,
// hpackdec.go); it drives no Conn.
package h2

import (
	"crypto/tls"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riptide-http/riptide/internal/netx"
	"github.com/riptide-http/riptide/internal/workq"
	"golang.org/x/net/http2/hpack"
)

// Receive windows granted to clients when HTTP2Config leaves them zero.
const (
	h2DefaultStreamWindow = 1 << 20
	h2DefaultConnWindow   = 1 << 20
	h2InitialWindow       = 65535 // RFC 9113 §6.9.2
	h2DefaultMaxFrame     = 16 << 10
	h2HeaderTableSize     = 4096
	// h2HeaderListOverhead is added to MaxHeaderBytes for
	// SETTINGS_MAX_HEADER_LIST_SIZE: HPACK counts 32 bytes per field on top
	// of its name and value (RFC 9113 §6.5.2); this allows ten fields.
	h2HeaderListOverhead = 10 * 32
	// h2RefusedLimit is how many streams (times MaxConcurrentStreams) a
	// client may have refused because handlers of streams it no longer
	// counts as open still hold the slots (see h2HandlerLimit), before it
	// is sent GOAWAY(ENHANCE_YOUR_CALM): a client that resets streams and
	// opens new ones at once (rapid reset, CVE-2023-44487) finds its new
	// streams refused while the handlers of the reset ones still run, and
	// then the connection closed. Refusals of a client that merely opens
	// more than MaxConcurrentStreams do not count, and each stream served
	// to its end takes one refusal off the count (Conn.forgive).
	h2RefusedLimit = 4
	// h2HandlerLimit bounds the handlers a connection runs at once, times
	// MaxConcurrentStreams. SETTINGS_MAX_CONCURRENT_STREAMS counts only
	// the streams open or half-closed (RFC 9113 §5.1.2): one whose
	// response went out with END_STREAM after its request ended is closed,
	// and the client may open the next at once, though the handler may
	// not have returned yet. So the limit is checked on the streams the
	// client counts (the table less Conn.ended), and handlers are bounded
	// apart: those of open or reset streams by MaxConcurrentStreams, as
	// before (a reset stream's handler is the rapid reset's lever), all of
	// them by h2HandlerLimit times it, so that those of closed streams
	// have a margin as large as the limit. x/net/http2 likewise frees the
	// stream when END_STREAM is written and bounds handlers apart (at
	// MaxConcurrentStreams, queueing up to 4 times as many streams before
	// ENHANCE_YOUR_CALM); h2o queues requests beyond its per-connection
	// bound rather than refusing them. riptide refuses rather than queueing
	// (no accepted stream waits for a handler), and counts those
	// refusals toward h2RefusedLimit.
	h2HandlerLimit = 2
	// h2MaxSettingsPerFrame is the most settings one SETTINGS frame may
	// carry; more is answered with GOAWAY(ENHANCE_YOUR_CALM). RFC 9113
	// defines six; x/net/http2 hangs up beyond 100 too.
	h2MaxSettingsPerFrame = 100
	// h2CloseLinger bounds the final write and the read-drain when a
	// connection is closed, so that a GOAWAY is not lost to a TCP reset.
	h2CloseLinger = time.Second
)

// Conn is one HTTP/2 connection.
type Conn struct {
	cfg *Config
	nc  net.Conn
	br  h2ReadBuf // the socket's reads (read.go)
	fr  frameReader
	// tls is the TLS state, made on the first Stream.TLS (tlsState):
	// an idle connection whose handlers never asked keeps none.
	tls atomic.Pointer[tls.ConnectionState]

	remoteAddr string
	localAddr  net.Addr

	// Fixed at the start: what the server advertised.
	maxStreams   uint32
	maxFrame     uint32 // SETTINGS_MAX_FRAME_SIZE
	streamWindow int32  // SETTINGS_INITIAL_WINDOW_SIZE
	connWindow   int32  // connection receive window kept granted

	mu   sync.Mutex
	cond sync.Cond // broadcast on any change a waiter may need (windows, data, output drained, resets, death)
	// streams is the stream table, lent with the buffers (hc.bufs): nil
	// while parked (none is open then) and once over.
	streams map[uint32]*Stream
	maxID   uint32 // highest client stream ID opened
	running int    // streams whose handler runs
	// ended counts the streams in the table that are closed to the client
	// (request and response both ended) while their handler still runs:
	// not counted against MaxConcurrentStreams (h2HandlerLimit).
	ended int
	// resetRefused counts the streams refused because handlers of streams
	// the client no longer counts as open still hold the slots
	// (h2RefusedLimit).
	resetRefused int
	// ctlQueued is the bytes of peer-caused control frames queued since
	// the writer last took the output (h2MaxControlBytes, write.go).
	ctlQueued int

	peerInitWindow int32
	peerMaxFrame   uint32
	sendWindow     int64 // connection send window
	recvWindow     int64 // connection bytes the client may still send
	recvUnacked    int64 // connection bytes consumed, not yet granted back

	// lingering counts the streams whose response is complete while the
	// client still sends (half-closed local; see handlerDone).
	lingering int

	// The header block being read (headers.go); reader goroutine only.
	hdec  *hpack.Decoder
	block *h2Block // in bufs (park.go)

	out  []byte
	hbuf h2ByteWriter
	enc  *hpackEncoder
	// encUpdate: the encoder may owe a dynamic table size update, which
	// must begin the next header block, so that block's first field goes
	// through it (hc.writeField), not encodeHead's shortcuts.
	encUpdate bool

	goAwaySent bool
	closing    bool // no new streams; close once no handler runs
	// goAwayAfterFirst: opened while draining; GOAWAY once its first
	// stream has started (register in h2.go).
	goAwayAfterFirst bool
	dead             bool // the connection is over: waits fail, the writer flushes and stops
	werr             error
	idle             *time.Timer
	ping             *h2Ping // keepalive (ping.go); nil when off

	// writeReady wakes the writer; lent with the buffers (hc.bufs).
	writeReady chan struct{}
	// writerOn: the writer goroutine runs (it clears it, and broadcasts,
	// when it ends); writing: it is writing a batch, hc.mu released.
	writerOn bool
	writing  bool
	wbuf     []byte // the batch being written (writer only)

	// Parking (park.go): parker is the engine's seam (nil: never parks);
	// parking is set while the writer is told to stop and until the
	// connection resumes, when output goes through parker.Wake; bufs
	// holds the working buffers while the connection is served;
	// wantPark: the socket reader found nothing to read and the
	// connection quiet (reading goroutine only).
	parker   Parker
	parking  bool
	bufs     *h2ConnBufs
	wantPark bool

	// Fleet rebalancing (MaxConnAge, MaxRequestsPerConn): the timer that
	// sends GOAWAY at the connection's age, and the streams opened so far.
	age      *time.Timer
	nstreams int

	// Statistics: the socket reader that counts bytes in, and the
	// counter of bytes out (nil: not counted).
	cr       h2CountingReader
	bytesOut *atomic.Uint64

	// HTTP2Config.InlineHandlers (native door only). inlineQ holds the
	// streams to run on the reading goroutine once the current frame is
	// processed; readOver is set there when reading has ended. Both are
	// touched only by the reading goroutine.
	inline   bool
	inlineQ  []*Stream
	readOver bool

	// Streams waiting for a worker (hc.mu), with the spare worker on its
	// way (workq.Queue). dispatchDue (reading goroutine only): streams
	// were queued since the last dispatchQueued.
	runQ        workq.Queue[*Stream]
	dispatchDue bool
}

// h2CountingReader reads the connection's socket, after rest (its first
// bytes, already read and counted), counting the bytes in its shard
// (Stats.BytesIn: every frame) unless n is nil; with hc set, the
// connection may park and it reads through hc.parkRead.
type h2CountingReader struct {
	nc   net.Conn
	n    *atomic.Uint64
	hc   *Conn
	rest []byte
}

func (r *h2CountingReader) Read(p []byte) (int, error) {
	if len(r.rest) > 0 {
		n := copy(p, r.rest)
		if r.rest = r.rest[n:]; len(r.rest) == 0 {
			r.rest = nil
		}
		return n, nil
	}
	var n int
	var err error
	if r.hc != nil {
		n, err = r.hc.parkRead(p)
	} else {
		n, err = r.nc.Read(p)
	}
	if n > 0 && r.n != nil {
		r.n.Add(uint64(n))
	}
	return n, err
}

// NewConn prepares a connection for nc whose first bytes (already read
// from it) are rest. bytesIn and bytesOut count the wire bytes (nil: not
// counted; rest is not counted again). cfg is shared, not copied: it must
// not change while the connection lives.
func NewConn(cfg *Config, nc net.Conn, rest []byte, bytesIn, bytesOut *atomic.Uint64) *Conn {
	hc := &Conn{
		cfg:            cfg,
		nc:             nc,
		maxStreams:     cfg.MaxConcurrentStreams,
		streamWindow:   cfg.MaxReceiveBufferPerStream,
		connWindow:     cfg.MaxReceiveBufferPerConnection,
		peerInitWindow: h2InitialWindow,
		peerMaxFrame:   h2DefaultMaxFrame,
		sendWindow:     h2InitialWindow,
		recvWindow:     h2InitialWindow,
		remoteAddr:     nc.RemoteAddr().String(),
		localAddr:      nc.LocalAddr(),
		bytesOut:       bytesOut,
	}
	if hc.maxStreams == 0 {
		hc.maxStreams = DefaultMaxConcurrentStreams
	}
	if hc.streamWindow <= 0 {
		hc.streamWindow = h2DefaultStreamWindow
	}
	if hc.connWindow <= 0 {
		hc.connWindow = h2DefaultConnWindow
	}
	hc.cond.L = &hc.mu
	hc.inline = cfg.InlineHandlers
	hc.enc = newHpackEncoder()
	hc.maxFrame = h2DefaultMaxFrame
	if cfg.MaxReadFrameSize >= h2DefaultMaxFrame && cfg.MaxReadFrameSize <= 1<<24-1 {
		hc.maxFrame = cfg.MaxReadFrameSize
	}
	hc.cr = h2CountingReader{nc: nc, n: bytesIn, rest: rest}
	hc.lendBufs()
	hc.br.init(&hc.cr)
	hc.fr = frameReader{r: &hc.br, max: hc.maxFrame}
	hc.initHeaders()
	return hc
}

// headerListSize is SETTINGS_MAX_HEADER_LIST_SIZE: MaxHeaderBytes plus
// HPACK's per-field overhead for a typical request.
func (hc *Conn) headerListSize() uint32 {
	return uint32(hc.cfg.MaxHeaderBytes + h2HeaderListOverhead)
}

// tlsState is the connection's TLS state (nil without TLS), made once:
// the handshake is over, it does not change.
func (hc *Conn) tlsState() *tls.ConnectionState {
	if cs := hc.tls.Load(); cs != nil {
		return cs
	}
	tc, ok := hc.nc.(*tls.Conn)
	if !ok {
		return nil
	}
	cs := tc.ConnectionState()
	hc.tls.CompareAndSwap(nil, &cs)
	return hc.tls.Load()
}

// queuePreface queues the server's connection preface: its SETTINGS, and
// the connection window beyond the protocol's initial 64 KiB.
func (hc *Conn) queuePreface() {
	set := [...]setting{
		{SettingMaxFrameSize, hc.maxFrame},
		{SettingMaxConcurrentStreams, hc.maxStreams},
		{SettingInitialWindowSize, uint32(hc.streamWindow)},
		{SettingMaxHeaderListSize, hc.headerListSize()},
		{SettingEnableConnectProtocol, 1}, // in the first SETTINGS, where clients look (RFC 8441 §3)
	}
	n := len(set) - 1
	if hc.cfg.EnableConnectProtocol {
		n++
	}
	hc.out = appendSettings(hc.out, set[:n]...)
	if hc.connWindow > h2InitialWindow {
		hc.queueWindowUpdate(0, uint32(hc.connWindow-h2InitialWindow))
		hc.recvWindow = int64(hc.connWindow)
	}
	hc.wakeWriter()
}

// Serve runs the connection until it ends, and closes it. sawPreface: the
// client preface was already read (h2c prior knowledge); up: the request
// of an "Upgrade: h2c", which becomes stream 1. With a Parker (UseParker)
// it returns true, early, when the connection parked: the engine resumes
// it (Resume) and the caller must not touch hc.
func (hc *Conn) Serve(sawPreface bool, up *Upgrade) bool {
	hc.mu.Lock()
	hc.queuePreface()
	if d := hc.cfg.MaxConnAge; d > 0 {
		hc.age = time.AfterFunc(d, hc.Shutdown)
	}
	if up != nil {
		hc.startUpgraded(up)
		hc.streamOpened() // stream 1
	} else {
		hc.armIdle()
	}
	hc.startWriter()
	hc.mu.Unlock()
	if !hc.readPreface(sawPreface) {
		hc.teardown()
		return false
	}
	_ = hc.nc.SetReadDeadline(time.Time{})
	hc.startPing()
	return hc.serveFrames()
}

// serveFrames reads frames until the connection parks (true) or ends
// (false, torn down).
func (hc *Conn) serveFrames() bool {
	if hc.readLoop() {
		return true
	}
	hc.teardown()
	return false
}

// readPreface reads the client preface (unless already read) and checks
// that the first frame is SETTINGS (RFC 9113 §3.4), under the deadline the
// engine armed for the request head.
func (hc *Conn) readPreface(sawPreface bool) bool {
	if !sawPreface {
		var buf [len(h2Preface)]byte
		if _, err := io.ReadFull(&hc.br, buf[:]); err != nil || string(buf[:]) != h2Preface {
			hc.connError(ErrCodeProtocol)
			return false
		}
	}
	var f frame
	if err := hc.fr.readFrame(&f); err != nil {
		hc.frameError(err)
		return false
	}
	if f.Type != FrameSettings || f.ack {
		hc.connError(ErrCodeProtocol)
		return false
	}
	return hc.process(&f)
}

// readLoop reads and processes frames until the connection fails or is
// closed, running inline handlers (HTTP2Config.InlineHandlers) between
// frames; or until it parks (true: hc is no longer the caller's).
func (hc *Conn) readLoop() bool {
	for {
		hc.br.idle = hc.parker != nil && hc.br.Buffered() == 0
		ok := hc.readFrame()
		if len(hc.inlineQ) > 0 {
			hc.runInline() // even at the end: each counts as running
		}
		if !ok || hc.readOver {
			return false
		}
		if hc.wantPark {
			hc.wantPark = false
			if hc.park() {
				return true
			}
		}
	}
}

// readFrame reads and processes one frame (a whole header block counts as
// its frames one by one) and reports whether reading goes on.
func (hc *Conn) readFrame() bool {
	ok := hc.readFrame1()
	if !ok {
		hc.readOver = true
	}
	// New streams go to a worker once the frames already read are
	// processed, and before anything that may block: reading from the
	// socket, or running inline handlers.
	if hc.dispatchDue && (!ok || len(hc.inlineQ) > 0 || !hc.nextFrameBuffered()) {
		hc.mu.Lock()
		send := hc.takeDispatch()
		hc.mu.Unlock()
		if send {
			h2Dispatch(hc)
		}
	}
	return ok
}

// nextFrameBuffered reports whether the next frame is whole in the read
// buffer, so that reading it does not wait for the socket.
func (hc *Conn) nextFrameBuffered() bool {
	n := hc.br.Buffered()
	if n < 9 {
		return false
	}
	b := hc.br.peek(9)
	return n >= 9+(int(b[0])<<16|int(b[1])<<8|int(b[2]))
}

func (hc *Conn) readFrame1() bool {
	var f frame
	if err := hc.fr.readFrame(&f); err != nil {
		if err == errWouldPark {
			hc.wantPark = true // nothing of a frame was read
			return true
		}
		return hc.frameError(err)
	}
	hc.frameRead()
	if f.Type == FrameHeaders || f.Type == FrameContinuation {
		return hc.readHeaderFrame(&f)
	}
	return hc.process(&f)
}

// runInline runs the queued inline streams' handlers, in the order their
// HEADERS arrived, including any queued while one of them ran.
func (hc *Conn) runInline() {
	for i := 0; i < len(hc.inlineQ); i++ {
		st := hc.inlineQ[i]
		hc.inlineQ[i] = nil
		st.serve()
	}
	hc.inlineQ = hc.inlineQ[:0]
}

// frameError handles an error of the frame reader and reports whether
// reading may go on.
func (hc *Conn) frameError(err error) bool {
	switch err := err.(type) {
	case streamError:
		// The reader's one stream error is a WINDOW_UPDATE of 0 (§6.9),
		// which opens no stream: on an idle one it is a connection error
		// (§5.1; §6.4 allows no RST_STREAM there), and the streams below
		// it stay idle.
		hc.mu.Lock()
		defer hc.mu.Unlock()
		if hc.idleStream(err.id) {
			return hc.handleError(connError(ErrCodeProtocol))
		}
		hc.resetStream(err.id, err.code)
		return !hc.dead
	case connError:
		hc.connError(ErrCode(err))
	default:
		// A read error: the client is gone, or a deadline in the past was
		// set to end the connection (see finishIfDone).
	}
	return false
}

// connError sends GOAWAY with code and ends the connection (RFC 9113 §5.4.1).
func (hc *Conn) connError(code ErrCode) {
	hc.mu.Lock()
	if !hc.goAwaySent && !hc.dead {
		hc.queueGoAway(hc.maxID, code)
	}
	hc.killLocked()
	hc.mu.Unlock()
}

// process handles one frame (parsed: its layout is checked) and reports
// whether the connection goes on.
func (hc *Conn) process(f *frame) bool {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.dead {
		return false
	}
	var err error
	switch f.Type {
	case FrameData:
		err = hc.onData(f)
	case FrameSettings:
		err = hc.onSettings(f)
	case FramePing:
		if !f.ack {
			if !hc.waitOutput() {
				return false
			}
			hc.queuePingAck(f.ping)
		} else {
			hc.pingAcked(f.ping)
		}
	case FrameWindowUpdate:
		err = hc.onWindowUpdate(f)
	case FrameRSTStream:
		err = hc.onRSTStream(f)
	case FramePriority:
		// Priorities are accepted and ignored (RFC 9113 §5.3.2), but a
		// stream cannot depend on itself (§5.3.1).
		if f.dep == f.StreamID {
			hc.resetStream(f.StreamID, ErrCodeProtocol)
		}
	case FrameGoAway:
		hc.closing = true
		hc.finishIfDone()
	case FramePushPromise, FrameHeaders, FrameContinuation:
		// Refused by parse (a client cannot push), or read by
		// readHeaderFrame: none gets here.
		err = connError(ErrCodeProtocol)
	default:
		// Unknown frame types are ignored (RFC 9113 §5.5), and
		// PRIORITY_UPDATE too (RFC 9218 §7.1).
	}
	return hc.handleError(err)
}

// handleError applies the outcome of processing a frame: nothing, a stream
// error (RST_STREAM) or a connection error (GOAWAY and the end); it
// reports whether the connection goes on (hc.mu held).
func (hc *Conn) handleError(err error) bool {
	if err == nil {
		return !hc.dead
	}
	if se, ok := err.(streamError); ok {
		hc.resetStream(se.id, se.code)
		return !hc.dead
	}
	code := ErrCodeProtocol
	if ce, ok := err.(connError); ok {
		code = ErrCode(ce)
	}
	if !hc.goAwaySent {
		hc.queueGoAway(hc.maxID, code)
	}
	hc.killLocked()
	return false
}

// onSettings applies the client's settings in order (RFC 9113 §6.5.3) and
// acknowledges them.
func (hc *Conn) onSettings(f *frame) error {
	if f.ack {
		return nil
	}
	if f.numSettings() > h2MaxSettingsPerFrame {
		return connError(ErrCodeEnhanceYourCalm)
	}
	// INITIAL_WINDOW_SIZE walks every open stream: only the frame's last
	// one is applied, once, which leaves the windows as applying each in
	// turn would.
	initWindow := int64(-1)
	for i := range f.numSettings() {
		s := f.setting(i)
		if err := s.valid(); err != nil {
			return err
		}
		if s.id == SettingInitialWindowSize {
			initWindow = int64(s.val)
			continue
		}
		if err := hc.applySetting(s); err != nil {
			return err
		}
	}
	if initWindow >= 0 {
		if err := hc.setPeerInitialWindow(int32(initWindow)); err != nil {
			return err
		}
	}
	// The ACK is the one answer a flood could pile up: wait for room.
	if !hc.waitOutput() {
		return nil
	}
	hc.queueSettingsAck()
	return nil
}

func (hc *Conn) applySetting(s setting) error {
	switch s.id {
	case SettingHeaderTableSize:
		hc.enc.setMaxSizeLimit(min(s.val, h2HeaderTableSize))
		hc.encUpdate = true
	case SettingInitialWindowSize:
		return hc.setPeerInitialWindow(int32(s.val))
	case SettingMaxFrameSize:
		hc.peerMaxFrame = s.val
	}
	return nil
}

// onRSTStream ends a stream at the client's request: its handler's
// context is cancelled and its writes fail.
func (hc *Conn) onRSTStream(f *frame) error {
	if c := hc.cfg.ClientResets; c != nil {
		c.Add(1)
	}
	if hc.idleStream(f.StreamID) {
		return connError(ErrCodeProtocol) // idle stream (§6.4)
	}
	if st := hc.streams[f.StreamID]; st != nil {
		hc.closeStream(st, ErrCodeCancel, false)
	}
	return nil
}

// idleStream reports whether stream id is idle (RFC 9113 §5.1): a client
// stream above the highest it opened, or any even-numbered stream, which
// only a server opens and riptide never does (it does not push). Only
// HEADERS, which opens a client stream, and PRIORITY may name one.
func (hc *Conn) idleStream(id uint32) bool {
	return id > hc.maxID || id%2 == 0
}

// resetStream sends RST_STREAM for id and forgets the stream.
func (hc *Conn) resetStream(id uint32, code ErrCode) {
	if st := hc.streams[id]; st != nil {
		hc.closeStream(st, code, true)
		return
	}
	if !hc.dead {
		hc.queueRST(id, code)
	}
}

// closeStream removes st from the table: its body reads and response
// writes fail from now on and its request's context is cancelled. With
// sendRST set, the client is told with RST_STREAM(code).
func (hc *Conn) closeStream(st *Stream, code ErrCode, sendRST bool) {
	id := st.id
	st.reset = true
	hc.refundUnread(st)
	hc.untable(st)
	hc.cond.Broadcast()
	if st.onReset != nil {
		st.onReset.StreamReset()
	}
	st.releaseIfDone()
	// Last: a reset over the control budget ends the connection, which
	// closes every stream still in the table.
	if sendRST && !hc.dead {
		hc.queueRST(id, code)
	}
}

// finishIfDone ends a closing connection once no handler runs: GOAWAY is
// queued and the connection marked over, which wakes the reader wherever
// it waits (a read, or room in a full output) to tear it down; the writer
// still sends what is queued.
func (hc *Conn) finishIfDone() {
	if hc.closing && hc.running == 0 && !hc.dead {
		if !hc.goAwaySent {
			hc.queueGoAway(hc.maxID, ErrCodeNo)
		}
		hc.killLocked()
	}
}

// Shutdown starts a graceful close: GOAWAY, open streams finish, then the
// connection closes (Server.Shutdown, Drain, and MaxConnAge's timer).
func (hc *Conn) Shutdown() {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	hc.shutdownLocked()
}

// shutdownLocked is shutdown with hc.mu held.
func (hc *Conn) shutdownLocked() {
	if hc.dead {
		return
	}
	if !hc.goAwaySent {
		hc.queueGoAway(hc.maxID, ErrCodeNo)
	}
	hc.closing = true
	hc.finishIfDone()
}

// idleFired closes a connection that has had no stream for IdleTimeout.
func (hc *Conn) idleFired() {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.running == 0 && !hc.dead {
		hc.closing = true
		hc.finishIfDone()
	}
}

// killLocked marks the connection over: every wait ends, every stream is
// reset, and the writer flushes what is queued and stops.
func (hc *Conn) killLocked() {
	if hc.dead {
		return
	}
	hc.dead = true
	for _, st := range hc.streams {
		hc.closeStream(st, 0, false)
	}
	if hc.idle != nil {
		hc.idle.Stop()
	}
	if hc.age != nil {
		hc.age.Stop()
	}
	if hc.ping != nil {
		hc.ping.timer.Stop()
	}
	hc.cond.Broadcast()
	hc.wakeWriter()
	_ = hc.nc.SetReadDeadline(aLongTimeAgo)
}

// teardown ends the connection after its reader stopped: the writer sends
// what is queued (a GOAWAY) within h2CloseLinger, and the socket is closed
// after a short drain so that the client reads it.
func (hc *Conn) teardown() {
	hc.mu.Lock()
	if !hc.goAwaySent && hc.werr == nil {
		hc.queueGoAway(hc.maxID, ErrCodeNo)
	}
	hc.killLocked()
	hc.mu.Unlock()
	_ = hc.nc.SetWriteDeadline(time.Now().Add(h2CloseLinger))
	hc.mu.Lock()
	for hc.writerOn {
		hc.cond.Wait()
	}
	if hc.running == 0 {
		hc.returnBufs()
	} else {
		// Handlers still running may queue (into nothing) and encode
		// with hc.bufs' cache: the buffers are left to the collector.
		hc.br.release()
		hc.fr.release()
	}
	hc.mu.Unlock()
	hc.linger()
	hc.nc.Close()
}

// linger half-closes the connection and reads briefly, so that a client
// still sending does not turn the close into a reset that destroys the
// last frames it has not read yet.
func (hc *Conn) linger() {
	var cw interface{ CloseWrite() error }
	switch c := hc.nc.(type) {
	case *net.TCPConn:
		cw = c
	case *tls.Conn:
		cw = c
	default:
		return
	}
	if hc.werr == nil {
		netx.HalfCloseAndDrain(hc.nc, cw)
	}
}

// startUpgraded applies the upgrade's settings and starts stream 1
// (hc.mu held).
func (hc *Conn) startUpgraded(up *Upgrade) {
	for b := up.Settings; len(b) >= 6; b = b[6:] {
		s := setting{id: SettingID(b[0])<<8 | SettingID(b[1]), val: readUint32(b[2:])}
		if s.valid() == nil {
			_ = hc.applySetting(s)
		}
	}
	hc.maxID = 1
	st := h2StreamPool.Get().(*Stream)
	st.hc, st.id = hc, 1
	st.method, st.scheme, st.authority, st.path = up.Method, "http", up.Authority, up.Path
	st.fields = up.Fields
	st.rbuf = append(st.rbuf, up.Body...)
	st.declLen = int64(len(up.Body))
	st.recvd = st.declLen
	st.recvEnd, st.endAtOpen = true, len(up.Body) == 0
	st.window = int64(hc.streamWindow)
	st.sendWindow = int64(hc.peerInitWindow)
	st.inTable, st.running = true, true
	hc.streams[1] = st
	hc.startHandler(st)
	hc.dispatchQueued()
}
