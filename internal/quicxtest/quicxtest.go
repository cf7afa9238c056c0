// Package quicxtest is an in-memory implementation of the quicx interfaces:
// a pair of connected Conns whose streams are pipes, for testing HTTP/3
// logic without QUIC. It models what that logic depends on: a limit on the
// peer's concurrent streams whose credit returns only when the receiver
// calls ReleaseStreamCredit (quic-go's RequireStreamCreditRelease), a
// flow-control window per stream direction, RESET_STREAM and STOP_SENDING
// with codes (buffered data is dropped, as QUIC does), deadlines,
// connection close with an application code, and the handshake/0-RTT state.
package quicxtest

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riptide-http/riptide/quicx"
)

// Options configure a Pair. A zero field takes its default.
type Options struct {
	// MaxStreams and MaxUniStreams bound the streams each side may have
	// open towards the other at once (credit is returned by the receiver's
	// ReleaseStreamCredit). Default 100 and 8.
	MaxStreams, MaxUniStreams int
	// Window bounds the bytes buffered unread in one direction of a
	// stream; a Write beyond it blocks. Default 256 KiB.
	Window int
	// Used0RTT makes the server side report 0-RTT data and its handshake
	// incomplete until CompleteHandshake is called.
	Used0RTT bool
	// AcceptQueue is the capacity of each side's accept queues. Default 4096.
	AcceptQueue int
}

// StreamError is a stream's reset or stop-sending with an application code,
// as its Read or Write returns it.
type StreamError struct {
	Code   uint64
	Remote bool
}

func (e *StreamError) Error() string {
	who := "local"
	if e.Remote {
		who = "remote"
	}
	return "quicxtest: stream " + who + " error 0x" + strconv.FormatUint(e.Code, 16)
}

// ConnError is a connection's close with an application code.
type ConnError struct {
	Code   uint64
	Reason string
	Remote bool
}

func (e *ConnError) Error() string {
	return "quicxtest: connection closed 0x" + strconv.FormatUint(e.Code, 16) + ": " + e.Reason
}

// ErrNoCredit is returned by OpenStream when the peer's stream limit is
// reached.
var ErrNoCredit = errors.New("quicxtest: too many open streams")

// shared is the state both sides of a connection share.
type shared struct {
	mu      sync.Mutex
	cond    *sync.Cond
	closed  error // the first close, seen from the closer's side
	closer  *Conn
	cancel  context.CancelFunc
	ctx     context.Context
	opts    Options
	hsDone  chan struct{}
	hsOnce  sync.Once
	streams map[*pipe]struct{}
}

// Conn is one side of an in-memory connection. It implements quicx.Conn.
type Conn struct {
	sh     *shared
	client bool
	peer   *Conn

	accept    chan *Stream
	acceptUni chan *Stream
	nextBidi  int64
	nextUni   int64
	// open counts the streams this side opened that the peer holds
	// credit for (guarded by sh.mu).
	open, openUni int
	// hold keeps the peer's new bidirectional streams from AcceptStream
	// until Deliver (guarded by sh.mu).
	hold bool
	held []*Stream
}

// Hold keeps the bidirectional streams the peer opens from now on out of
// AcceptStream until Deliver hands them over: a test prepares streams
// (their allocations) before measuring how the acceptor serves them.
func (c *Conn) Hold() {
	c.sh.mu.Lock()
	c.hold = true
	c.sh.mu.Unlock()
}

// Deliver hands over the oldest held stream to AcceptStream.
func (c *Conn) Deliver() {
	c.sh.mu.Lock()
	s := c.held[0]
	c.held = c.held[1:]
	c.sh.mu.Unlock()
	c.accept <- s
}

// Reserve gives the stream's receive buffer room for n bytes, so that the
// peer's writes up to n do not allocate.
func (s *Stream) Reserve(n int) {
	s.conn.sh.mu.Lock()
	s.recv.buf = make([]byte, 0, n)
	s.conn.sh.mu.Unlock()
}

// PeerWrites returns how many Write calls the peer made on the stream.
func (s *Stream) PeerWrites() int {
	s.conn.sh.mu.Lock()
	defer s.conn.sh.mu.Unlock()
	return s.recv.writes
}

// Unread returns how many bytes written on the stream the peer has not
// read (nor dropped).
func (s *Stream) Unread() int {
	s.conn.sh.mu.Lock()
	defer s.conn.sh.mu.Unlock()
	return len(s.send.buf)
}

var _ quicx.Conn = (*Conn)(nil)

// Pair returns the server and client sides of a new connection.
func Pair(o Options) (server, client *Conn) {
	if o.MaxStreams == 0 {
		o.MaxStreams = 100
	}
	if o.MaxUniStreams == 0 {
		o.MaxUniStreams = 8
	}
	if o.Window == 0 {
		o.Window = 256 << 10
	}
	if o.AcceptQueue == 0 {
		o.AcceptQueue = 4096
	}
	sh := &shared{opts: o, hsDone: make(chan struct{}), streams: map[*pipe]struct{}{}}
	sh.cond = sync.NewCond(&sh.mu)
	sh.ctx, sh.cancel = context.WithCancel(context.Background())
	server = &Conn{sh: sh, nextBidi: 1, nextUni: 3}
	client = &Conn{sh: sh, client: true, nextBidi: 0, nextUni: 2}
	for _, c := range []*Conn{server, client} {
		c.accept = make(chan *Stream, o.AcceptQueue)
		c.acceptUni = make(chan *Stream, o.AcceptQueue)
	}
	server.peer, client.peer = client, server
	if !o.Used0RTT {
		sh.CompleteHandshake()
	}
	return server, client
}

// CompleteHandshake closes HandshakeComplete (a Pair without Used0RTT
// starts complete).
func (c *Conn) CompleteHandshake() { c.sh.CompleteHandshake() }

func (sh *shared) CompleteHandshake() { sh.hsOnce.Do(func() { close(sh.hsDone) }) }

// OpenStream opens a bidirectional stream towards the peer, or returns
// ErrNoCredit when the peer's limit is reached.
func (c *Conn) OpenStream() (*Stream, error) { return c.open1(false, false) }

// OpenStreamSync is OpenStream waiting for credit until ctx is done.
func (c *Conn) OpenStreamSync(ctx context.Context) (*Stream, error) {
	stop := context.AfterFunc(ctx, func() {
		c.sh.mu.Lock()
		c.sh.cond.Broadcast()
		c.sh.mu.Unlock()
	})
	defer stop()
	for {
		s, err := c.open1(false, true)
		if err != ErrNoCredit {
			return s, err
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// open1 opens a stream; with wait it waits once for credit to change.
func (c *Conn) open1(uni, wait bool) (*Stream, error) {
	sh := c.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.closed != nil {
		return nil, c.closeErr()
	}
	n, limit := &c.open, sh.opts.MaxStreams
	if uni {
		n, limit = &c.openUni, sh.opts.MaxUniStreams
	}
	if *n >= limit {
		if wait {
			sh.cond.Wait()
		}
		return nil, ErrNoCredit
	}
	*n++
	var id int64
	if uni {
		id, c.nextUni = c.nextUni, c.nextUni+4
	} else {
		id, c.nextBidi = c.nextBidi, c.nextBidi+4
	}
	out := newPipe(sh) // c → peer
	local := &Stream{conn: c, id: id, send: out, credit: make(chan struct{})}
	remote := &Stream{conn: c.peer, id: id, recv: out, opener: c, uni: uni, credit: local.credit}
	if !uni {
		in := newPipe(sh) // peer → c
		local.recv, remote.send = in, in
		local.ctx, local.cancel = context.WithCancel(sh.ctx)
		remote.ctx, remote.cancel = context.WithCancel(sh.ctx)
		// STOP_SENDING from a reader ends its writer's Context.
		in.onStop = remote.cancel
		out.onStop = local.cancel
	}
	q := c.peer.accept
	if uni {
		q = c.peer.acceptUni
	} else if c.peer.hold {
		c.peer.held = append(c.peer.held, remote)
		return local, nil
	}
	select {
	case q <- remote:
	default:
		panic("quicxtest: accept queue full")
	}
	return local, nil
}

func (c *Conn) closeErr() error {
	e := *c.sh.closed.(*ConnError)
	e.Remote = c.sh.closer != c
	return &e
}

// OpenUniStream opens a unidirectional stream towards the peer.
func (c *Conn) OpenUniStream() (quicx.SendStream, error) {
	s, err := c.open1(true, false)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// OpenUni is OpenUniStream returning the concrete type.
func (c *Conn) OpenUni() (*Stream, error) { return c.open1(true, false) }

// AcceptStream returns the next bidirectional stream the peer opened.
func (c *Conn) AcceptStream(ctx context.Context) (quicx.Stream, error) {
	s, err := c.AcceptStreamX(ctx, c.accept)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// AcceptUniStream returns the next unidirectional stream the peer opened.
func (c *Conn) AcceptUniStream(ctx context.Context) (quicx.ReceiveStream, error) {
	s, err := c.AcceptStreamX(ctx, c.acceptUni)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// AcceptStreamX takes the next stream from q (the accept queues).
func (c *Conn) AcceptStreamX(ctx context.Context, q chan *Stream) (*Stream, error) {
	select {
	case s := <-q:
		return s, nil
	default:
	}
	select {
	case s := <-q:
		return s, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.sh.ctx.Done():
		c.sh.mu.Lock()
		defer c.sh.mu.Unlock()
		return nil, c.closeErr()
	}
}

// CloseWithError closes the connection: every stream fails, both sides'
// Context is done, and CloseCode reports code.
func (c *Conn) CloseWithError(code uint64, reason string) error {
	sh := c.sh
	sh.mu.Lock()
	if sh.closed == nil {
		sh.closed = &ConnError{Code: code, Reason: reason}
		sh.closer = c
		for p := range sh.streams {
			p.buf = nil
		}
		sh.cond.Broadcast()
	}
	sh.mu.Unlock()
	sh.cancel()
	return nil
}

// CloseCode returns the connection's close error as this side sees it, or
// nil while it is open.
func (c *Conn) CloseCode() *ConnError {
	c.sh.mu.Lock()
	defer c.sh.mu.Unlock()
	if c.sh.closed == nil {
		return nil
	}
	return c.closeErr().(*ConnError)
}

// OpenStreams returns how many bidirectional streams this side opened that
// the peer has not released credit for.
func (c *Conn) OpenStreams() int {
	c.sh.mu.Lock()
	defer c.sh.mu.Unlock()
	return c.open
}

// Context is done when the connection is closed.
func (c *Conn) Context() context.Context { return c.sh.ctx }

// HandshakeComplete is closed when the handshake completes.
func (c *Conn) HandshakeComplete() <-chan struct{} { return c.sh.hsDone }

// State reports 0-RTT use on the server side as configured.
func (c *Conn) State() quicx.State {
	return quicx.State{TLS: tls.ConnectionState{NegotiatedProtocol: "h3", HandshakeComplete: true}, Used0RTT: c.sh.opts.Used0RTT && !c.client}
}

// LocalAddr returns a fixed loopback address.
func (c *Conn) LocalAddr() net.Addr { return c.addr(!c.client) }

// RemoteAddr returns a fixed loopback address.
func (c *Conn) RemoteAddr() net.Addr { return c.addr(c.client) }

func (c *Conn) addr(server bool) net.Addr {
	if server {
		return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 443}
	}
	return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}
}

// pipe is one direction of a stream.
type pipe struct {
	sh       *shared
	buf      []byte
	fin      bool
	reset    *StreamError // RESET_STREAM from the writer
	stop     StreamError  // STOP_SENDING from the reader, if stopped
	stopped  bool
	finished bool // the writer is done (FIN or reset)
	rdl, wdl time.Time
	rtimer   *time.Timer
	wtimer   *time.Timer
	onStop   context.CancelFunc // cancels the writer's Context
	writes   int                // Write calls that added bytes
	size     int64              // bytes written: the final size once finished
	onFinal  func(int64)        // the reader's final size callback
}

// finish marks p finished by its writer, with p.sh.mu held, and returns
// the reader's final size callback to call once the lock is released.
func (p *pipe) finish() func(int64) {
	p.finished = true
	f := p.onFinal
	p.onFinal = nil
	return f
}

func newPipe(sh *shared) *pipe {
	p := &pipe{sh: sh}
	sh.streams[p] = struct{}{}
	return p
}

// Stream is one side's view of a stream. It implements quicx.Stream; a
// unidirectional stream has only its send or only its receive half.
type Stream struct {
	conn   *Conn
	id     int64
	send   *pipe
	recv   *pipe
	opener *Conn // on the receiving side: who holds the credit
	uni    bool
	ctx    context.Context
	cancel context.CancelFunc

	creditOnce sync.Once
	credit     chan struct{}
}

var _ quicx.Stream = (*Stream)(nil)

// StreamID returns the stream's ID.
func (s *Stream) StreamID() int64 { return s.id }

// Context is done when the send half is finished, stopped by the peer, or
// the connection closed.
func (s *Stream) Context() context.Context {
	if s.ctx == nil {
		return s.conn.sh.ctx
	}
	return s.ctx
}

// Read reads buffered data, waiting for it.
func (s *Stream) Read(b []byte) (int, error) {
	p := s.recv
	sh := p.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	for {
		switch {
		case p.stopped:
			return 0, &StreamError{Code: p.stop.Code}
		case len(p.buf) > 0:
			n := copy(b, p.buf)
			p.buf = p.buf[n:]
			if len(p.buf) == 0 {
				p.buf = p.buf[:0:0]
			}
			sh.cond.Broadcast()
			return n, nil
		case p.reset != nil:
			return 0, p.reset
		case p.fin:
			return 0, io.EOF
		case sh.closed != nil:
			return 0, s.conn.closeErr()
		case !p.rdl.IsZero() && !time.Now().Before(p.rdl):
			return 0, os.ErrDeadlineExceeded
		}
		sh.cond.Wait()
	}
}

// Write buffers data within the window, waiting for room.
func (s *Stream) Write(b []byte) (int, error) {
	p := s.send
	sh := p.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	n := 0
	for {
		switch {
		case p.stopped:
			return n, &StreamError{Code: p.stop.Code, Remote: true}
		case p.finished:
			return n, errors.New("quicxtest: write on a finished stream")
		case sh.closed != nil:
			return n, s.conn.closeErr()
		case !p.wdl.IsZero() && !time.Now().Before(p.wdl):
			return n, os.ErrDeadlineExceeded
		}
		if room := sh.opts.Window - len(p.buf); room > 0 {
			if n == 0 {
				p.writes++
			}
			k := min(room, len(b)-n)
			p.buf = append(p.buf, b[n:n+k]...)
			p.size += int64(k)
			n += k
			sh.cond.Broadcast()
			if n == len(b) {
				return n, nil
			}
		}
		sh.cond.Wait()
	}
}

// Close sends a FIN.
func (s *Stream) Close() error {
	p := s.send
	var final func(int64)
	p.sh.mu.Lock()
	if !p.finished {
		p.fin = true
		final = p.finish()
		p.sh.cond.Broadcast()
	}
	size := p.size
	p.sh.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
	if final != nil {
		final(size)
	}
	return nil
}

// CancelWrite sends RESET_STREAM: buffered data is dropped and the
// reader's next Read returns a StreamError with code.
func (s *Stream) CancelWrite(code uint64) {
	p := s.send
	var final func(int64)
	p.sh.mu.Lock()
	if !p.finished {
		final = p.finish()
		p.reset = &StreamError{Code: code, Remote: true}
		p.buf = nil
		p.sh.cond.Broadcast()
	}
	size := p.size
	p.sh.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
	if final != nil {
		final(size)
	}
}

// CancelRead sends STOP_SENDING: buffered data is dropped and the
// writer's next Write returns a StreamError with code.
func (s *Stream) CancelRead(code uint64) {
	p := s.recv
	p.sh.mu.Lock()
	defer p.sh.mu.Unlock()
	if !p.stopped {
		p.stop, p.stopped = StreamError{Code: code}, true
		p.buf = nil
		p.sh.cond.Broadcast()
		if p.onStop != nil {
			p.onStop()
		}
	}
}

// SetReceiveFinalSizeCallback sets f to be called once the writer has
// finished the stream (FIN or reset), at once if it has; nil removes it.
// Unlike quic-go's, it runs on the writer's goroutine.
func (s *Stream) SetReceiveFinalSizeCallback(f func(int64)) {
	p := s.recv
	p.sh.mu.Lock()
	if !p.finished {
		p.onFinal = f
		p.sh.mu.Unlock()
		return
	}
	size := p.size
	p.sh.mu.Unlock()
	if f != nil {
		f(size)
	}
}

// SetReadDeadline sets the read deadline.
func (s *Stream) SetReadDeadline(t time.Time) error {
	setDeadline(s.recv, &s.recv.rdl, &s.recv.rtimer, t)
	return nil
}

// SetWriteDeadline sets the write deadline.
func (s *Stream) SetWriteDeadline(t time.Time) error {
	setDeadline(s.send, &s.send.wdl, &s.send.wtimer, t)
	return nil
}

func setDeadline(p *pipe, dl *time.Time, tm **time.Timer, t time.Time) {
	p.sh.mu.Lock()
	defer p.sh.mu.Unlock()
	*dl = t
	if *tm != nil {
		(*tm).Stop()
		*tm = nil
	}
	if !t.IsZero() {
		*tm = time.AfterFunc(time.Until(t), func() {
			p.sh.mu.Lock()
			p.sh.cond.Broadcast()
			p.sh.mu.Unlock()
		})
	}
	p.sh.cond.Broadcast()
}

// ReleaseStreamCredit lets the opener open another stream in place of this
// one. Only the first call counts.
func (s *Stream) ReleaseStreamCredit() {
	if s.opener == nil {
		return
	}
	s.creditOnce.Do(func() {
		sh := s.conn.sh
		sh.mu.Lock()
		if s.uni {
			s.opener.openUni--
		} else {
			s.opener.open--
		}
		delete(sh.streams, s.recv)
		if s.send != nil {
			delete(sh.streams, s.send)
		}
		sh.cond.Broadcast()
		sh.mu.Unlock()
		close(s.credit)
	})
}

// Released is closed when the receiving side released the stream's credit.
func (s *Stream) Released() <-chan struct{} { return s.credit }

// ResetCode reports the code of a RESET_STREAM this side received on the
// stream (peer CancelWrite) and of a STOP_SENDING (peer CancelRead) the
// peer sent for this side's writes, 0 and false when none.
func (s *Stream) ResetCode() (reset, stop uint64, hasReset, hasStop bool) {
	s.conn.sh.mu.Lock()
	defer s.conn.sh.mu.Unlock()
	if s.recv != nil && s.recv.reset != nil {
		reset, hasReset = s.recv.reset.Code, true
	}
	if s.send != nil && s.send.stopped {
		stop, hasStop = s.send.stop.Code, true
	}
	return
}

// Gauge counts things in progress (handlers in flight) and keeps the
// highest count reached. Safe for concurrent use.
type Gauge struct{ cur, peak atomic.Int32 }

// Inc counts one more.
func (g *Gauge) Inc() {
	now := g.cur.Add(1)
	for {
		old := g.peak.Load()
		if now <= old || g.peak.CompareAndSwap(old, now) {
			return
		}
	}
}

// Dec counts one less.
func (g *Gauge) Dec() { g.cur.Add(-1) }

// Load returns the count.
func (g *Gauge) Load() int32 { return g.cur.Load() }

// Peak returns the highest count reached.
func (g *Gauge) Peak() int32 { return g.peak.Load() }

// LiveHeap returns the bytes of live heap objects after two collections,
// for tests that check a bound on memory or its return to a baseline.
func LiveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
