package evloop

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// acceptedSock is a socket accept4 returned and its peer's address.
type acceptedSock struct {
	fd    int
	raddr netip.AddrPort
}

// listenerTag marks the listener's events (EpollEvent.Pad).
const listenerTag = 1

// watchListener adds the listener to (or removes it from) the loop's epoll.
func (lp *loop) watchListener(on bool) error {
	return controlErr(lp.g.lrc, func(fd int) error {
		if !on {
			return unix.EpollCtl(lp.epfd, unix.EPOLL_CTL_DEL, fd, nil)
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLEXCLUSIVE, Fd: int32(fd), Pad: listenerTag}
		return unix.EpollCtl(lp.epfd, unix.EPOLL_CTL_ADD, fd, &ev)
	})
}

// accept takes every pending connection (EPOLLEXCLUSIVE wakes one loop).
// The sockets are registered after the listener's descriptor is released:
// add takes the server's lock, which Shutdown holds while it closes the
// listener, and closing waits for every use of the descriptor to end.
// From the first accept4 until the last socket is registered the loop
// holds g.acceptMu shared: the listener may close meanwhile, and neither
// Stop nor the group's end (done) may pass a socket already accepted and
// not yet admitted (it would be counted in after Shutdown or Close had
// looked, or parked in an ended group's closed epoll, never reached).
func (lp *loop) accept() {
	g := lp.g
	g.acceptMu.RLock()
	lp.accepted = lp.accepted[:0]
	lp.acceptErr = nil
	err := g.lrc.Control(lp.acceptAll)
	if err == nil {
		err = lp.acceptErr
	}
	if len(lp.accepted) > 0 && lp.lnDelay.Load() != 0 {
		lp.lnDelay.Store(0) // accepting again: the next pause starts short
	}
	if h := g.cfg.Hooks; h != nil && h.Accepted != nil {
		h.Accepted(lp.id, len(lp.accepted))
	}
	for i, a := range lp.accepted {
		g.add(lp, a.fd, a.raddr)
		lp.accepted[i] = acceptedSock{}
	}
	g.acceptMu.RUnlock()
	if err == nil {
		return
	}
	if errors.Is(err, net.ErrClosed) || g.h.ShuttingDown() {
		g.listenerGone(err)
		return
	}
	lp.pauseListener(err)
	if h := g.cfg.Hooks; h != nil {
		h.Failed(lp.id)
	}
}

// acceptAllOn is what accept runs on the listener's descriptor lfd: it
// takes every pending connection into lp.accepted and leaves the error
// that ended it in lp.acceptErr (nil for EAGAIN). It is set once per
// loop (acceptAll), so that accepting allocates no closure.
func (lp *loop) acceptAllOn(lfd uintptr) {
	g := lp.g
	for {
		if h := g.cfg.Hooks; h != nil {
			if err := h.Accept(lp.id); err != nil {
				lp.acceptErr = os.NewSyscallError("accept4", err)
				return
			}
		}
		fd, err := lp.accept4(int(lfd))
		switch err {
		case nil:
			lp.accepted = append(lp.accepted, acceptedSock{fd, rawAddrPort(&lp.rsa)})
			continue
		case unix.EAGAIN:
			return
		case unix.EINTR, unix.ECONNABORTED:
			continue
		}
		lp.acceptErr = os.NewSyscallError("accept4", err)
		return
	}
}

// accept4 is accept4(2) of a non-blocking, close-on-exec socket from
// lfd, the peer's address left in lp.rsa: unix.Accept4 would allocate
// the address twice (the raw buffer and the Sockaddr) for every socket,
// garbage that the GC's heap goal doubles in the RSS of a server whose
// connections pile up (issue 35).
func (lp *loop) accept4(lfd int) (int, error) {
	lp.rsaLen = unix.SizeofSockaddrAny
	fd, _, errno := unix.Syscall6(unix.SYS_ACCEPT4, uintptr(lfd), uintptr(unsafe.Pointer(&lp.rsa)), uintptr(unsafe.Pointer(&lp.rsaLen)),
		unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// rawAddrPort is the address and port of an IPv4 or IPv6 socket address
// as the kernel wrote it (port and address in network byte order), the
// zero AddrPort for another family.
func rawAddrPort(rsa *unix.RawSockaddrAny) netip.AddrPort {
	d := &rsa.Addr.Data
	port := uint16(uint8(d[0]))<<8 | uint16(uint8(d[1]))
	switch rsa.Addr.Family {
	case unix.AF_INET:
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{byte(d[2]), byte(d[3]), byte(d[4]), byte(d[5])}), port)
	case unix.AF_INET6:
		// sockaddr_in6: the port, 4 bytes of flow information, then the
		// 16 bytes of the address, which run past Data into Pad.
		var a [16]byte
		for i := range 8 {
			a[i], a[8+i] = byte(d[6+i]), byte(rsa.Pad[i])
		}
		return netip.AddrPortFrom(netip.AddrFrom16(a), port)
	}
	return netip.AddrPort{}
}

// The listener's place in a loop's epoll (loop.lnState). After an accept
// error (out of descriptors, ENOBUFS, EPERM, ...) the loop takes the
// listener out of its epoll, or the level-triggered listener, still
// readable, would spin it; the scanner puts it back after a back-off.
//
//	lnArmed     in the epoll
//	lnPausing   the loop is taking it out
//	lnPaused    out; the scanner puts it back at lnResume
//	lnResuming  the scanner is putting it back
//	lnRefail    lnResuming, and an accept failed since: the scanner
//	            takes it out again
//
// Why the listener is never lost (out of the epoll with nobody to put it
// back; issue 23: the loop failed again between the scanner's re-add and
// its clearing a flag, so the flag said "in" while the listener was out):
//   - Only two parties move the state, each by a CAS from a state it may
//     leave: the loop from lnArmed (→ lnPausing) and from lnResuming (→
//     lnRefail), the scanner from lnPaused (→ lnResuming). A party that
//     wins a CAS into lnPausing or lnResuming owns the listener's
//     membership: nobody else touches the epoll for it until the owner
//     stores the next state, and nobody else can leave that state, except
//     the loop's lnResuming → lnRefail, which touches no epoll and hands
//     the removal to the owner (the scanner), whose CAS lnResuming →
//     lnArmed then fails. So at most one epoll_ctl for the listener is in
//     flight per loop, and the state it is followed by says where the
//     listener is: the owner stores lnPaused only after a DEL that
//     succeeded or found it absent, lnArmed only after an ADD that
//     succeeded or found it present, and otherwise the state it found.
//   - lnPaused is therefore the only state in which the listener is out
//     of the epoll for good, and from it the scanner always moves it back
//     (it retries an ADD that failed on a later tick). In lnArmed it is
//     in: the loop sees its next error and pauses it again.
//   - The loop's failed accepts, in each state: lnArmed, it pauses;
//     lnResuming (the interleaving of the issue: woken by the scanner's
//     ADD before the scanner stored lnArmed), it marks lnRefail and the
//     scanner takes the listener out again with a longer back-off;
//     lnPausing, lnPaused, lnRefail: the listener is already on its way
//     out (lnRefail: an on-loop leader polls again at once and may find
//     it before the scanner's DEL; otherwise an event from before the
//     DEL), nothing to do: an echo, not counted. No case waits for the
//     other party, and none leaves the listener out without lnPaused.
const (
	lnArmed = iota
	lnPausing
	lnPaused
	lnResuming
	lnRefail
)

// pauseListener takes the listener out of lp's epoll after the accept
// error err (see lnArmed and the other states), and counts and logs err
// unless the listener was on its way out already.
func (lp *loop) pauseListener(err error) {
	if d, ok := lp.pause(); ok {
		lp.g.h.AcceptError(err, d)
		return
	}
	// The scanner is taking the listener out, and the loop, on-loop, may
	// poll again at once and find it still readable: let the scanner run.
	runtime.Gosched()
}

// pause is pauseListener's state change. It returns the back-off before
// the listener is back, and false if it was on its way out already: the
// error is an echo of one already counted.
func (lp *loop) pause() (time.Duration, bool) {
	for {
		switch lp.lnState.Load() {
		case lnArmed:
			if lp.lnState.CompareAndSwap(lnArmed, lnPausing) {
				st, d := lp.unwatch()
				lp.lnState.Store(st)
				return d, true
			}
		case lnResuming:
			if lp.lnState.CompareAndSwap(lnResuming, lnRefail) {
				runtime.Gosched() // see pauseListener
				// The back-off the scanner's unwatch will set.
				return lp.g.cfg.Backoff(time.Duration(lp.lnDelay.Load())), true
			}
		default: // lnPausing, lnPaused, lnRefail: on its way out already
			return 0, false
		}
	}
}

// unwatch takes the listener out of lp's epoll, for the owner of
// lnPausing or lnRefail, and returns the state to store and the back-off:
// lnPaused with the next back-off (lnResume set), or lnArmed if the
// listener could not be taken out (the next failure tries again).
func (lp *loop) unwatch() (int32, time.Duration) {
	if err := lp.watchListener(false); err != nil && err != unix.ENOENT {
		return lnArmed, 0
	}
	d := lp.g.cfg.Backoff(time.Duration(lp.lnDelay.Load()))
	lp.lnDelay.Store(int64(d))
	lp.lnResume.Store(time.Now().Add(d).UnixNano())
	return lnPaused, d
}

// resumeListener puts lp's paused listener back in its epoll (the
// scanner, once lnResume has passed; see lnArmed and the other states).
func (lp *loop) resumeListener() {
	if !lp.lnState.CompareAndSwap(lnPaused, lnResuming) {
		return
	}
	if h := lp.g.cfg.Hooks; h != nil {
		h.Resuming(lp.id)
	}
	if err := lp.watchListener(true); err != nil && err != unix.EEXIST {
		// The listener closed (the group ends) or the epoll is out of
		// memory: still out, try again later.
		lp.lnState.Store(lnPaused)
		return
	}
	if h := lp.g.cfg.Hooks; h != nil {
		h.Resumed(lp.id)
	}
	if lp.lnState.CompareAndSwap(lnResuming, lnArmed) {
		return
	}
	// lnRefail: an accept failed since the ADD (the loop counted it),
	// and only the loop leaves lnResuming that way.
	st, _ := lp.unwatch()
	lp.lnState.Store(st)
}

// add registers an accepted socket the server admitted and hands it to a
// worker, which runs Handler.Serve with fresh set (for riptide: ConnState
// new, the header deadline, h2c detection).
func (g *Group) add(lp *loop, fd int, raddr netip.AddrPort) {
	if !g.h.Admit(fd) {
		return
	}
	g.nconns.Add(1)
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	c := &Conn{fd: fd, lp: lp, fresh: true, raddr: raddr}
	c.Born = g.cfg.Clock.Load()
	c.st.Store(stBusy)
	lp.mu.Lock()
	for fd >= len(lp.conns) {
		lp.conns = append(lp.conns, nil)
	}
	lp.conns[fd] = c
	lp.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(fd)}
	if err := unix.EpollCtl(lp.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		c.shut.Store(true) // the worker finds it closed and counts it out
	}
	g.dispatch(c)
}

// FileConn turns an accepted descriptor into an ordinary net.Conn (fd is
// closed; the net.Conn has its own).
func FileConn(fd int) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), "riptide-conn")
	defer f.Close()
	return net.FileConn(f)
}
