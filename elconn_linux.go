//go:build linux

package riptide

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

// elConn is one socket of the event-loop engine and the net.Conn that the
// HTTP/1.1 code (conn.go, body.go, response.go, compat) reads and writes.
// It is small on purpose: it is all an idle connection costs.
//
// Ownership: the connection is idle (owned by its loop, no goroutine) or
// busy (owned by one worker goroutine, which runs the HTTP/1.1 code; the
// disconnect watch may read concurrently). st holds that bit and the
// readiness edges that arrive while busy, so an edge is never lost: the
// loop sets elReadReady/elWriteReady and wakes the worker; a worker that
// wants to park first checks elReadReady and then swaps busy for idle in
// one compare-and-swap. The fields under "saved" are written by the owning
// worker before that swap and read by the next owner after it.
type elConn struct {
	fd    int
	lp    *loop
	st    atomic.Uint32
	w     atomic.Pointer[worker] // the owner's wake channels while busy
	refs  atomic.Int32           // syscalls in flight on fd
	dying atomic.Bool            // destroy started: no more syscalls on fd
	shut  atomic.Bool            // Close called: I/O fails with net.ErrClosed
	rdl   atomic.Int64           // read deadline, unix nanoseconds, 0 none
	wdl   atomic.Int64           // write deadline
	// cstate mirrors the ConnState for Shutdown.
	cstate atomic.Int32
	raddr  netip.AddrPort

	// saved across a park (see above)
	partial      *[]byte // an incomplete head, from headPool
	nreq         int
	born         int64
	rsec, wsec   int64
	rkind, wkind uint8
	fresh        bool // not served yet: the next owner runs conn.serve
	headArmed    bool
	drained      bool // the last read came back short: the socket is empty
	detached     bool // hijacked: the fd left the engine
}

// st bits.
const (
	elBusy       = 1 << iota // a worker owns the connection
	elReadReady              // readable edge while busy
	elWriteReady             // writable edge while busy
	// elHup: the peer shut down its side (sticky). A FIN queued behind the
	// data makes no new edge, so a short read no longer means empty.
	elHup
)

// acquire pins fd for one syscall; false once the socket is being closed.
func (ec *elConn) acquire() bool {
	ec.refs.Add(1)
	if ec.dying.Load() {
		ec.refs.Add(-1)
		return false
	}
	return true
}

func (ec *elConn) release() { ec.refs.Add(-1) }

// deadlinePassed reports whether the deadline d (unix nanoseconds) is set
// and in the past. A deadline two seconds or more past the server clock's
// second has not passed (the clock lags by at most a tick): that spares the
// clock read (~150 ns on a VM, several per request) for the usual idle and
// header timeouts. A wait that timed out re-checks with deadlineReached, so
// a clock that fell behind cannot turn an expired wait into a busy loop.
func deadlinePassed(d int64) bool {
	if d == 0 {
		return false
	}
	if sec := clockSec.Load(); sec != 0 && d >= (sec+2)*int64(time.Second) {
		return false
	}
	return time.Now().UnixNano() >= d
}

// deadlineReached is deadlinePassed read from the real clock.
func deadlineReached(d int64) bool { return d != 0 && time.Now().UnixNano() >= d }

// Read reads without blocking a thread: on EAGAIN it waits for the loop's
// readable edge, the deadline or Close.
func (ec *elConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if ec.shut.Load() {
			return 0, net.ErrClosed
		}
		if deadlinePassed(ec.rdl.Load()) {
			return 0, os.ErrDeadlineExceeded
		}
		n, err := ec.rawRead(p)
		if n > 0 {
			return n, nil
		}
		if err != unix.EAGAIN {
			return 0, err
		}
		if w := ec.w.Load(); w != nil && ec.st.Load()&elReadReady == 0 {
			if w.wait(w.rwake, &w.rtimer, ec.rdl.Load()) && deadlineReached(ec.rdl.Load()) {
				return 0, os.ErrDeadlineExceeded
			}
		}
	}
}

// rawRead is one non-blocking read(2); it records whether the socket is
// now empty (with edge-triggered epoll a short read means it is).
func (ec *elConn) rawRead(p []byte) (int, error) {
	for {
		if !ec.acquire() {
			return 0, net.ErrClosed
		}
		ec.st.And(^uint32(elReadReady))
		n, err := rawSysRead(ec.fd, p)
		ec.release()
		switch {
		case n > 0:
			ec.drained = n < len(p)
			return n, nil
		case err == nil:
			return 0, io.EOF
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			ec.drained = true
		}
		return 0, err
	}
}

// Write writes all of p, waiting for the loop's writable edge while the
// kernel's buffer is full (backpressure), up to the write deadline.
func (ec *elConn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := ec.tryWrite(func(fd int) (int, error) {
			raceRelease(fd)
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
func (ec *elConn) Writev(bufs [][]byte) (int64, error) {
	var total int64
	for len(bufs) > 0 {
		n, err := ec.tryWrite(func(fd int) (int, error) {
			raceRelease(fd)
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

// tryWrite runs one write syscall; on EAGAIN it waits for writability and
// reports 0 bytes and no error (the caller loops).
func (ec *elConn) tryWrite(write func(fd int) (int, error)) (int, error) {
	if ec.shut.Load() {
		return 0, net.ErrClosed
	}
	if deadlinePassed(ec.wdl.Load()) {
		return 0, os.ErrDeadlineExceeded
	}
	if !ec.acquire() {
		return 0, net.ErrClosed
	}
	ec.st.And(^uint32(elWriteReady))
	n, err := write(ec.fd)
	ec.release()
	switch {
	case n > 0:
		return n, nil
	case err == unix.EINTR:
		return 0, nil
	case err == unix.EAGAIN:
		if w := ec.w.Load(); w != nil && ec.st.Load()&elWriteReady == 0 {
			if w.wait(w.wwake, &w.wtimer, ec.wdl.Load()) && deadlineReached(ec.wdl.Load()) {
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
func (ec *elConn) Close() error {
	if ec.shut.Swap(true) {
		return nil
	}
	if ec.acquire() {
		unix.Shutdown(ec.fd, unix.SHUT_RDWR)
		ec.release()
	}
	ec.wakeAll()
	ec.lp.g.dispatchIdle(ec)
	return nil
}

// CloseWrite shuts down the writing side (a lingering close).
func (ec *elConn) CloseWrite() error {
	if !ec.acquire() {
		return net.ErrClosed
	}
	defer ec.release()
	return unix.Shutdown(ec.fd, unix.SHUT_WR)
}

func (ec *elConn) wakeAll() {
	if w := ec.w.Load(); w != nil {
		wake(w.rwake)
		wake(w.wwake)
	}
}

// LocalAddr returns the listener's address, or the socket's own when the
// listener is bound to an unspecified address.
func (ec *elConn) LocalAddr() net.Addr {
	g := ec.lp.g
	if !g.lnAddr.IP.IsUnspecified() {
		return g.lnAddr
	}
	if ec.acquire() {
		sa, err := unix.Getsockname(ec.fd)
		ec.release()
		if err == nil {
			return sockaddrTCP(sa)
		}
	}
	return g.lnAddr
}

// RemoteAddr returns the client's address.
func (ec *elConn) RemoteAddr() net.Addr { return net.TCPAddrFromAddrPort(ec.raddr) }

// SetDeadline sets both deadlines.
func (ec *elConn) SetDeadline(t time.Time) error {
	ec.SetReadDeadline(t)
	return ec.SetWriteDeadline(t)
}

// SetReadDeadline sets the read deadline and wakes a waiting reader. A
// past deadline on an idle connection hands it to a worker, which finds
// the deadline passed and closes it (how Shutdown closes idle connections).
func (ec *elConn) SetReadDeadline(t time.Time) error {
	ec.rdl.Store(unixNano(t))
	if w := ec.w.Load(); w != nil && ec.st.Load()&elBusy != 0 {
		wake(w.rwake)
	} else if !t.IsZero() && !t.After(time.Now()) {
		ec.lp.g.dispatchIdle(ec)
	}
	return nil
}

// SetWriteDeadline sets the write deadline and wakes a waiting writer.
func (ec *elConn) SetWriteDeadline(t time.Time) error {
	ec.wdl.Store(unixNano(t))
	if w := ec.w.Load(); w != nil {
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

// fillHead reads more of a request head without waiting. When the socket is
// empty it parks the connection (c.parked, nil error): the worker lets go
// of it and the loop hands it to a worker again on the next readable edge
// or when its read deadline passes.
func (ec *elConn) fillHead(c *conn, armed bool) error {
	for {
		if ec.shut.Load() {
			return net.ErrClosed
		}
		if deadlinePassed(ec.rdl.Load()) {
			return os.ErrDeadlineExceeded
		}
		if ec.drained && ec.st.Load()&(elReadReady|elHup) == 0 {
			if ec.park(c, armed) {
				return nil
			}
			continue
		}
		if c.w == len(c.rbuf) {
			if err := c.makeRoom(); err != nil {
				return err
			}
		}
		n, err := ec.rawRead(c.rbuf[c.w:])
		c.w += n
		c.nin += uint64(max(n, 0)) // stats.go
		if n > 0 {
			return nil
		}
		if err != unix.EAGAIN {
			return err
		}
	}
}

// headPool holds the small buffers that keep an incomplete head while its
// connection is parked.
var headPool sync.Pool

// park saves c's state on ec and swaps busy for idle. It fails, undoing the
// save, when a readable edge came in meanwhile.
func (ec *elConn) park(c *conn, armed bool) bool {
	if c.r < c.w {
		bp, _ := headPool.Get().(*[]byte)
		if bp == nil {
			bp = new([]byte)
		}
		*bp = append((*bp)[:0], c.rbuf[c.r:c.w]...)
		ec.partial = bp
	}
	ec.nreq = c.nreq // not born: set once by add, read by Shutdown's scan (elCloseIdle)
	ec.rkind, ec.rsec, ec.wkind, ec.wsec = c.rkind, c.rsec, c.wkind, c.wsec
	ec.headArmed = armed
	ec.cstate.Store(c.state.Load())
	for {
		old := ec.st.Load()
		if old&elReadReady != 0 {
			ec.dropPartial()
			return false
		}
		if ec.st.CompareAndSwap(old, old&elHup) {
			c.parked = true
			return true
		}
	}
}

func (ec *elConn) dropPartial() {
	if bp := ec.partial; bp != nil {
		ec.partial = nil
		if cap(*bp) <= 4<<10 {
			headPool.Put(bp)
		}
	}
}

// resume restores what park saved into c, a fresh conn from the pool.
func (ec *elConn) resume(c *conn) {
	c.nreq, c.born = ec.nreq, ec.born
	c.rkind, c.rsec, c.wkind, c.wsec = ec.rkind, ec.rsec, ec.wkind, ec.wsec
	c.headArmed, c.resumed = ec.headArmed, true
	c.state.Store(ec.cstate.Load())
	if bp := ec.partial; bp != nil {
		if len(*bp) > len(c.rbuf) {
			c.rbuf = make([]byte, max(len(*bp), 2*len(c.rbuf)))
		}
		c.w = copy(c.rbuf, *bp)
		ec.dropPartial()
	}
}

// untrack ends the connection: its descriptor is closed (unless hijacked)
// and it is counted out of the server. Called by the owner, once.
func (ec *elConn) untrack() {
	ec.shut.Store(true)
	ec.dying.Store(true)
	for ec.refs.Load() != 0 {
		runtime.Gosched() // a concurrent non-blocking syscall: short
	}
	ec.lp.remove(ec)
	if !ec.detached {
		unix.Close(ec.fd)
	}
	ec.dropPartial()
	ec.w.Store(nil)
	ec.lp.g.connGone()
}

// closeHungUp closes ec, just claimed from its loop after a park, when its
// peer hung up with nothing left to read, as a worker would (read EOF,
// conn.closeConn) but without one. This is how idle keep-alive connections
// usually end: when thousands of clients close at once, handing each
// hang-up to a worker would start a goroutine with its buffers per
// connection (about 20 KiB each, all at once). Anything else (data before
// the FIN, a partial head, which is lingered for) goes to a worker.
func (ec *elConn) closeHungUp() bool {
	if ec.st.Load()&elHup == 0 || ec.partial != nil || !ec.acquire() {
		return false
	}
	var b [1]byte
	n, _, errno := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(ec.fd),
		uintptr(unsafe.Pointer(&b[0])), 1, unix.MSG_PEEK|unix.MSG_DONTWAIT, 0, 0)
	ec.release()
	if errno == 0 && n > 0 || errno == unix.EAGAIN || errno == unix.EINTR {
		return false // something to read, or not at the end yet
	}
	ec.closeParked()
	return true
}

// closeExpired closes ec, claimed by the scanner after a park, when its read
// deadline has passed and it holds no partial head (which a worker answers
// with 408): the idle (or first-request) timeout, counted as the worker
// would (conn.statReadError).
func (ec *elConn) closeExpired() bool {
	if ec.partial != nil || !deadlinePassed(ec.rdl.Load()) {
		return false
	}
	s := ec.lp.g.srv
	if !ec.shut.Load() && !s.draining.Load() {
		if ec.nreq > 0 {
			s.statTimeout(timeoutIdle)
		} else {
			s.statTimeout(timeoutHeader)
		}
	}
	ec.closeParked()
	return true
}

// closeParked ends ec, parked with no partial head and now claimed by the
// caller: what conn.closeConn does for it, with no conn. The ConnState hook
// runs on the caller's goroutine (a loop or the scanner).
func (ec *elConn) closeParked() {
	s := ec.lp.g.srv
	ec.shut.Store(true)
	if ConnState(ec.cstate.Swap(int32(StateClosed))) != StateClosed {
		if h := s.ConnState; h != nil {
			h(ec, StateClosed)
		}
	}
	ec.untrack()
	s.count(statClosed)
}

// detach takes the socket out of the engine for Hijack and returns it as an
// ordinary *net.TCPConn (a duplicate descriptor on Go's netpoller).
func (ec *elConn) detach() (net.Conn, error) {
	if w := ec.w.Load(); w != nil {
		w.offLoop() // the hijacker may block: not on the loop
	}
	ec.lp.remove(ec)
	// Out of the epoll first: the registration belongs to the open file,
	// which the duplicate keeps alive after ec.fd is closed.
	unix.EpollCtl(ec.lp.epfd, unix.EPOLL_CTL_DEL, ec.fd, nil)
	f := os.NewFile(uintptr(ec.fd), "riptide-hijack")
	nc, err := net.FileConn(f)
	// f owns the original descriptor now: closing it leaves only nc's.
	ec.dying.Store(true)
	for ec.refs.Load() != 0 {
		runtime.Gosched()
	}
	f.Close()
	ec.detached = true
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

var _ net.Conn = (*elConn)(nil)

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
func (ec *elConn) SyscallConn() (syscall.RawConn, error) { return elRawConn{ec}, nil }

// elRawConn is the syscall.RawConn of an elConn.
type elRawConn struct{ ec *elConn }

// Control calls f with the descriptor, which stays open during the call.
func (rc elRawConn) Control(f func(fd uintptr)) error {
	if !rc.ec.acquire() {
		return net.ErrClosed
	}
	defer rc.ec.release()
	f(uintptr(rc.ec.fd))
	return nil
}

// Read calls f until it returns true, waiting for readability in between.
func (rc elRawConn) Read(f func(fd uintptr) bool) error {
	return rc.ec.rawWait(f, true)
}

// Write calls f until it returns true, waiting for writability in between.
func (rc elRawConn) Write(f func(fd uintptr) bool) error {
	return rc.ec.rawWait(f, false)
}

func (ec *elConn) rawWait(f func(fd uintptr) bool, read bool) error {
	ready, dl := uint32(elWriteReady), &ec.wdl
	if read {
		ready, dl = elReadReady, &ec.rdl
	}
	for {
		if ec.shut.Load() {
			return net.ErrClosed
		}
		if deadlinePassed(dl.Load()) {
			return os.ErrDeadlineExceeded
		}
		if !ec.acquire() {
			return net.ErrClosed
		}
		ec.st.And(^ready)
		done := f(uintptr(ec.fd))
		ec.release()
		if done {
			return nil
		}
		if w := ec.w.Load(); w != nil && ec.st.Load()&ready == 0 {
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

// writevDirect is writeDirect on the event loop: wbuf and p leave in one
// writev(2) instead of a write each.
func (c *conn) writevDirect(p []byte) error {
	c.armWrite()
	c.iov = [2][]byte{c.wbuf, p}
	_, err := c.ec.Writev(c.iov[:])
	c.iov = [2][]byte{}
	c.wbuf = c.wbuf[:0]
	c.ctx.resp.sent = true
	if err != nil {
		c.werr = err
	}
	return err
}

// ReadFrom copies r to the socket: with sendfile(2) when r is a regular
// file (possibly behind an io.LimitedReader, as the compat door passes it),
// so the kernel moves the bytes; otherwise through a buffer.
func (ec *elConn) ReadFrom(r io.Reader) (int64, error) {
	remain, src := int64(1<<62), r
	lr, limited := r.(*io.LimitedReader)
	if limited {
		remain, src = lr.N, lr.R
	}
	f, ok := src.(*os.File)
	if !ok || remain <= 0 {
		return io.Copy(writerOnly{ec}, r)
	}
	var written int64
	var handled bool
	var err error
	if rc, cerr := f.SyscallConn(); cerr == nil {
		// Control keeps the descriptor open while the kernel reads it.
		cerr = rc.Control(func(sfd uintptr) {
			written, handled, err = ec.sendfile(int(sfd), nil, remain)
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
	n, err := io.Copy(writerOnly{ec}, r) // not a file sendfile takes
	return written + n, err
}

// sendfile sends up to remain bytes of the file sfd, from *off (which it
// advances), or from the file's own offset when off is nil. handled is
// false when the kernel refused the file before any byte went out.
func (ec *elConn) sendfile(sfd int, off *int64, remain int64) (written int64, handled bool, err error) {
	for remain > 0 {
		var n int
		n, err = ec.tryWrite(func(fd int) (int, error) {
			raceRelease(fd)
			return sendfileOnce(fd, sfd, off, remain)
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
