package websocket

// The event mode on riptide's event loop: the Peer is the protocol of its
// socket (internal/takeover), served by whichever engine worker the loop
// hands the connection to, and parked between events with no goroutine
// and no buffer. What a parked Peer holds: evState below (the codec's
// Reader, the frame being read, the timers, a queue only while the peer
// is behind) and the engine's evloop.Conn; an incomplete frame header or
// control frame waits in the engine's small pooled buffer
// (evloop.Conn.ParkFor), an incomplete message in a pooled buffer taken
// for it, and permessage-deflate's state only with context takeover.
// Over TLS the connection's tls.Conn is read and written through
// (event_tls_linux.go) and parks with the Peer.

import (
	"bytes"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/evloop"
	"github.com/riptide-http/riptide/internal/takeover"
	"github.com/riptide-http/riptide/ws"
)

// evState is an event-driven Peer's state on the event loop, laid out
// for size: a parked Peer (with its evState) is 240 bytes of heap
// (TestEventPeerSize), what it holds for an idle connection besides the
// engine's evloop.Conn.
type evState struct {
	ec *evloop.Conn
	o  *Options
	// tw: over TLS (the root's TLS engine), the tls.Conn on ec, which
	// the connection reads and writes through (event_tls_linux.go).
	tw takeover.TLS
	// cnt: the server's Stats.BytesIn and BytesOut (nil: none).
	cnt *takeover.Counters

	// Read side: the owner (the worker serving the connection) only.
	rs     ws.Reader
	remain int64 // payload bytes left in the current data frame
	msg    *[]byte
	// pend: before the first turn (begun false), the bytes that came with
	// the upgrade request (a pooled message buffer); later, while the
	// peer is parked, the frames written to it meanwhile (its cork, a
	// corkPool buffer; see corkSize). One field for both keeps a Peer in
	// its size class: the first turn takes the former before any park.
	pend   *[]byte
	endErr error // the connection is over: why (OnClose)
	readBy int64 // ReadTimeout's deadline, Unix nanoseconds (0: none)
	pingAt int64 // PingInterval's next ping
	dfl    *evDeflate

	// Under mu: the write side and what writers and the owner share.
	q       [][]byte // output the socket did not take yet
	qlen    int
	werr    error // a write failed: the connection is being closed
	closeBy int64 // the close handshake's deadline
	mu      sync.Mutex

	key     [4]byte // the owner's: the current data frame's masking key
	maskPos uint8   // the owner's: the key's position in the payload
	inFrame bool    // the owner's: reading a data frame's payload

	closeSent bool // under mu, as the rest
	ended     bool
	parked    bool // the loop holds the connection (owner's ParkFor)
	woken     bool // a writer woke it since it parked
	begun     bool // its first turn started (pend is the cork since)

	// sub is the negotiated subprotocol as 1 + its index in
	// o.Subprotocols (0: none), where a string would take 16 bytes.
	sub int32
}

// evSubprotocol is Subprotocol in event mode.
func (p *Peer) evSubprotocol() string {
	if i := p.ev.sub; i > 0 {
		return p.ev.o.Subprotocols[i-1]
	}
	return ""
}

// evDeflate is permessage-deflate's state: without context takeover
// neither side holds anything between messages (the compressor and the
// decompressor are borrowed from pools for each message).
type evDeflate struct {
	inflater   ws.Inflater // owner only
	compressor ws.Compressor
	min        int // Options.CompressionThreshold
}

// evProto is a Peer as the engine's takeover.Proto (a distinct type, so
// that ServeConn stays out of Peer's method set).
type evProto Peer

// evReadSize is the buffer a worker reads an event-driven connection
// into, borrowed for each turn.
const evReadSize = 16 << 10

var evReadPool = sync.Pool{New: func() any { b := make([]byte, evReadSize); return &b }}

// corkSize is the size of a parked peer's cork buffer: the frames
// written to a parked peer are gathered there, up to corkSize bytes, and
// its next turn, which the first of them asks for (WakeToWrite), writes
// them with one system call. A broadcast of k messages made while its
// receivers are parked (a publisher's k messages read at once) costs each
// receiver one write, not k. A frame that does not fit is written at
// once, after what was gathered.
const corkSize = 1 << 10

// corkedMax bounds the cork buffers held at once in the process (16 MiB):
// past it, writes to parked peers go out at once, as if corking were off,
// so that a broadcast to a million parked peers cannot hold a buffer for
// each.
const corkedMax = 16 << 10

var (
	corkPool = sync.Pool{New: func() any { b := make([]byte, 0, corkSize); return &b }}
	corked   atomic.Int64
)

// evMsgPool holds the buffers of messages in assembly and of decompressed
// and compressed messages.
var evMsgPool sync.Pool // *[]byte

func getMsgBuf() *[]byte {
	if bp, ok := evMsgPool.Get().(*[]byte); ok {
		return bp
	}
	return new([]byte)
}

func putMsgBuf(bp *[]byte) {
	if cap(*bp) <= retainMax {
		*bp = (*bp)[:0]
		evMsgPool.Put(bp)
	}
}

// evServe serves x's upgrade in event mode when its connection is an
// HTTP/1.1 one on the event loop, cleartext or TLS; ok false otherwise
// (nothing done).
func evServe(x *riptide.Ctx, o *Options, h *Handler) (*Peer, bool, error) {
	if takeover.Take == nil || x.IsHTTP2() || x.IsHTTP3() {
		return nil, false, nil
	}
	if _, _, ok, _ := takeover.Take(x, nil); !ok {
		return nil, false, nil
	}
	n, herr := checkRequest(string(x.Method()), x.ProtoMinor() >= 1, ctxHeader(x), o)
	if herr != nil {
		refuse(herr, x.SetHeader)
		x.Error(herr.Status, herr.Msg)
		return nil, true, herr
	}
	p := &Peer{h: h}
	cnt := statBytes(x)
	nc, buffered, _, err := takeover.Take(x, (*evProto)(p))
	if err != nil {
		return nil, true, err
	}
	s := &p.ev
	s.o, s.cnt = o, cnt
	if n.subprotocol != "" {
		// o.Subprotocols offered it (checkRequest): its index, kept
		// small; Options are not changed while in use.
		for i, sp := range o.Subprotocols {
			if sp == n.subprotocol {
				s.sub = int32(i + 1)
				break
			}
		}
	}
	if tw, ok := nc.(takeover.TLS); ok {
		s.tw, s.ec = tw, tw.Loop().(*evloop.Conn)
	} else {
		s.ec = nc.(*evloop.Conn)
	}
	var rb [responseLen]byte
	resp := appendResponse(rb[:0], &n, o)
	if s.tw != nil {
		// A copy: the stack buffer must not reach an interface's Write.
		_, err = s.tw.Write(bytes.Clone(resp))
	} else {
		_, err = s.ec.Write(resp)
	}
	if err != nil {
		s.ended = true
		s.ec.Close()
		return nil, true, err
	}
	countOut(cnt, len(resp))
	if len(buffered) > 0 {
		s.pend = getMsgBuf()
		*s.pend = append(*s.pend, buffered...)
	}
	limit := o.readLimit()
	s.rs = ws.Reader{MaxFrame: limit, MaxMessage: limit}
	if d := n.deflate; d != nil {
		s.rs.Deflate = true
		s.dfl = &evDeflate{}
		s.dfl.compressor.Takeover = !d.ServerNoContextTakeover
		s.dfl.compressor.HuffmanOnly = ws.HuffmanOnly(d.ServerMaxWindowBits)
		s.dfl.inflater.Takeover = !d.ClientNoContextTakeover
		if o != nil {
			s.dfl.min = o.CompressionThreshold
		}
	}
	now := time.Now().UnixNano()
	s.activity(now)
	if o != nil && o.PingInterval > 0 {
		s.pingAt = now + int64(o.PingInterval)
	}
	if h.OnOpen != nil {
		h.OnOpen(p)
	}
	return p, true, nil
}

// activity restarts ReadTimeout: a message or control frame arrived.
func (s *evState) activity(now int64) {
	if s.o != nil && s.o.ReadTimeout > 0 {
		s.readBy = now + int64(s.o.ReadTimeout)
	}
}

// ServeConn implements takeover.Proto: it runs the connection's turn on
// the worker the loop handed it to, until the socket is empty (it parks)
// or the connection is over.
func (e *evProto) ServeConn(net.Conn) bool {
	p := (*Peer)(e)
	s := &p.ev
	ec := s.ec
	bp := evReadPool.Get().(*[]byte)
	defer evReadPool.Put(bp)
	buf := *bp
	w := 0
	if part := ec.Partial(); part != nil {
		w = copy(buf, part)
		ec.DropPartial()
	}
	s.mu.Lock()
	s.parked, s.woken = false, false
	var first *[]byte
	if !s.begun {
		s.begun = true
		first, s.pend = s.pend, nil
	} else if s.pend != nil {
		s.flushCork() // first: it was written before anything this turn writes
	}
	s.mu.Unlock()
	// Handed over for gathered output with nothing new to read (the last
	// read emptied the socket, no edge since): no read this turn unless
	// parking fails. Over TLS too: a TLS Peer parks only after a read that
	// said EAGAIN, so crypto/tls held no whole record then, and without
	// new bytes it has none now.
	skipRead := ec.Empty()
	if d := ec.ReadDeadline(); d != 0 {
		s.mu.Lock()
		a := s.alarm()
		s.mu.Unlock()
		if a == 0 || d < a {
			// Not this Peer's alarm: the server's Shutdown asks its idle
			// connections to close. Going away, with the handshake.
			var b [2]byte
			p.evClose(ws.AppendClose(b[:0], ws.CloseGoingAway, ""))
		}
	}
	if bp := first; bp != nil {
		first := *bp
		used := p.consume(first, time.Now().UnixNano())
		w = copy(buf, first[used:])
		putMsgBuf(bp)
	}
	for {
		now := time.Now().UnixNano()
		if s.endErr == nil {
			p.timers(now)
		}
		if s.endErr == nil && ec.Shut() {
			s.mu.Lock()
			s.endErr = s.werr
			s.mu.Unlock()
			if s.endErr == nil {
				s.endErr = ErrClosed
			}
		}
		if s.endErr != nil {
			p.finish()
			// What the peer sent and nobody will read is drained, so
			// that closing the socket does not reset the connection
			// (and destroy the close frame in flight).
			for range 16 {
				if n, _ := ec.RawRead(buf); n <= 0 {
					break
				}
			}
			return false
		}
		var n int
		var err error
		if skipRead {
			skipRead, err = false, syscall.EAGAIN
		} else {
			n, err = s.read(buf[w:])
		}
		if n > 0 {
			countIn(s.cnt, n)
			w += n
			used := p.consume(buf[:w], now)
			w = copy(buf, buf[used:w])
			if s.endErr != nil || s.tw != nil || !ec.Empty() {
				continue
			}
			// A short read emptied the socket (edge-triggered): park
			// without the read that would say EAGAIN; ParkFor fails if
			// more came since. Not over TLS: crypto/tls may hold whole
			// records it read with this one (its next Read returns them
			// without a system call, or says EAGAIN itself).
		} else if err != syscall.EAGAIN {
			if !ec.Shut() { // closed by this side: the next turn says why
				s.endErr = &CloseError{Code: ws.CloseAbnormal, Text: "connection lost without a close frame"}
			}
			continue
		}
		s.mu.Lock()
		s.flush()
		if s.werr != nil {
			s.mu.Unlock()
			continue
		}
		ec.SetWakeAt(s.alarm())
		sv := evloop.Saved{Proto: e}
		if s.tw != nil {
			sv.Session = s.tw.Session()
		}
		s.parked = ec.ParkFor(sv, buf[:w], s.queued() > 0)
		parked := s.parked
		s.mu.Unlock()
		if parked {
			return true
		}
	}
}

// timers runs the keep-alive ping and the read and close deadlines.
func (p *Peer) timers(now int64) {
	s := &p.ev
	s.mu.Lock()
	closing, closeBy := s.closeSent, s.closeBy
	s.mu.Unlock()
	switch {
	case closing && now >= closeBy:
		s.endErr = os.ErrDeadlineExceeded
	case s.readBy != 0 && now >= s.readBy:
		if !closing {
			var b [2]byte
			p.evClose(ws.AppendClose(b[:0], ws.ClosePolicyViolation, ""))
		}
		s.endErr = os.ErrDeadlineExceeded
	case s.pingAt != 0 && now >= s.pingAt:
		s.pingAt = now + int64(s.o.PingInterval)
		p.evControl(ws.OpPing, nil)
	}
}

// alarm is when the connection must be served again without input: the
// earliest of its deadlines (mu held; closeBy is set with closeSent).
func (s *evState) alarm() int64 {
	d := s.readBy
	for _, t := range [2]int64{s.pingAt, s.closeBy} {
		if t != 0 && (d == 0 || t < d) {
			d = t
		}
	}
	return d
}

// finish ends the connection: what is queued is dropped, the buffers go
// back, OnClose is called; the engine then closes the socket.
func (p *Peer) finish() {
	s := &p.ev
	s.mu.Lock()
	opened := !s.ended // ended already: the 101 could not be written
	if s.pend != nil {
		if s.begun {
			s.flushCork()
		} else {
			putMsgBuf(s.pend)
			s.pend = nil
		}
	}
	if opened {
		s.flush()
	}
	s.ended = true
	clear(s.q)
	s.q, s.qlen = nil, 0
	if s.dfl != nil {
		s.dfl.compressor.Release()
		s.dfl.inflater.End()
	}
	s.mu.Unlock()
	if s.msg != nil {
		putMsgBuf(s.msg)
		s.msg = nil
	}
	if opened && p.h.OnClose != nil {
		p.h.OnClose(p, s.endErr)
	}
}

// consume reads the frames in b, calling the handler for each whole
// message, and returns how many bytes it used: the rest is an incomplete
// frame header or control frame (a data frame's payload is taken as it
// comes).
func (p *Peer) consume(b []byte, now int64) int {
	s := &p.ev
	used := 0
	for s.endErr == nil {
		if s.inFrame {
			if s.remain > 0 {
				if used == len(b) {
					break
				}
				chunk := b[used : used+int(min(s.remain, int64(len(b)-used)))]
				s.maskPos = uint8(ws.Mask(s.key, int(s.maskPos), chunk))
				used += len(chunk)
				s.remain -= int64(len(chunk))
				if err := p.payload(chunk); err != nil {
					p.fail(err)
					break
				}
				if s.remain > 0 {
					break
				}
			}
			s.inFrame = false
			p.frameEnd(now)
			continue
		}
		h, n, err := ws.ParseHeader(b[used:])
		if err == nil && n > 0 {
			err = s.rs.Frame(&h)
		}
		if err != nil {
			p.fail(err)
			break
		}
		if n == 0 {
			break
		}
		if h.Op.IsControl() {
			end := used + n + int(h.Length)
			if end > len(b) {
				break
			}
			pl := b[used+n : end]
			ws.Mask(h.Key, 0, pl)
			used = end
			p.control(h.Op, pl, now)
			continue
		}
		used += n
		s.key, s.maskPos, s.remain, s.inFrame = h.Key, 0, h.Length, true
		if h.Fin && h.Op != ws.OpContinuation && h.RSV == 0 && int64(len(b)-used) >= h.Length {
			// A whole uncompressed message in the buffer: delivered from
			// it, no copy.
			pl := b[used : used+int(h.Length)]
			ws.Mask(h.Key, 0, pl)
			used += len(pl)
			s.remain, s.inFrame = 0, false
			if err := s.rs.Payload(pl); err != nil {
				p.fail(err)
				break
			}
			if _, err := s.rs.End(); err != nil {
				p.fail(err)
				break
			}
			p.deliver(MessageType(h.Op), pl, now)
		}
	}
	return used
}

// payload takes the next chunk of a data frame's payload, unmasked, into
// the message being assembled.
func (p *Peer) payload(chunk []byte) error {
	s := &p.ev
	if s.rs.Compressed() {
		// The compressed bytes are bounded too: deflate never grows data
		// by more than a few bytes per stored block.
		if lim := s.rs.MaxMessage; lim > 0 && s.msg != nil && int64(len(*s.msg)+len(chunk)) > lim+lim/16+1024 {
			return ws.ErrMessageTooBig
		}
	} else if err := s.rs.Payload(chunk); err != nil {
		return err
	}
	if s.msg == nil {
		s.msg = getMsgBuf()
	}
	*s.msg = append(*s.msg, chunk...)
	return nil
}

// frameEnd ends a data frame; at a message's end it delivers the message.
func (p *Peer) frameEnd(now int64) {
	s := &p.ev
	done, err := s.rs.End()
	if err != nil {
		p.fail(err)
		return
	}
	if !done {
		return
	}
	var data []byte
	if s.msg != nil {
		data = *s.msg
	}
	mt := MessageType(s.rs.Op())
	if s.rs.Compressed() && s.dfl != nil {
		out := getMsgBuf()
		z, err := s.dfl.inflater.Inflate((*out)[:0], data, s.rs.MaxMessage)
		*out = z[:0]
		switch {
		case err != nil:
			p.fail(err)
		case mt == TextMessage && !utf8.Valid(z):
			p.fail(ws.ErrInvalidUTF8)
		default:
			p.deliver(mt, z, now)
		}
		putMsgBuf(out)
	} else {
		p.deliver(mt, data, now)
	}
	if s.msg != nil {
		putMsgBuf(s.msg)
		s.msg = nil
	}
}

// deliver hands a whole message to OnMessage, unless this side is closing
// (messages after its close frame are dropped).
func (p *Peer) deliver(mt MessageType, data []byte, now int64) {
	s := &p.ev
	s.activity(now)
	s.mu.Lock()
	closing := s.closeSent
	s.mu.Unlock()
	if !closing && p.h.OnMessage != nil {
		p.h.OnMessage(p, mt, data)
	}
}

// control handles a control frame (its payload unmasked).
func (p *Peer) control(op ws.Opcode, pl []byte, now int64) {
	s := &p.ev
	s.activity(now)
	switch op {
	case ws.OpPing:
		p.evControl(ws.OpPong, pl)
	case ws.OpClose:
		code, reason, err := ws.ParseClose(pl)
		if err != nil {
			p.fail(err)
			return
		}
		// Answer with the same code (RFC 6455 section 5.5.1), unless
		// this side's close frame went first; then the connection ends.
		var b [2]byte
		p.evClose(ws.AppendClose(b[:0], code, ""))
		s.endErr = &CloseError{Code: code, Text: string(reason)}
	}
}

// fail fails the connection for the peer's protocol error: the matching
// close frame, then the end.
func (p *Peer) fail(err error) {
	code := ws.CloseProtocolError
	if we, ok := err.(*ws.Error); ok {
		code = we.Code
	}
	var b [2]byte
	p.ev.evCloseFrame(ws.AppendClose(b[:0], code, ""))
	p.ev.endErr = &CloseError{Code: code, Text: err.Error()}
}

// evWriteMessage is WriteMessage on the event loop.
func (p *Peer) evWriteMessage(mt MessageType, data []byte) error {
	s := &p.ev
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || s.closeSent {
		return ErrClosed
	}
	h := ws.Header{Fin: true, Op: ws.Opcode(mt), Length: int64(len(data))}
	if d := s.dfl; d != nil && len(data) >= d.min {
		zb := getMsgBuf()
		z, err := d.compressor.Compress((*zb)[:0], data)
		*zb = z[:0]
		if err == nil {
			h.RSV, h.Length = ws.RSV1, int64(len(z))
			err = s.sendFrame(&h, z, false)
		}
		putMsgBuf(zb)
		return err
	}
	return s.sendFrame(&h, data, false)
}

// evWritePrepared is WritePreparedMessage on the event loop.
func (p *Peer) evWritePrepared(pm *PreparedMessage) error {
	s := &p.ev
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || s.closeSent {
		return ErrClosed
	}
	b := pm.plain
	if d := s.dfl; d != nil && !d.compressor.Takeover && !d.compressor.HuffmanOnly && pm.compressed != nil {
		b = pm.compressed
	}
	return s.send(nil, b, true)
}

// evControl sends a ping or pong.
func (p *Peer) evControl(op ws.Opcode, data []byte) error {
	s := &p.ev
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || s.closeSent {
		return ErrClosed
	}
	h := ws.Header{Fin: true, Op: op, Length: int64(len(data))}
	return s.sendFrame(&h, data, false)
}

// evClose sends a close frame with payload and starts the close
// handshake's timeout.
func (p *Peer) evClose(payload []byte) error {
	s := &p.ev
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || s.closeSent {
		return ErrClosed
	}
	err := s.closeFrameLocked(payload)
	if s.parked {
		s.ec.SetWakeAt(s.alarm()) // the loop's alarm for the timeout
	}
	return err
}

// evCloseFrame sends a close frame, if none went yet.
func (s *evState) evCloseFrame(payload []byte) {
	s.mu.Lock()
	if !s.ended && !s.closeSent {
		s.closeFrameLocked(payload)
	}
	s.mu.Unlock()
}

func (s *evState) closeFrameLocked(payload []byte) error {
	s.closeSent = true
	s.closeBy = time.Now().UnixNano() + int64(s.o.closeTimeout())
	h := ws.Header{Fin: true, Op: ws.OpClose, Length: int64(len(payload))}
	return s.sendFrame(&h, payload, false)
}

// evRemoteAddr is RemoteAddr on the event loop.
func (p *Peer) evRemoteAddr() net.Addr { return p.ev.ec.RemoteAddr() }

// sendFrame sends a frame with header h and payload (mu held).
func (s *evState) sendFrame(h *ws.Header, payload []byte, shared bool) error {
	var hb [ws.MaxHeaderLen]byte
	n := ws.PutHeader(hb[:], h)
	return s.send(hb[:n], payload, shared)
}

// send writes a then b (mu held) as far as the socket takes them and
// queues the rest: a copy, or b itself when shared (immutable bytes, a
// PreparedMessage's). Past the queue's bound the connection is closed.
func (s *evState) send(a, b []byte, shared bool) error {
	if s.werr != nil {
		return s.werr
	}
	if s.parked && s.queued() == 0 && s.gather(a, b) {
		return nil
	}
	if s.pend != nil && s.begun {
		s.flushCork() // what was gathered goes first
		if s.werr != nil {
			return s.werr
		}
	}
	return s.put(a, b, shared)
}

// put writes a then b (mu held) as far as the socket takes them and
// queues the rest, as send does once nothing is gathered: sealed at once
// over TLS (sendTLS).
func (s *evState) put(a, b []byte, shared bool) error {
	if s.tw != nil {
		return s.sendTLS(a, b, shared)
	}
	if s.qlen == 0 {
		iov := [2][]byte{a, b}
		n, err := s.ec.WriteNow(iov[:])
		if err != nil {
			s.broken(err)
			return err
		}
		countOut(s.cnt, n)
		if n >= len(a) {
			b, a = b[n-len(a):], nil
		} else {
			a = a[n:]
		}
		if len(a)+len(b) == 0 {
			return nil
		}
	}
	return s.enqueue(a, b, shared, s.qlen)
}

// gather appends a and b to the parked peer's cork buffer (mu held; no
// bytes waiting for the socket) and, for the first frame gathered, asks
// for the peer's turn; false when they do not fit, or the process holds
// corkedMax buffers.
func (s *evState) gather(a, b []byte) bool {
	n := len(a) + len(b)
	if s.pend == nil {
		if n > corkSize || corked.Load() >= corkedMax {
			return false
		}
		s.pend = corkPool.Get().(*[]byte)
		corked.Add(1)
	} else if len(*s.pend)+n > cap(*s.pend) {
		return false
	}
	*s.pend = append(append(*s.pend, a...), b...)
	if !s.woken {
		s.woken = true
		s.ec.WakeToWrite()
	}
	return true
}

// flushCork writes what the cork buffer gathered (mu held) through put,
// which queues a copy of what the socket does not take, and gives the
// buffer back.
func (s *evState) flushCork() {
	bp := s.pend
	s.pend = nil
	if s.werr == nil && len(*bp) > 0 {
		s.put(*bp, nil, false)
	}
	*bp = (*bp)[:0]
	corkPool.Put(bp)
	corked.Add(-1)
}

// enqueue queues a and b (mu held), failing the connection with
// ErrWriteQueueFull when queued bytes are waiting already.
func (s *evState) enqueue(a, b []byte, shared bool, queued int) error {
	if queued >= s.o.writeQueueLimit() {
		// The peer left the limit unread: it is not reading. (A message
		// is queued whole however long: its size is the application's
		// choice, not the peer's.)
		s.broken(ErrWriteQueueFull)
		return ErrWriteQueueFull
	}
	wasEmpty := queued == 0
	if len(a) > 0 {
		s.q = append(s.q, bytes.Clone(a))
	}
	if len(b) > 0 {
		if !shared {
			b = bytes.Clone(b)
		}
		s.q = append(s.q, b)
	}
	s.qlen += len(a) + len(b)
	if wasEmpty {
		s.wakeForOutput()
	}
	return nil
}

// wakeForOutput wakes the connection's owner, if parked without interest
// in writability, to park again waiting for it (mu held; output was
// queued).
func (s *evState) wakeForOutput() {
	if s.parked && !s.woken {
		s.woken = true
		s.ec.Wake()
	}
}

// flush writes what is queued as far as the socket takes it (mu held).
func (s *evState) flush() {
	if s.tw != nil {
		s.flushTLS()
		return
	}
	for s.qlen > 0 && s.werr == nil {
		n, err := s.ec.WriteNow(s.q)
		if err != nil {
			s.broken(err)
			return
		}
		countOut(s.cnt, n)
		if n == 0 {
			return
		}
		s.qlen -= n
		for n > 0 {
			if k := len(s.q[0]); n >= k {
				n -= k
				s.q[0] = nil
				s.q = s.q[1:]
			} else {
				s.q[0] = s.q[0][n:]
				n = 0
			}
		}
	}
	if s.qlen == 0 {
		s.q = nil
	}
}

// broken records a write failure (mu held) and closes the socket: its
// owner, or a worker the engine sends, ends the connection.
func (s *evState) broken(err error) {
	s.werr = err
	clear(s.q)
	s.q, s.qlen = nil, 0
	s.ec.Close()
}
