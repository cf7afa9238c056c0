package h2

// Parking: an idle connection with no goroutine and no buffer.
//
// On an engine that can hold a socket without a goroutine (riptide's
// event loop), a connection that has no stream, nothing queued to write
// and nothing half-read parks: its reading goroutine hands the socket back
// to the engine (Parker.Park) and returns, its writer goroutine ends, and
// its read buffer, output buffers and header-block scratch go back to a
// pool (h2ConnBufs). What stays is the Conn itself: the settings, the
// flow-control windows, the stream counters and the HPACK tables, which
// the announced table size bounds (h2HeaderTableSize).
//
// The engine resumes it (Resume, on a worker) when the client sends
// anything, exactly as it does for an HTTP/1.1 keep-alive connection, or
// when the server has something to send: a timer (IdleTimeout's GOAWAY,
// the keepalive PING, MaxConnAge) or Shutdown queues its frame and
// wakeWriter, finding the connection parked, calls Parker.Wake instead of
// waking a writer that is gone. The resumed connection reads every frame
// through the same code as before (the same limits, the same flood,
// rapid-reset and CONTINUATION defences), so parking changes where the
// reader waits, not what it accepts.
//
// The reader parks only between frames: its read buffer empty, no header
// block open (no CONTINUATION due), nothing read of the next frame (the
// socket reader reports errWouldPark only then), and, under hc.mu, no
// stream in the table, no handler running or queued, no output queued or
// being written, the connection not over. A writer or a handler that makes
// the connection quiet while the reader waits for the socket wakes it
// (kickPark) so that it parks.

import (
	"errors"
	"sync"
	"time"

	"github.com/riptide-http/riptide/internal/workq"
)

// Parker is the engine's side of parking (riptide's event loop). Its
// methods other than Wake are called by the connection's reading
// goroutine only.
type Parker interface {
	// TryRead reads what the socket holds without waiting: 0 bytes and a
	// nil error when it holds nothing now.
	TryRead(p []byte) (int, error)
	// WaitRead waits until the socket may be readable, Wake is called or
	// the time until (Unix nanoseconds; 0: none) has come, or fails as a
	// read would (deadline, close).
	WaitRead(until int64) error
	// Park hands the socket to the engine until it is readable or woken,
	// when the engine calls hc.Resume on a goroutine of its own. It
	// reports false, keeping the socket with the caller, when it became
	// readable (or was woken) meanwhile. Once it reports true the caller
	// must not touch hc again.
	Park(hc *Conn) bool
	// Wake resumes a parked connection, or makes a waiting WaitRead (or
	// the next Park) return at once. Any goroutine may call it.
	Wake()
}

// errWouldPark is what the socket reader reports when it found the socket
// empty and the connection quiet: readLoop then tries to park.
var errWouldPark = errors.New("h2: idle, may park")

// h2ConnBufs are the buffers a connection holds only while it is served:
// lent at the start and on each Resume, returned when it parks or ends.
type h2ConnBufs struct {
	small [h2ReadSmallSize]byte // the read buffer (h2ReadBuf.small)
	out   []byte                // Conn.out
	wbuf  []byte                // the writer's batch (Conn.wbuf)
	hb    []byte                // the header block being encoded (Conn.hbuf)
	block h2Block               // the header block being decoded (Conn.block)
	// ready and streams are Conn.writeReady and Conn.streams: a parked
	// connection has no writer and no stream (ready holds no token,
	// streams no entry when they come back).
	ready   chan struct{}
	streams map[uint32]*Stream
	// lastValues holds, per h1.Known field, the last response value sent,
	// as a string the HPACK encoder may index (knownValue). It is a cache
	// of strings, right for any connection: it goes with the buffers.
	lastValues [40]string
}

var h2ConnBufsPool = sync.Pool{New: func() any {
	return &h2ConnBufs{ready: make(chan struct{}, 1), streams: make(map[uint32]*Stream)}
}}

// h2KeepBuf is the largest output buffer kept for the next connection to
// take from the pool; a burst's larger one is left to the collector.
const h2KeepBuf = 64 << 10

// UseParker lets the connection park while idle; call it before Serve.
// Serve and Resume then report true when the connection parked.
func (hc *Conn) UseParker(p Parker) {
	hc.parker = p
	hc.cr.hc = hc
}

// lendBufs gives the connection its working buffers (hc.mu held, or
// before it is shared).
func (hc *Conn) lendBufs() {
	b := h2ConnBufsPool.Get().(*h2ConnBufs)
	hc.bufs = b
	hc.br.lend(b.small[:])
	hc.wbuf, hc.hbuf.b, hc.block = b.wbuf[:0], b.hb[:0], &b.block
	if ownWriters {
		// A synctest bubble may not use a channel made outside it, nor
		// leave one of its own to the pool.
		b.ready = make(chan struct{}, 1)
	}
	hc.writeReady, hc.streams = b.ready, b.streams
	if len(hc.out) == 0 {
		// Frames queued while parked (a GOAWAY, a PING) stay.
		hc.out = b.out[:0]
	}
}

// returnBufs takes the working buffers back (hc.mu held, the writer
// stopped, nothing buffered or queued).
func (hc *Conn) returnBufs() {
	b := hc.bufs
	if b == nil {
		return
	}
	hc.bufs = nil
	hc.br.release()
	hc.fr.release()
	hc.fr.huge = nil
	b.out, b.wbuf, b.hb = keepBuf(hc.out), keepBuf(hc.wbuf), keepBuf(hc.hbuf.b)
	// The strings of the last fields decoded and checked: the next
	// connection to take the block must not keep them alive.
	clear(b.block.fields[:cap(b.block.fields)])
	b.block.fields = b.block.fields[:0]
	clear(b.block.checked[:])
	hc.out, hc.wbuf, hc.hbuf.b, hc.block = nil, nil, nil, nil
	select {
	case <-b.ready: // a park's or a late wake's token, the writer gone
	default:
	}
	if len(hc.streams) != 0 {
		// Closed streams of a connection that ended: the table goes with
		// them, the next connection gets a fresh one.
		b.streams = make(map[uint32]*Stream)
	}
	if ownWriters {
		b.ready = nil
	}
	hc.writeReady, hc.streams = nil, nil
	h2ConnBufsPool.Put(b)
}

// keepBuf is p emptied, or nil when too large to keep.
func keepBuf(p []byte) []byte {
	if cap(p) > h2KeepBuf {
		return nil
	}
	return p[:0]
}

// quiet reports whether the connection may park as far as hc.mu's state
// goes: no stream, no handler, no output (hc.mu held).
func (hc *Conn) quiet() bool {
	return hc.parker != nil && !hc.dead && hc.running == 0 && len(hc.streams) == 0 &&
		len(hc.out) == 0 && !hc.writing
}

// kickPark wakes a reader waiting for the socket when the connection has
// just become quiet, so that it parks at once (hc.mu held): only without
// a ParkDelay, since the reader waits at most that long anyway.
func (hc *Conn) kickPark() {
	if hc.cfg.ParkDelay == 0 && !hc.parking && hc.quiet() {
		hc.parker.Wake()
	}
}

// parkRead is the socket read of a connection that may park: it waits for
// the socket as a blocking read would, except that once the connection has
// been quiet, the reader between frames, for ParkDelay, it reports
// errWouldPark instead. With a delay, each wait ends after it at the
// latest, to look again: a connection parks between one and two delays
// after it became quiet, with no timer of its own.
func (hc *Conn) parkRead(p []byte) (int, error) {
	delay := int64(hc.cfg.ParkDelay)
	var quietAt int64 // when this read first found the connection quiet
	for {
		n, err := hc.parker.TryRead(p)
		if n > 0 || err != nil {
			return n, err
		}
		if delay == 0 {
			if hc.mayPark() {
				return 0, errWouldPark
			}
			if err := hc.parker.WaitRead(0); err != nil {
				return 0, err
			}
			continue
		}
		now := time.Now().UnixNano()
		switch {
		case !hc.mayPark():
			quietAt = 0
		case quietAt == 0:
			quietAt = now
		case now-quietAt >= delay:
			return 0, errWouldPark
		}
		if err := hc.parker.WaitRead(now + delay); err != nil {
			return 0, err
		}
	}
}

// mayPark reports whether the reader could park now (reading goroutine).
func (hc *Conn) mayPark() bool {
	if !hc.br.idle || hc.br.Buffered() != 0 || hc.fr.contID != 0 || len(hc.inlineQ) != 0 {
		return false
	}
	hc.mu.Lock()
	defer hc.mu.Unlock()
	return hc.quiet()
}

// park stops the writer, returns the buffers and hands the socket to the
// engine. It reports true when the connection parked: the caller must
// then return without touching hc. Otherwise (a frame, output or the end
// came meanwhile) the connection is as before and reading goes on.
func (hc *Conn) park() bool {
	hc.mu.Lock()
	if !hc.quiet() || !hc.br.idle || hc.br.Buffered() != 0 {
		hc.mu.Unlock()
		return false
	}
	hc.parking = true
	select {
	case hc.writeReady <- struct{}{}:
	default:
	}
	for hc.writerOn {
		hc.cond.Wait()
	}
	if hc.dead || len(hc.out) > 0 {
		hc.startWriter()
		hc.mu.Unlock()
		return false
	}
	hc.returnBufs()
	hc.mu.Unlock()
	if hc.parker.Park(hc) {
		return true
	}
	hc.mu.Lock()
	hc.lendBufs()
	hc.startWriter()
	hc.mu.Unlock()
	return false
}

// startWriter starts the writer, on a pooled goroutine (hc.mu held).
func (hc *Conn) startWriter() {
	hc.parking = false
	hc.writerOn = true
	if ownWriters {
		go hc.writeLoop()
		return
	}
	h2Writers.Get(workq.ProcIndex()).ch <- hc
}

// ownWriters, set by the tests that run a connection in a testing/synctest
// bubble (timers_test.go), starts each writer, and each worker that runs
// handlers (h2Dispatch), on a goroutine of its own that ends with it: a
// pooled one made outside the bubble may not use the bubble's pipes, and
// one made inside may not outlive the bubble. The writer's channel is then
// made for each lend of the buffers (lendBufs), not pooled.
var ownWriters bool

// Resume serves a parked connection again, on the engine's goroutine that
// took it up (Parker.Park): until it parks again (true) or ends (false),
// as Serve.
func (hc *Conn) Resume() bool {
	hc.mu.Lock()
	hc.lendBufs()
	hc.startWriter()
	hc.mu.Unlock()
	return hc.serveFrames()
}
