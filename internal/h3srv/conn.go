package h3srv

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riptide-http/riptide/h3"
	"github.com/riptide-http/riptide/quicx"
)

// maxIdleWorkers is how many goroutines a busy connection keeps waiting
// for the next request stream; more exit when their stream is done. It is
// above the streams a load generator keeps in flight per connection (10 in
// the harness): a worker that exits and is started again for the next
// stream costs a goroutine start, an allocation and its stack's growth on
// every stream (seen as 6% of the server's CPU with 4 kept).
const maxIdleWorkers = 16

// workerLinger is how long a connection with no request stream in progress
// keeps its idle workers; then they exit, so that an idle connection holds
// no worker goroutine (its first stream afterwards starts one).
var workerLinger = time.Second

// readerLinger is how long the reader of a peer's control or QPACK stream
// waits for more of it at a frame (instruction) boundary before it parks
// the stream and exits: an idle connection holds no goroutine per critical
// stream. A parked stream is read again by a new goroutine when the peer
// ends or resets it (its final size callback: the critical-stream error is
// as prompt as with a blocked reader) and when the next request stream is
// accepted (frames sent on it in between are read and checked then).
var readerLinger = time.Second

// Conn serves HTTP/3 on one QUIC connection.
//
// Its fields are laid out for an idle connection's heap (TestIdleConnHeap
// in the http3 module compares it with quic-go's server): the
// configuration is shared by the connections of one Shared, and the small
// fields are packed together at the end.
type Conn struct {
	*Shared // the configuration: cfg, lim

	qc quicx.Conn
	h  Handler

	// budget is what is left of cfg.HeaderBudget.
	budget atomic.Int64

	// work wakes an idle worker (true) or retires it (false). It exists
	// while workers do (nworkers, under qmu): an idle connection whose
	// workers retired keeps no channel.
	work    chan bool
	workers sync.WaitGroup

	// queue holds the accepted request streams no worker has taken yet,
	// queue[qhead:]. A worker takes the next one when its stream is done
	// instead of parking, so that the responses of a burst are all
	// written before quic-go's send loop (readied by the first write) runs
	// and leave in one packet, not one each. spinning tells whether a
	// worker was woken and has not taken a stream yet: while the queue is
	// not empty one is, so a slow handler holds up no other stream.
	qmu   sync.Mutex
	queue []*Stream

	// retire ends the idle workers once the connection has had no
	// request stream in progress for workerLinger; armed tells whether it
	// is pending, served counts the streams served, so that a timer that
	// fires after newer streams arms itself again instead.
	retire *time.Timer

	mu        sync.Mutex
	ctrl      quicx.SendStream // our control stream
	maxID     int64            // highest request stream ID accepted, -1 none
	goaway    int64            // first stream ID refused after GOAWAY, -1 none
	drained   chan struct{}    // closed when active reaches 0 after GOAWAY
	uniActive sync.WaitGroup
	// parked holds the peer's critical streams no goroutine reads (at
	// most one of each of the three types), parked[:nparked].
	parked [3]*critical

	// served counts the streams served (mod 2³²: compared only for a
	// change within workerLinger); servedSeen is its value when the
	// retire timer was armed (timer goroutine only).
	served     atomic.Uint32
	servedSeen uint32
	qhead      int32        // under qmu
	nworkers   int32        // worker goroutines (qmu)
	idle       atomic.Int32 // workers waiting on work
	active     int32        // request streams being served (mu)
	unknown    int32        // unidirectional streams of unknown type seen (mu)
	nparked    atomic.Int32 // written under mu, read without it on each stream
	armed      atomic.Bool
	spinning   bool // under qmu
	uniDone    bool // Serve is waiting for uniActive: start no reader (mu)
	uni        h3.UniStreams
}

// Shared is an engine configuration with its defaults filled in and what
// the engine derives from it, shared by the connections made with
// NewConnShared (NewConn makes one per connection).
type Shared struct {
	cfg Config
	lim h3.Limits
}

// NewShared returns the shared form of cfg (nil: defaults).
func NewShared(cfg *Config) *Shared {
	sh := &Shared{cfg: cfg.norm()}
	sh.lim = sh.cfg.limits()
	return sh
}

// NewConn returns an engine for qc serving h under cfg (nil: defaults).
func NewConn(qc quicx.Conn, cfg *Config, h Handler) *Conn {
	return NewConnShared(qc, NewShared(cfg), h)
}

// NewConnShared returns an engine for qc serving h under sh.
func NewConnShared(qc quicx.Conn, sh *Shared, h Handler) *Conn {
	c := &Conn{Shared: sh, qc: qc, h: h, maxID: -1, goaway: -1}
	c.budget.Store(int64(c.cfg.HeaderBudget))
	return c
}

// QUIC returns the connection the engine serves.
func (c *Conn) QUIC() quicx.Conn { return c.qc }

// Serve opens the control stream with our SETTINGS, reads the peer's
// unidirectional streams and serves request streams until the connection
// closes; then it waits for the handlers and returns the error that ended
// the connection.
func (c *Conn) Serve() error {
	defer c.workers.Wait()
	defer c.stopRetire()
	if err := c.openControl(); err != nil {
		c.qc.CloseWithError(uint64(h3.CodeClosedCriticalStream), "cannot open the control stream")
		return err
	}
	c.uniActive.Add(1)
	go c.acceptUni()
	defer c.waitUni()
	ctx := c.qc.Context()
	for {
		qs, err := c.qc.AcceptStream(ctx)
		if err != nil {
			// The connection closed (the only reason quic-go gives);
			// close it in any case, so that the goroutines reading its
			// streams end.
			c.qc.CloseWithError(uint64(h3.CodeInternalError), "")
			return err
		}
		id := qs.StreamID()
		c.mu.Lock()
		if c.goaway >= 0 && id >= c.goaway {
			c.mu.Unlock()
			reject(qs, h3.CodeRequestRejected)
			continue
		}
		c.maxID = max(c.maxID, id)
		c.active++
		c.mu.Unlock()
		if c.nparked.Load() != 0 {
			c.resumeUni()
		}
		c.push(getStream(c, qs))
	}
}

// push queues st for a worker and wakes one unless one is on its way.
func (c *Conn) push(st *Stream) {
	c.qmu.Lock()
	c.queue = append(c.queue, st)
	wake := !c.spinning
	c.spinning = true
	w := c.work
	c.qmu.Unlock()
	if wake {
		c.wake(w)
	}
}

// wake wakes an idle worker through w, c.work read under qmu (nil when no
// worker exists), or starts one when none is idle. An idle worker waits on
// c.work, which is not replaced while a worker exists.
func (c *Conn) wake(w chan bool) {
	select {
	case w <- true:
		return
	default:
	}
	c.qmu.Lock()
	c.nworkers++
	if c.work == nil {
		c.work = make(chan bool)
	}
	c.qmu.Unlock()
	c.workers.Add(1)
	go c.worker()
}

// workerExit accounts for a worker's end; the last one drops work.
func (c *Conn) workerExit() {
	c.qmu.Lock()
	c.nworkers--
	if c.nworkers == 0 {
		c.work = nil
	}
	c.qmu.Unlock()
	c.workers.Done()
}

// workChan returns c.work.
func (c *Conn) workChan() chan bool {
	c.qmu.Lock()
	w := c.work
	c.qmu.Unlock()
	return w
}

// next takes the next queued stream, nil when there is none. When more
// are queued it makes sure a worker is on its way to them.
func (c *Conn) next(woken bool) *Stream {
	c.qmu.Lock()
	if woken {
		c.spinning = false
	}
	if int(c.qhead) == len(c.queue) {
		c.qmu.Unlock()
		return nil
	}
	st := c.queue[c.qhead]
	c.queue[c.qhead] = nil
	c.qhead++
	if int(c.qhead) == len(c.queue) {
		c.queue, c.qhead = c.queue[:0], 0
	}
	wake := int(c.qhead) < len(c.queue) && !c.spinning
	if wake {
		c.spinning = true
	}
	w := c.work
	c.qmu.Unlock()
	if wake {
		c.wake(w)
	}
	return st
}

// stopRetire stops the workers' retirement timer.
func (c *Conn) stopRetire() {
	c.mu.Lock()
	if c.retire != nil {
		c.retire.Stop()
	}
	c.mu.Unlock()
}

// reject refuses a request stream unprocessed.
func reject(qs quicx.Stream, code h3.ErrorCode) {
	qs.CancelRead(uint64(code))
	qs.CancelWrite(uint64(code))
	qs.ReleaseStreamCredit()
}

// worker serves the queued streams, then waits to be woken for more,
// until enough workers idle.
func (c *Conn) worker() {
	defer c.workerExit()
	for {
		quiet := false
		for st := c.next(true); st != nil; st = c.next(false) {
			quiet = c.serve(st)
		}
		if c.idle.Add(1) > maxIdleWorkers {
			c.idle.Add(-1)
			return
		}
		if quiet {
			c.armRetire()
		}
		select {
		case ok := <-c.workChan():
			c.idle.Add(-1)
			if !ok { // retired
				return
			}
		case <-c.qc.Context().Done():
			c.idle.Add(-1)
			return
		}
	}
}

// armRetire starts the timer that retires the idle workers, unless it is
// pending.
func (c *Conn) armRetire() {
	if c.armed.Load() || !c.armed.CompareAndSwap(false, true) {
		return
	}
	c.mu.Lock()
	if c.retire == nil {
		c.servedSeen = c.served.Load()
		c.retire = time.AfterFunc(workerLinger, c.retireIdle)
	} else {
		c.retire.Reset(workerLinger)
	}
	c.mu.Unlock()
}

// retireIdle ends the idle workers if no stream was served since the timer
// was armed and none is in progress; otherwise it waits another
// workerLinger.
func (c *Conn) retireIdle() {
	n := c.served.Load()
	c.mu.Lock()
	busy := n != c.servedSeen || c.active > 0
	c.servedSeen = n
	if busy {
		c.retire.Reset(workerLinger)
		c.mu.Unlock()
		return
	}
	c.armed.Store(false)
	c.retire = nil // an idle connection keeps no timer; armRetire makes one
	c.mu.Unlock()
	for c.idle.Load() > 0 {
		select {
		case c.workChan() <- false:
		case <-c.qc.Context().Done():
			return
		default:
			return // none is parked on work (one is about to be)
		}
	}
}

// serve reads st's head, applies the 0-RTT policy, runs the handler and
// ends the stream. It reports whether no other request stream is in
// progress.
func (c *Conn) serve(st *Stream) bool {
	if st.readHead() && !c.tooEarly(st) {
		c.h.ServeStream(st)
	}
	st.finish()
	c.served.Add(1)
	c.mu.Lock()
	c.active--
	quiet := c.active == 0
	if quiet && c.drained != nil {
		close(c.drained)
		c.drained = nil
	}
	c.mu.Unlock()
	putStream(st)
	return quiet
}

// tooEarly applies the 0-RTT policy (RFC 8470): a request received before
// the handshake completed on a connection that used 0-RTT may be a
// replay; unless its method is safe it waits for the handshake
// (Config.Wait0RTT) or is answered 425. It reports whether the request was
// answered or abandoned.
func (c *Conn) tooEarly(st *Stream) bool {
	hs := c.qc.HandshakeComplete()
	select {
	case <-hs:
		return false
	default:
	}
	switch string(st.Head().Method) {
	case "GET", "HEAD", "OPTIONS":
		return false
	}
	if !c.qc.State().Used0RTT {
		return false
	}
	if c.cfg.Wait0RTT {
		select {
		case <-hs:
			return false
		case <-c.qc.Context().Done():
			st.Reset(h3.CodeRequestCancelled)
			return true
		}
	}
	st.respond(425)
	return true
}

// openControl opens our control stream and sends its type and SETTINGS in
// one write (RFC 9114 §6.2.1: SETTINGS first). The QPACK dynamic table
// capacity is left at its default, 0.
func (c *Conn) openControl() error {
	s, err := c.qc.OpenUniStream()
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.ctrl = s // Shutdown writes GOAWAY on it
	c.mu.Unlock()
	b := h3.AppendVarint(make([]byte, 0, 32), uint64(h3.StreamControl))
	b = h3.AppendSettings(b, &h3.Settings{MaxFieldSectionSize: uint64(c.cfg.MaxHeaderBytes), HasMaxFieldSectionSize: true, EnableConnectProtocol: c.cfg.EnableConnectProtocol})
	n, err := s.Write(b)
	c.wrote(n)
	return err
}

// wrote counts n bytes written in Config.BytesOut.
func (c *Conn) wrote(n int) {
	if c.cfg.BytesOut != nil && n > 0 {
		c.cfg.BytesOut.Add(uint64(n))
	}
}

// Shutdown sends GOAWAY with the first stream ID the engine will not
// process (streams from it on are refused with H3_REQUEST_REJECTED), waits
// for the streams in progress to finish or ctx to be done, and closes the
// connection with H3_NO_ERROR.
func (c *Conn) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	if c.goaway < 0 {
		c.goaway = c.maxID + 4
		if c.maxID < 0 {
			c.goaway = 0
		}
	}
	id := c.goaway
	wait := c.drained
	if wait == nil && c.active > 0 {
		wait = make(chan struct{})
		c.drained = wait
	}
	ctrl := c.ctrl
	c.mu.Unlock()
	var err error
	if ctrl != nil {
		var n int
		n, err = ctrl.Write(h3.AppendGoaway(nil, uint64(id)))
		c.wrote(n)
	}
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if err == nil {
		// CONNECTION_CLOSE drops stream data not yet sent or
		// acknowledged: give the last responses time to arrive, unless
		// the client closes first (it may, having seen GOAWAY).
		t := time.NewTimer(closeLinger)
		select {
		case <-t.C:
		case <-c.qc.Context().Done():
		case <-ctx.Done():
		}
		t.Stop()
	}
	c.qc.CloseWithError(uint64(h3.CodeNoError), "")
	return err
}

// closeLinger is how long Shutdown waits, once the streams in progress are
// done, before it closes the connection.
var closeLinger = time.Second

// closeWith closes the connection with err's code (a connection error).
func (c *Conn) closeWith(err error) {
	c.qc.CloseWithError(uint64(h3.CodeOf(err)), err.Error())
}

// acceptUni accepts the peer's unidirectional streams.
func (c *Conn) acceptUni() {
	defer c.uniActive.Done()
	ctx := c.qc.Context()
	for {
		rs, err := c.qc.AcceptUniStream(ctx)
		if err != nil {
			return
		}
		c.uniActive.Add(1)
		go c.serveUni(rs)
	}
}

// critical is one of the peer's critical streams (control, QPACK encoder
// or decoder) and what its reader keeps between goroutines: the control
// stream's state. The goroutine reading it has its reader, with a buffer
// from critBufs given back when it parks (nothing is buffered then, and the
// stream has not ended).
type critical struct {
	rs quicx.ReceiveStream
	t  h3.StreamType
	cs h3.ControlStream
	// used counts the instruction bytes read on a QPACK stream, within
	// qpackLimit.
	used int64
}

// critBufSize is a critical stream's read buffer: a frame header, a QPACK
// instruction's integer (QPACK streams) or a small frame's payload.
const critBufSize = 64

// critBufs holds the read buffers of critical streams no goroutine reads.
var critBufs = sync.Pool{New: func() any { return new([critBufSize]byte) }}

// critReader returns a reader of rs with a buffer from critBufs.
func (c *Conn) critReader(rs quicx.ReceiveStream) reader {
	return reader{r: rs, b: critBufs.Get().(*[critBufSize]byte)[:], in: c.cfg.BytesIn}
}

// dropBuf gives r's buffer back to critBufs.
func dropBuf(r *reader) {
	critBufs.Put((*[critBufSize]byte)(r.b))
	r.b = nil
}

// serveUni reads a unidirectional stream's type and then the stream.
func (c *Conn) serveUni(rs quicx.ReceiveStream) {
	defer c.uniActive.Done()
	r := c.critReader(rs)
	t, err := r.varint()
	if err != nil {
		// Ended or reset before its type: ignore it (RFC 9114 §6.2).
		dropBuf(&r)
		rs.CancelRead(uint64(h3.CodeStreamCreationError))
		rs.ReleaseStreamCredit()
		return
	}
	c.mu.Lock()
	err = c.uni.Accept(h3.StreamType(t))
	if err == h3.ErrUnknownStreamType {
		c.unknown++
		if int(c.unknown) > c.cfg.MaxUniStreams {
			err = errTooManyUni
		}
	}
	c.mu.Unlock()
	if err != nil {
		dropBuf(&r)
	}
	switch {
	case err == h3.ErrUnknownStreamType:
		rs.CancelRead(uint64(h3.CodeStreamCreationError))
		rs.ReleaseStreamCredit()
		return
	case err != nil:
		c.closeWith(err)
		return
	}
	c.readCritical(&critical{rs: rs, t: h3.StreamType(t)}, &r)
}

// readCritical reads a critical stream with r until it has been quiet for
// readerLinger (then it parks it) or it ends; its end, or an error in it,
// closes the connection.
func (c *Conn) readCritical(u *critical, r *reader) {
	var err error
	switch u.t {
	case h3.StreamControl:
		err = c.readControl(u, r)
	case h3.StreamQPACKEncoder:
		err = c.drainQPACK(u, r, h3.DrainEncoderStream)
	case h3.StreamQPACKDecoder:
		err = c.drainQPACK(u, r, h3.DrainDecoderStream)
	}
	dropBuf(r) // on errQuiet, nothing is buffered: await found it empty
	if err == errQuiet {
		c.park(u)
		return
	}
	var e *h3.Error
	switch {
	case errors.As(err, &e):
		c.closeWith(err)
	case c.qc.Context().Err() == nil:
		// The stream ended (FIN) or was reset while the connection
		// lives: RFC 9114 §6.2.1, RFC 9204 §4.2.
		c.closeWith(h3.ErrClosedCriticalStream)
	}
}

// errQuiet reports a critical stream with nothing new for readerLinger.
var errQuiet = errors.New("h3srv: critical stream quiet")

// await waits up to readerLinger for more of r's stream when nothing of it
// is buffered: errQuiet if none came.
func await(r *reader) error {
	if r.i < r.n {
		return nil
	}
	rs := r.r
	rs.SetReadDeadline(time.Now().Add(readerLinger))
	err := r.fill()
	rs.SetReadDeadline(time.Time{})
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		return errQuiet
	}
	return err
}

// park leaves u to be read again by resumeUni: when the peer ends or
// resets the stream (its final size is then known), or when the next
// request stream is accepted.
func (c *Conn) park(u *critical) {
	c.mu.Lock()
	if c.uniDone {
		c.mu.Unlock()
		return
	}
	n := c.nparked.Load()
	c.parked[n] = u // one stream of each critical type: never more than 3
	c.nparked.Store(n + 1)
	c.mu.Unlock()
	// Set once u is in parked, so that a final size known already (the
	// callback runs at once) or learned meanwhile resumes it. A callback
	// left from an earlier park, once u is read again, finds nothing
	// parked or resumes the others early: both harmless.
	u.rs.SetReceiveFinalSizeCallback(c.finalSize)
}

// finalSize is a parked critical stream's final size callback: it ended.
func (c *Conn) finalSize(int64) { c.resumeUni() }

// resumeUni starts a reader for each parked critical stream.
func (c *Conn) resumeUni() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.uniDone {
		return
	}
	for i, u := range c.parked[:c.nparked.Load()] {
		c.parked[i] = nil
		c.uniActive.Add(1)
		go c.resumeCritical(u)
	}
	c.nparked.Store(0)
}

// resumeCritical reads a parked critical stream again.
func (c *Conn) resumeCritical(u *critical) {
	defer c.uniActive.Done()
	u.rs.SetReceiveFinalSizeCallback(nil)
	r := c.critReader(u.rs)
	c.readCritical(u, &r)
}

// waitUni waits for the goroutines reading the peer's unidirectional
// streams once the connection is closed, and stops parked streams from
// being read again.
func (c *Conn) waitUni() {
	c.mu.Lock()
	c.uniDone = true
	c.parked = [3]*critical{}
	c.nparked.Store(0)
	c.mu.Unlock()
	c.uniActive.Wait()
}

var errTooManyUni = &h3.Error{Code: h3.CodeExcessiveLoad, Conn: true, Reason: "too many unidirectional streams of unknown type"}

// readControl reads the peer's control stream to its end, or until it is
// quiet (errQuiet).
func (c *Conn) readControl(u *critical, r *reader) error {
	var payload []byte
	for {
		if err := await(r); err != nil {
			return err
		}
		h, err := r.frameHeader()
		if err != nil {
			return err
		}
		skip, err := u.cs.Check(h, &c.lim)
		if err != nil {
			return err
		}
		if skip {
			if err := r.skip(h.Length); err != nil {
				return err
			}
			continue
		}
		// Check bounded h.Length (SETTINGS 8 KiB, PRIORITY_UPDATE 1 KiB,
		// the others 8 bytes).
		if uint64(cap(payload)) < h.Length {
			payload = make([]byte, h.Length)
		}
		p := payload[:h.Length]
		if err := r.readFull(p); err != nil {
			return err
		}
		if err := u.cs.Apply(h, p); err != nil {
			return err
		}
		if h.Type == h3.FrameSettings && cap(payload) > 64 {
			payload = nil // a large SETTINGS buffer is not kept
		}
	}
}

// QPACK stream budgets. With a dynamic table of capacity 0 on both sides,
// the peer's encoder stream has nothing to carry but Set Dynamic Table
// Capacity 0, and its decoder stream a Stream Cancellation per request
// stream at most: a QPACK stream gets qpackBudget bytes of instructions
// over the connection's life, the decoder stream qpackPerStream more per
// request stream accepted. Beyond, H3_EXCESSIVE_LOAD closes the
// connection: instructions that change nothing would otherwise be read
// without end, each costing the server CPU (a client repeating Set
// Dynamic Table Capacity 0 sent 307 MiB in 3 s).
const (
	qpackBudget    = 1 << 10
	qpackPerStream = 16 // a Stream Cancellation of any stream ID is at most 10
)

var errQPACKLoad = &h3.Error{Code: h3.CodeExcessiveLoad, Conn: true, Reason: "QPACK stream instructions beyond their budget"}

// qpackLimit returns the instruction bytes the peer's QPACK stream of type
// t may carry now.
func (c *Conn) qpackLimit(t h3.StreamType) int64 {
	if t != h3.StreamQPACKDecoder {
		return qpackBudget
	}
	c.mu.Lock()
	streams := c.maxID/4 + 1 // the request streams accepted (IDs 0, 4, 8, ...)
	c.mu.Unlock()
	return qpackBudget + qpackPerStream*streams
}

// drainQPACK reads the QPACK stream u through drain to its end, or until
// it is quiet (errQuiet), within its budget (qpackLimit).
func (c *Conn) drainQPACK(u *critical, r *reader, drain func([]byte) (int, error)) error {
	for {
		n, err := drain(r.b[r.i:r.n])
		r.i += n
		if err != nil {
			return err
		}
		u.used += int64(n)
		if u.used > qpackBudget && u.used > c.qpackLimit(u.t) {
			return errQPACKLoad
		}
		if r.n-r.i == len(r.b) {
			// A partial instruction filling the buffer: a QPACK integer
			// never needs 64 bytes.
			return h3.ErrEncoderStream
		}
		if r.i == r.n {
			err = await(r)
		} else {
			err = r.fill()
		}
		if err != nil {
			return err
		}
	}
}

// reserve takes n bytes from the header budget.
func (c *Conn) reserve(n int64) bool {
	if c.budget.Add(-n) < 0 {
		c.budget.Add(n)
		return false
	}
	return true
}

// release returns n bytes to the header budget.
func (c *Conn) release(n int64) { c.budget.Add(n) }

// activeStreams returns the number of request streams being served.
func (c *Conn) activeStreams() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return int(c.active)
}
