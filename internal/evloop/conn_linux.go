package evloop

import (
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Conn is one socket of the engine and the net.Conn that the server's
// protocol code reads and writes. It is small on purpose: it is all an
// idle connection costs.
//
// Ownership: the connection is idle (owned by its loop, no goroutine) or
// busy (owned by one worker goroutine, which runs the protocol code; a
// disconnect watch may read concurrently). st holds that bit and the
// readiness edges that arrive while busy, so an edge is never lost: the
// loop sets stReadReady/stWriteReady and wakes the worker; a worker that
// wants to park first checks stReadReady and then swaps busy for idle in
// one compare-and-swap (Park). Saved and the partial head are written by
// the owning worker before that swap and read by the next owner after it.
type Conn struct {
	fd int
	lp *loop
	st atomic.Uint32
	// Status is the server's state of the connection (riptide's
	// ConnState), mirrored here so that it can be read while parked; the
	// engine never reads it.
	Status  atomic.Int32
	w       atomic.Pointer[Worker] // the owner's wake channels while busy
	refs    atomic.Int32           // syscalls in flight on fd
	dying   atomic.Bool            // destroy started: no more syscalls on fd
	shut    atomic.Bool            // Close called: I/O fails with net.ErrClosed
	fresh   bool                   // not served yet: Serve is told so
	drained bool                   // the last read came back short: the socket is empty
	// keepDrained: handed to a worker by WakeToWrite, with no readable
	// edge: drained stays as the last read left it.
	keepDrained bool
	detached    bool         // hijacked: the fd left the engine
	rdl         atomic.Int64 // read deadline, unix nanoseconds, 0 none
	wdl         atomic.Int64 // write deadline
	raddr       netip.AddrPort
	// raddrTCP is raddr as RemoteAddr returns it, made by its first call.
	raddrTCP atomic.Pointer[net.TCPAddr]
	// Born is the server clock's second when the socket was accepted.
	Born int64
	// Saved is the protocol's state across a park (see Park).
	Saved Saved

	partial *[]byte // an incomplete head, from headPool (see Park)
}

// Saved is what the protocol keeps across a park, besides a partial head:
// stored by the worker that parks the connection and handed back to the
// next one. The engine reads none of it; the fields are the HTTP/1.1
// server's (requests served, the armed deadlines, whether the header
// timeout runs).
type Saved struct {
	NReq         int
	RSec, WSec   int64
	RKind, WKind uint8
	HeadArmed    bool
	// RemoteAddr and LocalAddr are the server's copies of the
	// connection's addresses (the compat door's Request.RemoteAddr and
	// local address), kept so that they are made once per connection,
	// not by every worker that serves one of its requests.
	RemoteAddr string
	LocalAddr  net.Addr
	// Session is the protocol's own state of the connection that must
	// outlive a park (riptide: the crypto/tls connection over this socket,
	// with its keys and any partial record; see the root's tlsloop_linux.go).
	Session any
	// Proto is protocol state that lives beyond the park (a parked HTTP/2
	// connection: its settings, windows and HPACK tables), nil for none.
	// A connection parked with it is never closed without a worker (on a
	// hang-up or a passed deadline): its protocol code must end it.
	Proto any
}

// st bits.
const (
	stBusy       = 1 << iota // a worker owns the connection
	stReadReady              // readable edge while busy
	stWriteReady             // writable edge while busy
	// stHup: the peer shut down its side (sticky). A FIN queued behind the
	// data makes no new edge, so a short read no longer means empty.
	stHup
	// stWantOut: parked with output queued (ParkFor): a writable edge
	// hands the connection to a worker as a readable one does.
	stWantOut
)

// acquire pins fd for one syscall; false once the socket is being closed.
func (c *Conn) acquire() bool {
	c.refs.Add(1)
	if c.dying.Load() {
		c.refs.Add(-1)
		return false
	}
	return true
}

func (c *Conn) release() { c.refs.Add(-1) }

// deadlinePassed reports whether the deadline d (unix nanoseconds) is set
// and in the past. A deadline two seconds or more past the server clock's
// second has not passed (the clock lags by at most a tick): that spares the
// clock read (~150 ns on a VM, several per request) for the usual idle and
// header timeouts. A wait that timed out re-checks with deadlineReached, so
// a clock that fell behind cannot turn an expired wait into a busy loop.
func (c *Conn) deadlinePassed(d int64) bool {
	if d == 0 {
		return false
	}
	if sec := c.lp.g.cfg.Clock.Load(); sec != 0 && d >= (sec+2)*int64(time.Second) {
		return false
	}
	return time.Now().UnixNano() >= d
}

// deadlineReached is deadlinePassed read from the real clock.
func deadlineReached(d int64) bool { return d != 0 && time.Now().UnixNano() >= d }

// Read reads without blocking a thread: on EAGAIN it waits for the loop's
// readable edge, the deadline or Close.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if err := c.readable(); err != nil {
			return 0, err
		}
		n, err := c.RawRead(p)
		if n > 0 {
			return n, nil
		}
		if err != unix.EAGAIN {
			return 0, err
		}
		if err := c.waitRead(); err != nil {
			return 0, err
		}
	}
}

// readable reports why a read cannot go on (Close, the read deadline), or
// nil.
func (c *Conn) readable() error {
	if c.shut.Load() {
		return net.ErrClosed
	}
	if c.deadlinePassed(c.rdl.Load()) {
		return os.ErrDeadlineExceeded
	}
	return nil
}

// waitRead waits, once, for a readable edge (or Wake), the read deadline
// or Close; a readable edge already seen returns at once.
func (c *Conn) waitRead() error {
	if w := c.w.Load(); w != nil && c.st.Load()&stReadReady == 0 {
		if w.wait(w.rwake, &w.rtimer, c.rdl.Load()) && deadlineReached(c.rdl.Load()) {
			return os.ErrDeadlineExceeded
		}
	}
	return nil
}

// TryRead is Read without the wait: it reports 0 bytes and a nil error
// when the socket has nothing to read now (the owner may then Park, or
// WaitRead).
func (c *Conn) TryRead(p []byte) (int, error) {
	if err := c.readable(); err != nil {
		return 0, err
	}
	n, err := c.RawRead(p)
	if err == unix.EAGAIN {
		return 0, nil
	}
	return n, err
}

// WaitRead waits for a readable edge or a Wake, the read deadline or
// Close, and reports the last two as Read would; then the owner reads
// again (TryRead), which may still find nothing. It also returns, with a
// nil error, at until (Unix nanoseconds; 0: no such time) if that comes
// first.
func (c *Conn) WaitRead(until int64) error {
	if err := c.readable(); err != nil {
		return err
	}
	d := c.rdl.Load()
	if until == 0 || d != 0 && d < until {
		return c.waitRead()
	}
	if w := c.w.Load(); w != nil && c.st.Load()&stReadReady == 0 {
		w.wait(w.rwake, &w.rtimer, until)
	}
	return nil
}

// Wake acts as a readable edge: a parked connection is handed to a worker
// (Handler.Serve, not fresh), and a busy one's owner, waiting to read or
// about to Park, reads again instead. Any goroutine may call it while the
// connection is in the engine: a protocol whose timers or other
// goroutines produce output for a parked connection (HTTP/2's GOAWAY,
// PING) wakes it so that its own code sends it.
func (c *Conn) Wake() {
	if c.claim(unix.EPOLLIN) {
		c.lp.g.dispatch(c)
	}
}

// WakeToWrite hands a parked connection to a worker through its loop's
// queue, as a readable edge would, for output its protocol gathered while
// it was parked (an event-driven WebSocket's coalesced writes): the
// connection's own turn writes it, behind the other connections the loop
// has queued, so that writes made for it meanwhile go out together. The
// socket's drained state is kept: a turn that finds the connection Empty
// may park again without a read. It reports false, doing nothing, when
// the connection is busy: its owner serves it anyway.
func (c *Conn) WakeToWrite() bool {
	if !c.claimIdle() {
		return false
	}
	c.keepDrained = true
	c.w.Store(nil)
	c.lp.queue(c)
	return true
}

// RawRead is one non-blocking read(2); it records whether the socket is
// now empty (with edge-triggered epoll a short read means it is).
func (c *Conn) RawRead(p []byte) (int, error) {
	for {
		if !c.acquire() {
			return 0, net.ErrClosed
		}
		c.st.And(^uint32(stReadReady))
		n, err := rawSysRead(c.fd, p)
		c.release()
		switch {
		case n > 0:
			c.drained = n < len(p)
			return n, nil
		case err == nil:
			return 0, io.EOF
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			c.drained = true
		}
		return 0, err
	}
}

// Write writes all of p, waiting for the loop's writable edge while the
// kernel's buffer is full (backpressure), up to the write deadline.
func (c *Conn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := c.TryWrite(func(fd int) (int, error) {
			RaceRelease(fd)
			return rawSysWrite(fd, p[done:])
		})
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// Writev writes the concatenation of bufs with writev(2), as Write does.
func (c *Conn) Writev(bufs [][]byte) (int64, error) {
	var total int64
	for len(bufs) > 0 {
		n, err := c.TryWrite(func(fd int) (int, error) {
			RaceRelease(fd)
			return rawSysWritev(fd, bufs)
		})
		total += int64(n)
		for n > 0 && len(bufs) > 0 {
			k := min(n, len(bufs[0]))
			bufs[0] = bufs[0][k:]
			n -= k
			if len(bufs[0]) == 0 {
				bufs = bufs[1:]
			}
		}
		for len(bufs) > 0 && len(bufs[0]) == 0 {
			bufs = bufs[1:]
		}
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// TryWrite runs one write syscall; on EAGAIN it waits for writability and
// reports 0 bytes and no error (the caller loops).
func (c *Conn) TryWrite(write func(fd int) (int, error)) (int, error) {
	if c.shut.Load() {
		return 0, net.ErrClosed
	}
	if c.deadlinePassed(c.wdl.Load()) {
		return 0, os.ErrDeadlineExceeded
	}
	if !c.acquire() {
		return 0, net.ErrClosed
	}
	c.st.And(^uint32(stWriteReady))
	n, err := write(c.fd)
	c.release()
	switch {
	case n > 0:
		return n, nil
	case err == unix.EINTR:
		return 0, nil
	case err == unix.EAGAIN:
		if w := c.w.Load(); w != nil && c.st.Load()&stWriteReady == 0 {
			if w.wait(w.wwake, &w.wtimer, c.wdl.Load()) && deadlineReached(c.wdl.Load()) {
				return 0, os.ErrDeadlineExceeded
			}
		}
		return 0, nil
	case err == nil:
		return 0, io.ErrShortWrite
	}
	return 0, err
}

// Close shuts the socket down and wakes every waiter; the owner closes the
// descriptor when it lets go (untrack). An idle connection is handed to a
// worker at once so that it is closed and counted out.
func (c *Conn) Close() error {
	if c.shut.Swap(true) {
		return nil
	}
	if c.acquire() {
		unix.Shutdown(c.fd, unix.SHUT_RDWR)
		c.release()
	}
	c.wakeAll()
	c.lp.g.dispatchIdle(c)
	return nil
}

// CloseWrite shuts down the writing side (a lingering close).
func (c *Conn) CloseWrite() error {
	if !c.acquire() {
		return net.ErrClosed
	}
	defer c.release()
	return unix.Shutdown(c.fd, unix.SHUT_WR)
}

func (c *Conn) wakeAll() {
	if w := c.w.Load(); w != nil {
		wake(w.rwake)
		wake(w.wwake)
	}
}

// LocalAddr returns the listener's address, or the socket's own when the
// listener is bound to an unspecified address.
func (c *Conn) LocalAddr() net.Addr {
	g := c.lp.g
	if !g.lnAddr.IP.IsUnspecified() {
		return g.lnAddr
	}
	if c.acquire() {
		sa, err := unix.Getsockname(c.fd)
		c.release()
		if err == nil {
			return sockaddrTCP(sa)
		}
	}
	return g.lnAddr
}

// RemoteAddr returns the client's address. It is made on the first call
// and the same *net.TCPAddr returned after, as a net.TCPConn does, so
// that a handler asking for it on every request allocates nothing.
func (c *Conn) RemoteAddr() net.Addr {
	if a := c.raddrTCP.Load(); a != nil {
		return a
	}
	a := net.TCPAddrFromAddrPort(c.raddr)
	if !c.raddrTCP.CompareAndSwap(nil, a) {
		return c.raddrTCP.Load()
	}
	return a
}

// SetDeadline sets both deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

// SetReadDeadline sets the read deadline and wakes a waiting reader. A
// past deadline on an idle connection hands it to a worker, which finds
// the deadline passed and closes it (how Shutdown closes idle connections).
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.rdl.Store(unixNano(t))
	if w := c.w.Load(); w != nil && c.st.Load()&stBusy != 0 {
		wake(w.rwake)
	} else if !t.IsZero() && !t.After(time.Now()) {
		c.lp.g.dispatchIdle(c)
	}
	return nil
}

// SetWriteDeadline sets the write deadline and wakes a waiting writer.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.wdl.Store(unixNano(t))
	if w := c.w.Load(); w != nil {
		wake(w.wwake)
	}
	return nil
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(t.UnixNano(), 1)
}

// headPool holds the small buffers that keep an incomplete head while its
// connection is parked.
var headPool sync.Pool

// Empty reports whether the socket has nothing to read now: the last read
// came back short and no readable edge or hang-up came since. The owner
// may then Park.
func (c *Conn) Empty() bool {
	return c.drained && c.st.Load()&(stReadReady|stHup) == 0
}

// OnLoop reports whether the connection's owner is its loop's leader: in
// on-loop mode, the handler runs on the loop goroutine (tests).
func (c *Conn) OnLoop() bool {
	w := c.w.Load()
	return w != nil && c.lp.leader.Load() == w
}

// Shut reports whether Close was called: I/O fails with net.ErrClosed.
func (c *Conn) Shut() bool { return c.shut.Load() }

// ReadDeadline returns the read deadline in Unix nanoseconds, 0 for none.
func (c *Conn) ReadDeadline() int64 { return c.rdl.Load() }

// ReadExpired reports whether the read deadline has passed.
func (c *Conn) ReadExpired() bool { return c.deadlinePassed(c.rdl.Load()) }

// Park hands the connection back to its loop, the owner being done with it
// until more comes: it keeps s and a copy of partial (an incomplete head)
// for the next owner and swaps busy for idle. The loop hands it to a worker
// again (Handler.Serve) on the next readable edge, or when its read
// deadline passes. It fails, undoing the copy, when a readable edge came in
// meanwhile: the owner reads on. The server's Status must be stored first.
func (c *Conn) Park(s Saved, partial []byte) bool {
	c.keepPartial(partial)
	c.Saved = s
	for {
		old := c.st.Load()
		if old&stReadReady != 0 {
			c.DropPartial()
			return false
		}
		if c.st.CompareAndSwap(old, old&stHup) {
			return true
		}
	}
}

// ParkFor is Park for a protocol that queues output of its own (an
// event-driven WebSocket): with wantWrite, the loop also hands the parked
// connection to a worker on the socket's next writable edge, and ParkFor
// fails when one came in since the owner's last write. The partial bytes
// are kept as Park keeps a partial head.
func (c *Conn) ParkFor(s Saved, partial []byte, wantWrite bool) bool {
	if !wantWrite {
		return c.Park(s, partial)
	}
	c.st.Or(stWantOut)
	if c.st.Load()&stWriteReady != 0 {
		c.st.And(^uint32(stWantOut))
		return false // the socket took more meanwhile: write again
	}
	c.keepPartial(partial)
	c.Saved = s
	for {
		old := c.st.Load()
		if old&(stReadReady|stWriteReady) != 0 {
			c.st.And(^uint32(stWantOut))
			c.DropPartial()
			return false
		}
		if c.st.CompareAndSwap(old, old&(stHup|stWantOut)) {
			return true
		}
	}
}

// WriteNow writes what the socket takes of bufs (up to 8 of them) with one
// writev(2), without waiting: 0 bytes and a nil error when its buffer is
// full. Unlike Write, any goroutine may call it, owner or not, parked or
// busy (the caller serializes its writes); the bytes it could not write
// are the caller's to keep and retry (ParkFor with wantWrite).
func (c *Conn) WriteNow(bufs [][]byte) (int, error) {
	if c.shut.Load() || !c.acquire() {
		return 0, net.ErrClosed
	}
	// The write consumes a writable edge seen while busy (ParkFor checks
	// for one); only protocols that write this way use WriteNow.
	c.st.And(^uint32(stWriteReady))
	RaceRelease(c.fd)
	n, err := rawSysWritev(c.fd, bufs)
	c.release()
	switch {
	case n >= 0 && err == nil:
		return n, nil
	case err == unix.EAGAIN || err == unix.EINTR:
		return 0, nil
	}
	return 0, err
}

// SetWakeAt sets the read deadline to d (Unix nanoseconds, 0: none)
// without waking anyone: for the owner of a connection that parks with
// Saved.Proto, whose protocol uses the deadline as its alarm (the scanner
// hands the parked connection to a worker once d passes; RawRead and
// WriteNow ignore it).
func (c *Conn) SetWakeAt(d int64) { c.rdl.Store(d) }

// keepPartial keeps a copy of partial, if any, in a pooled buffer.
func (c *Conn) keepPartial(partial []byte) {
	if len(partial) > 0 {
		bp, _ := headPool.Get().(*[]byte)
		if bp == nil {
			bp = new([]byte)
		}
		*bp = append((*bp)[:0], partial...)
		c.partial = bp
	}
}

// Partial returns the incomplete head Park kept, or nil. It stays valid
// until DropPartial.
func (c *Conn) Partial() []byte {
	if bp := c.partial; bp != nil {
		return *bp
	}
	return nil
}

// DropPartial releases the incomplete head Park kept.
func (c *Conn) DropPartial() {
	if bp := c.partial; bp != nil {
		c.partial = nil
		if cap(*bp) <= 4<<10 {
			headPool.Put(bp)
		}
	}
}

// Untrack ends the connection: its descriptor is closed (unless
// hijacked) and it is counted out (Handler.Gone). Called by the owner, or
// by Handler.CloseParked, once.
func (c *Conn) Untrack() {
	c.shut.Store(true)
	c.dying.Store(true)
	for c.refs.Load() != 0 {
		runtime.Gosched() // a concurrent non-blocking syscall: short
	}
	c.lp.remove(c)
	if !c.detached {
		unix.Close(c.fd)
	}
	c.DropPartial()
	c.w.Store(nil)
	g := c.lp.g
	g.nconns.Add(-1)
	g.h.Gone()
}

// closeHungUp closes c, just claimed from its loop after a park, when its
// peer hung up with nothing left to read, as a worker would (read EOF,
// conn.closeConn) but without one. This is how idle keep-alive connections
// usually end: when thousands of clients close at once, handing each
// hang-up to a worker would start a goroutine with its buffers per
// connection (about 20 KiB each, all at once). Anything else (data before
// the FIN, a partial head, which is lingered for) goes to a worker.
func (c *Conn) closeHungUp() bool {
	if c.st.Load()&stHup == 0 || c.partial != nil || c.Saved.Proto != nil || !c.acquire() {
		return false
	}
	var b [1]byte
	n, _, errno := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(c.fd),
		uintptr(unsafe.Pointer(&b[0])), 1, unix.MSG_PEEK|unix.MSG_DONTWAIT, 0, 0)
	c.release()
	if errno == 0 && n > 0 || errno == unix.EAGAIN || errno == unix.EINTR {
		return false // something to read, or not at the end yet
	}
	c.closeParked()
	return true
}

// closeExpired closes c, claimed by the scanner after a park, when its read
// deadline has passed and it holds no partial head (which a worker answers
// with 408): the idle (or first-request) timeout, counted by the server as
// its worker would (Handler.Expired).
func (c *Conn) closeExpired() bool {
	if c.partial != nil || c.Saved.Proto != nil || !c.deadlinePassed(c.rdl.Load()) {
		return false
	}
	c.lp.g.h.Expired(c)
	c.closeParked()
	return true
}

// closeParked ends c, parked with no partial head and now claimed by the
// caller: what the server does when it closes a connection, with no worker
// (Handler.CloseParked, on the caller's goroutine: a loop or the scanner).
func (c *Conn) closeParked() {
	c.shut.Store(true)
	c.lp.g.h.CloseParked(c)
}

// Detach takes the socket out of the engine for Hijack and returns it as an
// ordinary *net.TCPConn (a duplicate descriptor on Go's netpoller).
func (c *Conn) Detach() (net.Conn, error) {
	if w := c.w.Load(); w != nil {
		w.offLoop() // the hijacker may block: not on the loop
	}
	c.lp.remove(c)
	// Out of the epoll first: the registration belongs to the open file,
	// which the duplicate keeps alive after c.fd is closed.
	unix.EpollCtl(c.lp.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	f := os.NewFile(uintptr(c.fd), "riptide-hijack")
	nc, err := net.FileConn(f)
	// f owns the original descriptor now: closing it leaves only nc's.
	c.dying.Store(true)
	for c.refs.Load() != 0 {
		runtime.Gosched()
	}
	f.Close()
	c.detached = true
	return nc, err
}

// sockaddrTCP converts an accept/getsockname address.
func sockaddrTCP(sa unix.Sockaddr) *net.TCPAddr {
	return net.TCPAddrFromAddrPort(sockaddrAddrPort(sa))
}

func sockaddrAddrPort(sa unix.Sockaddr) netip.AddrPort {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port))
	}
	return netip.AddrPort{}
}

var _ net.Conn = (*Conn)(nil)

// The socket calls of a busy connection are raw system calls: the socket is
// non-blocking, so none of them waits, and skipping entersyscall/exitsyscall
// spares their cost and keeps the worker's P (sysmon may retake the P of a
// goroutine that stays in a syscall over ~20 µs with work queued behind it,
// as a 64 KiB writev on loopback can, and wake another thread to run it).

// rawSysRead is read(2); under the race detector, it also records that the
// socket's writer happens before this read, as syscall.Read does.
func rawSysRead(fd int, p []byte) (int, error) {
	n, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if errno != 0 {
		return -1, errno
	}
	raceAcquire(fd)
	return int(n), nil
}

// rawSysWrite is write(2).
func rawSysWrite(fd int, p []byte) (int, error) {
	n, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}

// rawSysWritev is writev(2) of up to the first 8 buffers (the caller loops
// on short writes).
func rawSysWritev(fd int, bufs [][]byte) (int, error) {
	var iov [8]unix.Iovec
	k := 0
	for _, b := range bufs {
		if k == len(iov) {
			break
		}
		if len(b) > 0 {
			iov[k].Base = unsafe.SliceData(b)
			iov[k].SetLen(len(b))
			k++
		}
	}
	if k == 0 {
		return 0, nil
	}
	n, _, errno := unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(k))
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}

// SyscallConn gives access to the socket, as *net.TCPConn does.
func (c *Conn) SyscallConn() (syscall.RawConn, error) { return rawConn{c}, nil }

// rawConn is the syscall.RawConn of a Conn.
type rawConn struct{ c *Conn }

// Control calls f with the descriptor, which stays open during the call.
func (rc rawConn) Control(f func(fd uintptr)) error {
	if !rc.c.acquire() {
		return net.ErrClosed
	}
	defer rc.c.release()
	f(uintptr(rc.c.fd))
	return nil
}

// Read calls f until it returns true, waiting for readability in between.
func (rc rawConn) Read(f func(fd uintptr) bool) error {
	return rc.c.rawWait(f, true)
}

// Write calls f until it returns true, waiting for writability in between.
func (rc rawConn) Write(f func(fd uintptr) bool) error {
	return rc.c.rawWait(f, false)
}

func (c *Conn) rawWait(f func(fd uintptr) bool, read bool) error {
	ready, dl := uint32(stWriteReady), &c.wdl
	if read {
		ready, dl = stReadReady, &c.rdl
	}
	for {
		if c.shut.Load() {
			return net.ErrClosed
		}
		if c.deadlinePassed(dl.Load()) {
			return os.ErrDeadlineExceeded
		}
		if !c.acquire() {
			return net.ErrClosed
		}
		c.st.And(^ready)
		done := f(uintptr(c.fd))
		c.release()
		if done {
			return nil
		}
		if w := c.w.Load(); w != nil && c.st.Load()&ready == 0 {
			wake, tp := w.wwake, &w.wtimer
			if read {
				wake, tp = w.rwake, &w.rtimer
			}
			if w.wait(wake, tp, dl.Load()) && deadlineReached(dl.Load()) {
				return os.ErrDeadlineExceeded
			}
		}
	}
}

// ReadFrom copies r to the socket: with sendfile(2) when r is a regular
// file (possibly behind an io.LimitedReader, as the compat door passes it),
// so the kernel moves the bytes; otherwise through a buffer.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	remain, src := int64(1<<62), r
	lr, limited := r.(*io.LimitedReader)
	if limited {
		remain, src = lr.N, lr.R
	}
	f, ok := src.(*os.File)
	if !ok || remain <= 0 {
		return io.Copy(writerOnly{c}, r)
	}
	var written int64
	var handled bool
	var err error
	if rc, cerr := f.SyscallConn(); cerr == nil {
		// Control keeps the descriptor open while the kernel reads it.
		cerr = rc.Control(func(sfd uintptr) {
			written, handled, err = c.Sendfile(int(sfd), nil, remain)
		})
		if cerr != nil && err == nil {
			err = cerr
		}
	}
	if limited {
		lr.N -= written
	}
	if handled || err != nil {
		return written, err
	}
	n, err := io.Copy(writerOnly{c}, r) // not a file sendfile takes
	return written + n, err
}

// Sendfile sends up to remain bytes of the file sfd, from *off (which it
// advances), or from the file's own offset when off is nil. handled is
// false when the kernel refused the file before any byte went out.
func (c *Conn) Sendfile(sfd int, off *int64, remain int64) (written int64, handled bool, err error) {
	for remain > 0 {
		var n int
		n, err = c.TryWrite(func(fd int) (int, error) {
			RaceRelease(fd)
			return SendfileOnce(fd, sfd, off, remain)
		})
		if err == unix.EINVAL || err == unix.ENOSYS {
			return written, written > 0, nil
		}
		if err == io.EOF {
			return written, true, nil // the file ended first
		}
		if err != nil {
			return written, true, err
		}
		written += int64(n)
		remain -= int64(n)
	}
	return written, true, nil
}

// writerOnly hides ReadFrom so that io.Copy does not come back to it.
type writerOnly struct{ io.Writer }

// sendfileChunk bounds one sendfile(2) call, so that a huge file does not
// hold the socket in one system call.
const sendfileChunk = 4 << 20

// SendfileOnce makes one sendfile(2) call of at most 4 MiB from sfd to
// the socket fd; off is nil to read at (and move) sfd's file offset. A file
// that has ended gives io.EOF.
func SendfileOnce(fd, sfd int, off *int64, remain int64) (int, error) {
	k, err := unix.Sendfile(fd, sfd, off, int(min(remain, sendfileChunk)))
	if k < 0 {
		k = 0
	}
	if k == 0 && err == nil {
		err = io.EOF
	}
	return k, err
}
