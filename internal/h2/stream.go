package h2

// HTTP/2 streams of the connection loop: opening one from a HEADERS
// frame (with the request checks of RFC 9113 §8.1-8.3), the request body a
// handler reads, the response DATA it writes, and the pooled worker
// goroutines that run handlers.

import (
	"errors"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/internal/ascii"
	"github.com/riptide-http/riptide/internal/workq"
	"golang.org/x/net/http2/hpack"
)

// Stream is one request/response exchange. Pooled; guarded by hc.mu
// except for the fields the handler's goroutine owns (w).
type Stream struct {
	hc *Conn
	id uint32

	inTable    bool // in hc.streams (open or half-closed, or ended)
	running    bool // a handler runs for it
	reset      bool // closed by RST_STREAM (either side) or the connection's end
	recvEnd    bool // END_STREAM received: the request is complete
	sendEnd    bool // END_STREAM sent: the response is complete
	bodyClosed bool // the handler is done with the request body
	lingering  bool // response complete, request not: counted in hc.lingering
	ended      bool // both ended while the handler runs: counted in hc.ended
	inline     bool // the handler runs on the connection's reading goroutine

	// The request.
	method, scheme, authority, path string
	protocol                        string              // extended CONNECT's :protocol (RFC 8441)
	fields                          []hpack.HeaderField // regular fields, in order
	trailers                        []hpack.HeaderField
	declLen                         int64 // content-length, -1 if none
	recvd                           int64 // DATA payload received
	tooLarge                        bool  // the header list exceeded the limit: answer 431
	endAtOpen                       bool  // the HEADERS ended the stream: no body

	// Request body received and not yet read: rbuf[roff:].
	rbuf    []byte
	roff    int
	window  int64 // stream bytes the client may still send
	unacked int64 // read by the handler, not yet granted back

	sendWindow    int64
	readDeadline  time.Time
	writeDeadline time.Time
	deadlineSet   bool // the handler set the read deadline itself
	timer         *time.Timer

	headSent bool          // the final response HEADERS are queued
	sent100  bool          // a 100 Continue went out
	onReset  ResetNotifier // told when the stream is reset
	clenBuf  [20]byte      // content-length's digits (api.go)
	lower    []byte        // a lower-cased field name (api.go)
	out      []Field       // the caller's head or trailers being built (FieldBuf)
}

var h2StreamPool = sync.Pool{New: func() any { return new(Stream) }}

// onHeaders handles a complete header block: a new request, or the
// trailers of an open one.
func (hc *Conn) onHeaders(f *h2Block) error {
	id := f.id
	if id%2 == 0 {
		return connError(ErrCodeProtocol)
	}
	if st := hc.streams[id]; st != nil {
		return hc.onTrailers(st, f)
	}
	if id <= hc.maxID {
		return connError(ErrCodeStreamClosed) // closed stream (§5.1)
	}
	hc.maxID = id
	if f.hasPriority && f.dep == id {
		return streamError{id, ErrCodeProtocol}
	}
	if hc.closing {
		return streamError{id, ErrCodeRefusedStream}
	}
	max := int(hc.maxStreams)
	if len(hc.streams)-hc.ended >= max {
		// A client with maxStreams streams open or half-closed is only
		// refused (RFC 9113 §5.1.2).
		return streamError{id, ErrCodeRefusedStream}
	}
	if hc.running-hc.ended >= max || hc.running >= h2HandlerLimit*max {
		// The client is within its limit, but handlers of streams it no
		// longer counts as open hold the slots: of streams reset (rapid
		// reset), or closed before their handler returned. The refusal
		// counts against the connection (h2RefusedLimit, h2HandlerLimit).
		hc.resetRefused++
		if hc.resetRefused > h2RefusedLimit*max {
			return connError(ErrCodeEnhanceYourCalm)
		}
		return streamError{id, ErrCodeRefusedStream}
	}
	st := h2StreamPool.Get().(*Stream)
	st.hc, st.id = hc, id
	st.declLen = -1
	if err := st.setRequest(f); err != nil {
		st.free()
		return err
	}
	st.window = int64(hc.streamWindow)
	st.sendWindow = int64(hc.peerInitWindow)
	st.inTable, st.running = true, true
	st.recvEnd = f.endStream
	st.endAtOpen = st.recvEnd
	hc.streams[id] = st
	// Inline only when the request is complete: the handler can then
	// never wait for request bytes the reading goroutine would deliver.
	st.inline = hc.inline && st.recvEnd
	hc.startHandler(st)
	hc.streamOpened()
	return nil
}

// streamOpened runs after a new stream started (hc.mu held): a
// connection opened while draining, or one that has now served
// MaxRequestsPerConn streams, is sent GOAWAY naming this stream as the
// last, lets its open streams finish and closes, so that the client goes
// on over a new connection.
func (hc *Conn) streamOpened() {
	hc.nstreams++
	max := hc.cfg.MaxRequests
	if hc.goAwayAfterFirst || max > 0 && hc.nstreams >= max {
		hc.goAwayAfterFirst = false
		hc.shutdownLocked()
	}
}

// onTrailers takes the second header block of a stream: trailers, which
// must end the stream and carry no pseudo-header (RFC 9113 §8.1).
func (hc *Conn) onTrailers(st *Stream, f *h2Block) error {
	if st.recvEnd {
		if st.sendEnd {
			// Both sides ended it: the stream is closed, even though its
			// handler has not been released yet (§5.1: a connection
			// error; h2spec 5.1 raced this).
			return connError(ErrCodeStreamClosed)
		}
		return streamError{st.id, ErrCodeStreamClosed}
	}
	if !f.endStream || f.nPseudo > 0 {
		return streamError{st.id, ErrCodeProtocol}
	}
	st.trailers = append(st.trailers[:0], f.regular()...)
	return hc.endOfRequest(st)
}

// setRequest takes the request head from f, checking it as RFC 9113 §8.2
// and §8.3.1 require (h1.PseudoHead.Check); a malformed request is a
// stream error.
func (st *Stream) setRequest(f *h2Block) error {
	malformed := streamError{st.id, ErrCodeProtocol}
	var seen [5]bool
	for _, hf := range f.pseudo() {
		var i int
		switch hf.Name {
		case ":method":
			i, st.method = 0, hf.Value
		case ":scheme":
			i, st.scheme = 1, hf.Value
		case ":authority":
			i, st.authority = 2, hf.Value
		case ":path":
			i, st.path = 3, hf.Value
		case ":protocol":
			// RFC 8441 §4: only after this server sent
			// SETTINGS_ENABLE_CONNECT_PROTOCOL.
			if !st.hc.cfg.EnableConnectProtocol || hf.Value == "" {
				return malformed
			}
			i, st.protocol = 4, hf.Value
		default:
			return malformed
		}
		if seen[i] {
			return malformed // a pseudo-header field twice (§8.3)
		}
		seen[i] = true
	}
	head := h1.PseudoHead{Method: st.method, Scheme: st.scheme, Authority: st.authority, Path: st.path, Protocol: st.protocol, HasAuthority: seen[2]}
	st.fields = append(st.fields[:0], f.regular()...)
	for _, hf := range st.fields {
		switch hf.Name {
		case "host":
			head.Host = hf.Value
			head.Hosts++
		case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
			return malformed
		case "te":
			if hf.Value != "trailers" {
				return malformed
			}
		case "content-length":
			n, ok := ascii.ParseLength(hf.Value)
			if !ok || st.declLen >= 0 && st.declLen != n {
				return malformed
			}
			st.declLen = n
		}
	}
	// The one check of the request line and Host for both doors: native
	// (fillRequest) and compat (newRequest) build from what passes.
	if head.Check() != nil {
		return malformed
	}
	st.tooLarge = f.truncated
	if f.endStream && st.declLen > 0 {
		return malformed
	}
	return nil
}

// free returns a stream to the pool. Its deadline timer is dropped: it
// would wake the connection it was made for.
func (st *Stream) free() {
	if st.timer != nil {
		st.timer.Stop()
	}
	rbuf := st.rbuf
	if cap(rbuf) > h2KeepBody {
		rbuf = nil
	}
	fields, trailers, lower, out := st.fields, st.trailers, st.lower, st.out
	clear(fields)
	clear(trailers)
	clear(out)
	*st = Stream{rbuf: rbuf[:0], fields: fields[:0], trailers: trailers[:0], lower: lower[:0], out: out[:0]}
	h2StreamPool.Put(st)
}

// releaseIfDone frees st once it is neither in the table nor running.
func (st *Stream) releaseIfDone() {
	if !st.inTable && !st.running {
		st.free()
	}
}

// forget removes a stream that is closed in both directions.
func (hc *Conn) forget(st *Stream) {
	hc.refundUnread(st)
	hc.untable(st)
	st.releaseIfDone()
}

// untable removes st from the stream table.
func (hc *Conn) untable(st *Stream) {
	delete(hc.streams, st.id)
	st.inTable = false
	if st.ended {
		st.ended = false
		hc.ended--
	}
	if st.lingering {
		st.lingering = false
		hc.lingering--
	}
}

// endSent marks the response complete: END_STREAM is queued (hc.mu held).
func (st *Stream) endSent() {
	st.sendEnd = true
	st.hc.noteClosed(st)
}

// noteClosed counts st in hc.ended once its request and response have
// both ended while its handler still runs: the client counts it closed
// (RFC 9113 §5.1) and may open another in its place (h2HandlerLimit).
func (hc *Conn) noteClosed(st *Stream) {
	if st.recvEnd && st.sendEnd && st.running && st.inTable && !st.ended {
		st.ended = true
		hc.ended++
	}
}

// startHandler counts the stream as running and queues it for a worker,
// or to run inline once the current frame is processed. The worker is
// woken by dispatchQueued, which the reader calls before it could block.
func (hc *Conn) startHandler(st *Stream) {
	hc.running++
	if hc.idle != nil {
		hc.idle.Stop()
	}
	if st.inline {
		hc.inlineQ = append(hc.inlineQ, st)
		return
	}
	hc.runQ.Push(st)
	hc.dispatchDue = true
}

// dispatchQueued makes sure a worker will take the queued streams (hc.mu
// held): one wake for a whole burst of new streams.
func (hc *Conn) dispatchQueued() {
	if hc.takeDispatch() {
		h2Dispatch(hc)
	}
}

// takeDispatch is dispatchQueued without the wake-up (hc.mu held): it
// reports whether the caller must call h2Dispatch, which it does after
// releasing hc.mu, so that the worker it wakes (on another core, at once)
// does not find the lock still held.
func (hc *Conn) takeDispatch() bool {
	hc.dispatchDue = false
	return hc.runQ.Dispatch()
}

// serveQueue runs on a worker dispatched as the connection's spare: it
// runs the queued streams' handlers one after the other until the queue is
// empty. Before each, if more remain, it makes sure another spare is on
// its way, so that a handler that blocks never holds up the streams queued
// behind it: the spare, runnable, takes them.
func (hc *Conn) serveQueue() {
	hc.mu.Lock()
	hc.runQ.Arrive()
	for {
		st, send, ok := hc.runQ.Next()
		if !ok {
			break
		}
		hc.mu.Unlock()
		if send {
			h2Dispatch(hc) // without hc.mu: the spare takes it first thing
		}
		st.serve()
		hc.mu.Lock()
	}
	hc.mu.Unlock()
}

// serve runs the stream's handler and completes the stream.
func (st *Stream) serve() {
	st.hc.cfg.Handler.ServeStream(st)
	st.hc.handlerDone(st)
}

// handlerDone runs when a stream's handler has returned and its response
// is complete (or abandoned). A stream whose client is still sending stays
// half-closed (local), its body discarded, until the client ends or resets
// it or uses up the stream window (onData then resets it with NO_ERROR, as
// RFC 9113 §8.1 allows; so does handlerDone if the window was used up
// while the handler ran), so an unread request body costs at most one
// stream window of discarded bytes. Frames the client sent on the stream before it saw the
// response are then judged the same whether the handler was quicker or
// not: h2spec 6.9.1/3 (WINDOW_UPDATE overflow) got RST_STREAM(NO_ERROR)
// instead of FLOW_CONTROL_ERROR when the handler answered first. At most
// MaxConcurrentStreams streams linger; beyond that one is reset at once.
func (hc *Conn) handlerDone(st *Stream) {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	st.running = false
	st.bodyClosed = true
	hc.running--
	switch {
	case !st.inTable:
		st.releaseIfDone()
	case !st.sendEnd:
		hc.closeStream(st, ErrCodeInternal, true)
	case !st.recvEnd && st.window <= 0:
		// The client used up the stream window before the handler
		// returned (its body came after the response, unread): no
		// more can come, so stop it now, as onData does for a
		// lingering stream (§8.1).
		hc.forgive()
		hc.closeStream(st, ErrCodeNo, true)
	case !st.recvEnd && hc.lingering < int(hc.maxStreams):
		st.lingering = true
		hc.lingering++
		hc.refundUnread(st)
		if cap(st.rbuf) > 64<<10 {
			st.rbuf = nil // only discarded data comes now
		}
	case !st.recvEnd:
		hc.forgive()
		hc.closeStream(st, ErrCodeNo, true)
	default:
		hc.forgive()
		hc.forget(st)
	}
	if hc.running == 0 && !hc.dead {
		if hc.closing {
			hc.finishIfDone()
		} else {
			hc.armIdle()
			hc.kickPark()
		}
	}
}

// forgive takes one refusal off the count of h2RefusedLimit: a stream was
// served to its end without a reset, so the count covers a window of the
// connection's recent streams, not its whole life (hc.mu held).
func (hc *Conn) forgive() {
	if hc.resetRefused > 0 {
		hc.resetRefused--
	}
}

// armIdle starts the IdleTimeout clock: no stream runs (hc.mu held).
func (hc *Conn) armIdle() {
	d := hc.cfg.IdleTimeout
	switch {
	case d <= 0:
	case hc.idle == nil:
		hc.idle = time.AfterFunc(d, hc.idleFired)
	default:
		hc.idle.Reset(d)
	}
}

// waitUntil waits (hc.mu held) for a broadcast or the deadline, and
// reports false if the deadline has passed.
func (st *Stream) waitUntil(deadline time.Time) bool {
	if deadline.IsZero() {
		st.hc.cond.Wait()
		return true
	}
	d := time.Until(deadline)
	if d <= 0 {
		return false
	}
	if st.timer == nil {
		hc := st.hc
		st.timer = time.AfterFunc(d, func() {
			hc.mu.Lock()
			hc.cond.Broadcast()
			hc.mu.Unlock()
		})
	} else {
		st.timer.Reset(d)
	}
	st.hc.cond.Wait()
	return true
}

// lockToSend takes hc.mu for queueing frames of st, once the output has
// room. It reports false, without the lock, when the stream or the
// connection is gone.
func (st *Stream) lockToSend() bool {
	hc := st.hc
	hc.mu.Lock()
	if st.reset || hc.dead || !hc.waitOutput() || st.reset {
		hc.mu.Unlock()
		return false
	}
	return true
}

// errH2StreamClosed fails a read or write on a stream the client reset.
var errH2StreamClosed = os.ErrClosed

// ErrBodyClosed is returned by a body read after the handler returned or
// closed the body.
var ErrBodyClosed = errors.New("h2: body read after close")

// readBody reads request body bytes; io.EOF at the end of the stream.
func (st *Stream) readBody(p []byte) (int, error) {
	hc := st.hc
	hc.mu.Lock()
	defer hc.mu.Unlock()
	for {
		if n := len(st.rbuf) - st.roff; n > 0 {
			if len(p) == 0 {
				return 0, nil
			}
			n = copy(p, st.rbuf[st.roff:])
			if st.roff += n; st.roff == len(st.rbuf) {
				st.bodyDrained()
			}
			hc.consumed(st, n)
			return n, nil
		}
		switch {
		case st.recvEnd && !st.reset:
			return 0, io.EOF
		case st.reset || hc.dead:
			return 0, io.ErrUnexpectedEOF
		case st.bodyClosed:
			return 0, ErrBodyClosed
		}
		if !st.deadlineSet && st.readDeadline.IsZero() && hc.cfg.ReadBodyTimeout > 0 {
			st.readDeadline = time.Now().Add(hc.cfg.ReadBodyTimeout)
		}
		if !st.waitUntil(st.readDeadline) {
			return 0, os.ErrDeadlineExceeded
		}
	}
}

// writeData sends p as DATA frames within the flow-control windows, ending
// the stream after it when end is set. It blocks while a window is empty or
// the connection's output is full.
func (st *Stream) writeData(p []byte, end bool) error {
	hc := st.hc
	hc.mu.Lock()
	defer hc.mu.Unlock()
	return st.writeDataLocked(p, end)
}

// writeDataLocked is writeData with hc.mu held (released while it waits).
func (st *Stream) writeDataLocked(p []byte, end bool) error {
	hc := st.hc
	// A client that grants no window may stall a write for at most
	// WriteTimeout (unless the handler set its own deadline).
	deadline := st.writeDeadline
	if deadline.IsZero() && hc.cfg.WriteTimeout > 0 && len(p) > 0 {
		deadline = time.Now().Add(hc.cfg.WriteTimeout)
	}
	for {
		if st.reset || hc.dead {
			return errH2StreamClosed
		}
		if len(p) == 0 {
			if end {
				hc.queueData(st.id, nil, true)
				st.endSent()
			}
			return nil
		}
		n := min(int64(len(p)), st.sendWindow, hc.sendWindow, int64(hc.peerMaxFrame))
		if n <= 0 && st.inline && len(hc.out) <= h2MaxOutput {
			// The window comes in frames only this goroutine reads.
			if !hc.pumpFrame() {
				return errH2StreamClosed
			}
			continue
		}
		if n <= 0 || len(hc.out) > h2MaxOutput {
			if !st.waitUntil(deadline) {
				return os.ErrDeadlineExceeded
			}
			continue
		}
		last := end && int(n) == len(p)
		hc.queueData(st.id, p[:n], last)
		st.sendWindow -= n
		hc.sendWindow -= n
		p = p[n:]
		if last {
			st.endSent()
			return nil
		}
	}
}

// pumpFrame reads and processes one frame for an inline handler waiting
// for flow-control window (hc.mu held; released while reading). It
// reports false when the connection's reading has ended.
func (hc *Conn) pumpFrame() bool {
	if hc.readOver {
		return false
	}
	hc.mu.Unlock()
	ok := hc.readFrame()
	hc.mu.Lock()
	return ok
}

// The worker pool: handlers run on goroutines that are reused from one
// stream to the next (on any connection) instead of one new goroutine per
// stream. An idle worker exits after between h2WorkerIdle and twice that
// (see next).
const h2WorkerIdle = 10 * time.Second

type h2Worker struct {
	ch    chan *Conn // nil: exit
	timer *time.Timer
	// idle is the timer's period: h2WorkerIdle, shorter in a test (set
	// before run, never changed: the package has no mutable period that
	// a test would write while other workers read it).
	idle time.Duration
	// busy: the worker served something since its timer last fired.
	busy bool
	// write: a writer (h2Writers), which runs connections' writeLoop
	// rather than their queued streams.
	write bool
}

// h2Workers run streams' handlers; h2Writers run connections' writers
// (writeLoop), which a connection that parks gives back and takes again
// when it resumes: from a pool, a goroutine (and its grown stack) costs
// nothing per resume.
var h2Workers, h2Writers workq.Pool[*h2Worker]

// pool is the worker's pool.
func (w *h2Worker) pool() *workq.Pool[*h2Worker] {
	if w.write {
		return &h2Writers
	}
	return &h2Workers
}

func init() {
	// Set here: startH2Worker refers to h2Workers (an initialization cycle
	// in a composite literal).
	h2Workers.Spawn = func() *h2Worker { return startH2Worker(false) }
	h2Writers.Spawn = func() *h2Worker { return startH2Worker(true) }
	h2Workers.Stop = func(w *h2Worker) { w.ch <- nil }
	h2Writers.Stop = h2Workers.Stop
	// A shard per CPU: a worker parks in the shard of the P it finished
	// on, and a dispatcher takes from its own P's (workq.ProcIndex), a
	// worker that ran there last, instead of every core taking one lock
	// per hand-off and per park.
	h2Workers.SetShards(runtime.NumCPU())
	h2Writers.SetShards(runtime.NumCPU())
}

// startH2Worker makes a worker (a writer with write set); it takes its
// first connection from its channel.
func startH2Worker(write bool) *h2Worker {
	w := &h2Worker{ch: make(chan *Conn, 1), idle: h2WorkerIdle, write: write}
	go w.run()
	return w
}

// h2Dispatch runs hc's queued streams on an idle worker, or a new one.
func h2Dispatch(hc *Conn) {
	if ownWriters {
		go hc.serveQueue() // a test's synctest bubble (park.go)
		return
	}
	h2Workers.Get(workq.ProcIndex()).ch <- hc
}

func (w *h2Worker) run() {
	w.timer = time.NewTimer(w.idle)
	defer w.timer.Stop()
	for hc := <-w.ch; hc != nil; hc = w.next() {
		if w.write {
			hc.writeLoop()
		} else {
			hc.serveQueue()
		}
		w.busy = true
		if !w.pool().Put(w, workq.ProcIndex(), 0) {
			return
		}
	}
}

// next waits, parked, for the worker's next connection; nil when it must
// exit. The idle timer runs for the worker's life and is re-armed only
// when it fires, not at every park (a reset and a stop per burst of
// streams, on the timer heap of the worker's P): a worker that served
// anything since the last firing waits another period, one that did not
// leaves the pool and exits.
func (w *h2Worker) next() *Conn {
	for {
		select {
		case hc := <-w.ch:
			return hc
		case <-w.timer.C:
		}
		if w.busy {
			w.busy = false
			w.timer.Reset(w.idle)
			continue
		}
		if w.pool().Remove(w) {
			return nil
		}
		// A dispatcher took this worker just as it timed out.
		return <-w.ch
	}
}
