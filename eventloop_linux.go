//go:build linux

package riptide

import (
	"errors"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The event-loop engine (see Engine). Design, as built:
//
//   - One group per Serve call: GOMAXPROCS loops, a worker pool and a
//     scanner goroutine. Each loop owns an epoll instance. The listener's
//     own descriptor (no dup, so closing the listener stops accepting at
//     once) is in every loop's epoll with EPOLLEXCLUSIVE; a woken loop
//     accepts until EAGAIN inside RawConn.Control, which keeps the
//     descriptor alive during the call and reports the listener's close.
//   - Sockets are registered once, edge-triggered for read and write (as
//     Go's netpoller does): no epoll_ctl per request.
//   - A loop never blocks a thread: it polls with EpollWait(0) and, when
//     nothing is ready, parks on its epoll descriptor through Go's
//     netpoller (an epoll fd is pollable), so workers it readied run on
//     its P at once.
//   - An idle connection is an elConn on its loop: no goroutine, no
//     buffer (an incomplete head is kept in a small pooled buffer). A
//     readable edge puts it on its loop's queue, from which parked worker
//     goroutines (a stack of workers, each with its own channel) take it:
//     one worker is sent per batch, and each sends the next before it
//     serves while more wait (see pull). The worker runs the ordinary
//     HTTP/1.1 code with a pooled conn over the elConn: it serves every
//     complete request already read (pipelining, one write per batch) and,
//     when the socket is empty, parks the connection and returns itself
//     and the conn to their pools.
//   - Timeouts: the worker arms deadlines as on the goroutine engine; a
//     read or write that waits does so on the worker's channel with a
//     reused timer. For parked connections (idle and header timeouts) a
//     scanner goroutine per group walks the loops' tables every
//     scanInterval and hands each connection whose read deadline passed to
//     a worker, which finds it expired and closes it (408 for a partial
//     head), exactly as the goroutine engine would.
//   - Ends without a worker: a parked connection with no partial head is
//     closed by whoever claims it when a worker would only close it: by
//     its loop when the peer hung up with nothing left to read
//     (closeHungUp), by the scanner when its deadline passed
//     (closeExpired). A burst of thousands of clients closing at once then
//     costs no goroutine (it started one worker with its ~37 KiB of
//     buffers per connection, up to some 2,000 at once). The pool stays
//     unbounded: every other dispatch carries a request, whose handler may
//     block, and a bounded pool could deadlock on handlers waiting for
//     each other; a worker per in-flight request is what the goroutine
//     engine pays too.
//   - On-loop mode (EngineOnLoop, see there): the loop is run by a worker
//     (the loop's leader), which serves a readable connection itself
//     instead of handing it off. A leader about to wait, or stuck (the
//     scanner sees its serve counter not move), is replaced by a pooled
//     worker (promote) and finishes as an ordinary worker: it dispatches
//     the rest of its batch and goes back to the pool.
type elServer struct {
	mu     sync.Mutex
	groups map[*group]struct{}
}

// platformEngine is EngineAuto's choice here.
const platformEngine = EngineEventLoop

// scanInterval is how often parked connections' deadlines are checked: the
// precision of the idle and header timeouts on this engine.
const scanInterval = 25 * time.Millisecond

// workerIdle is how long a parked worker goroutine is kept.
const workerIdle = 2 * time.Second

// group is the engine for one listener.
type group struct {
	srv    *Server
	ln     *net.TCPListener
	lrc    syscall.RawConn
	lnAddr *net.TCPAddr
	loops  []*loop
	pool   workerPool
	nconns atomic.Int64
	// onLoop: handlers run on the loops (EngineOnLoop, native door).
	onLoop bool

	lnOnce sync.Once
	lnDone chan struct{} // the listener is closed or failed
	lnErr  error
}

// loop is one epoll instance and the connections registered in it.
type loop struct {
	g      *group
	epfd   int
	file   *os.File // epfd on Go's netpoller, to park on
	rc     syscall.RawConn
	paused bool // listener out of the epoll after an accept error

	mu    sync.Mutex
	conns []*elConn // by descriptor

	// On-loop mode: the worker running the loop; seenW and seen are the
	// scanner's last sample of it and of its serving counter.
	leader atomic.Pointer[worker]
	seenW  *worker
	seen   uint32
	// pending (under mu): connections the leader claimed from its last
	// batch and has not served yet; a replaced leader's are dispatched.
	pending []*elConn

	// accepted holds the sockets one accept call took, registered once
	// the listener is released (touched only by whoever runs the loop).
	accepted []acceptedSock

	// Worker mode: rq (under mu, from rqHead) holds the readable
	// connections the loop claimed and no worker has taken yet; spare
	// says a worker is on its way to take from it (pull, sent pullMsg).
	rq     []*elConn
	rqHead int
	spare  bool
	// pullMsg, sent on a worker's channel, tells it to pull from rq.
	pullMsg elConn
}

// acceptedSock is a socket accept4 returned and its peer's address.
type acceptedSock struct {
	fd int
	sa unix.Sockaddr
}

// eventLoopListener reports whether ln is served by the event loop.
func (s *Server) eventLoopListener(ln net.Listener) (*net.TCPListener, bool) {
	tl, ok := ln.(*net.TCPListener)
	e := s.engine()
	return tl, ok && (e == EngineEventLoop || e == EngineOnLoop)
}

// serveEventLoop is Serve on the event-loop engine.
func (s *Server) serveEventLoop(ln *net.TCPListener) error {
	g, err := newGroup(s, ln)
	if err != nil {
		ln.Close()
		if s.shuttingDown() {
			// Shutdown or Close closed the listener before the loops
			// could watch it.
			return ErrServerClosed
		}
		return err
	}
	s.el.mu.Lock()
	if s.el.groups == nil {
		s.el.groups = make(map[*group]struct{})
	}
	s.el.groups[g] = struct{}{}
	s.el.mu.Unlock()
	for _, lp := range g.loops {
		if g.onLoop {
			w := g.pool.get()
			lp.leader.Store(w)
			w.lead(lp)
		} else {
			go lp.run()
		}
	}
	go g.scan()
	select {
	case <-s.closed:
		return ErrServerClosed
	case <-g.lnDone:
		if s.shuttingDown() {
			return ErrServerClosed
		}
		return g.lnErr
	}
}

func newGroup(s *Server, ln *net.TCPListener) (*group, error) {
	lrc, err := ln.SyscallConn()
	if err != nil {
		return nil, err
	}
	g := &group{srv: s, ln: ln, lrc: lrc, lnDone: make(chan struct{})}
	_, compat := s.Handler.(compatHandler)
	g.onLoop = s.engine() == EngineOnLoop && !compat
	g.lnAddr, _ = ln.Addr().(*net.TCPAddr)
	g.pool.g = g
	g.pool.prestart()
	for range runtime.GOMAXPROCS(0) {
		lp, err := newLoop(g)
		if err != nil {
			g.closeLoops()
			return nil, err
		}
		g.loops = append(g.loops, lp)
	}
	for _, lp := range g.loops {
		if err := lp.watchListener(true); err != nil {
			g.closeLoops()
			return nil, err
		}
	}
	return g, nil
}

func newLoop(g *group) (*loop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return nil, err
	}
	lp := &loop{g: g, epfd: epfd, file: os.NewFile(uintptr(epfd), "riptide-epoll")}
	lp.pullMsg.lp = lp
	if lp.rc, err = lp.file.SyscallConn(); err != nil {
		lp.file.Close()
		return nil, err
	}
	return lp, nil
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

// controlErr runs f on rc's descriptor and returns f's error or rc's.
func controlErr(rc syscall.RawConn, f func(fd int) error) error {
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

func (g *group) closeLoops() {
	for _, lp := range g.loops {
		lp.file.Close()
	}
}

// listenerGone records that the listener can no longer accept.
func (g *group) listenerGone(err error) {
	g.lnOnce.Do(func() {
		g.lnErr = err
		close(g.lnDone)
	})
}

// run is the loop's goroutine: wait for events, accept, hand readable
// connections to workers and wake the workers waiting on theirs.
func (lp *loop) run() {
	var events [128]unix.EpollEvent
	var batch [128]*elConn
	// The whole loop runs inside one RawConn.Read: the callback handles
	// what EpollWait(0) returns and reports false to park on the
	// netpoller. Staying inside one Read matters: each new Read resets the
	// descriptor's readiness, so a wake-up that came while the loop was
	// busy would be lost, while inside one Read it is kept, and the loop
	// may park as soon as a batch comes back short (the epoll was empty
	// then; any later event makes a new edge on epfd). One closure for the
	// loop's life, since RawConn.Read, an interface call, would allocate
	// one made per wait.
	handle := func(uintptr) bool {
		for {
			n, err := epollWait0(lp.epfd, events[:])
			if err == unix.EINTR {
				continue
			}
			if n <= 0 {
				return false
			}
			lp.handle(events[:n], batch[:n])
			if n < len(events) {
				return false
			}
		}
	}
	// Read returns only with an error: the group closed the epoll descriptor.
	lp.rc.Read(handle)
}

// handle delivers one batch of events; batch is scratch space as long.
// The connections that became readable go to the loop's queue, and one
// worker, unless one is already on its way, is sent to pull from it: one
// goroutine wake-up per batch, not one per connection (see pull).
func (lp *loop) handle(events []unix.EpollEvent, batch []*elConn) {
	g := lp.g
	lp.mu.Lock()
	for i := range events {
		if fd := int(events[i].Fd); events[i].Pad != listenerTag && fd < len(lp.conns) {
			batch[i] = lp.conns[fd]
		}
	}
	lp.mu.Unlock()
	k := 0
	for i := range events {
		if events[i].Pad == listenerTag {
			lp.accept()
		} else if ec := batch[i]; ec != nil {
			batch[i] = nil
			// A parked connection whose peer hung up with nothing
			// left to read is closed right here (closeHungUp): no
			// worker for it.
			if g.claim(ec, events[i].Events) && !ec.closeHungUp() {
				// No owner until a worker takes it: edges meanwhile
				// are only recorded (claim wakes ec.w).
				ec.w.Store(nil)
				batch[k] = ec
				k++
			}
		}
	}
	if k == 0 {
		return
	}
	lp.mu.Lock()
	lp.rq = append(lp.rq, batch[:k]...)
	send := !lp.spare
	lp.spare = true
	lp.mu.Unlock()
	clear(batch[:k])
	if send {
		g.pool.get().ch <- &lp.pullMsg
	}
}

// pull serves the connections of lp's queue until it is empty. Before it
// serves one while others wait, it makes sure a worker is on its way to
// take them: a handler that blocks holds up its own connection only, while
// with quick handlers a few workers serve a whole batch between them.
func (w *worker) pull(lp *loop) {
	lp.mu.Lock()
	lp.spare = false // this worker was the one on its way
	for lp.rqHead < len(lp.rq) {
		ec := lp.rq[lp.rqHead]
		lp.rq[lp.rqHead] = nil
		lp.rqHead++
		if lp.rqHead == len(lp.rq) {
			lp.rq, lp.rqHead = lp.rq[:0], 0
		}
		send := len(lp.rq) > 0 && !lp.spare
		if send {
			lp.spare = true
		}
		lp.mu.Unlock()
		if send {
			lp.g.pool.get().ch <- &lp.pullMsg
		}
		ec.drained = false
		ec.w.Store(w)
		w.serve(ec)
		lp.mu.Lock()
	}
	lp.mu.Unlock()
}

// claim records the edges ev on ec. It reports true when ec was idle and
// became readable: it is now marked busy and the caller must serve it.
func (g *group) claim(ec *elConn, ev uint32) bool {
	in := ev&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0
	out := ev&(unix.EPOLLOUT|unix.EPOLLHUP|unix.EPOLLERR) != 0
	var hup uint32
	if ev&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		hup = elHup
	}
	for {
		old := ec.st.Load()
		if old&elBusy == 0 {
			if !in {
				return false
			}
			if ec.st.CompareAndSwap(old, old|elBusy|hup) {
				return true
			}
			continue
		}
		nw := old | hup
		if in {
			nw |= elReadReady
		}
		if out {
			nw |= elWriteReady
		}
		if ec.st.CompareAndSwap(old, nw) {
			if w := ec.w.Load(); w != nil {
				if in {
					wake(w.rwake)
				}
				if out {
					wake(w.wwake)
				}
			}
			return false
		}
	}
}

// dispatchIdle hands ec to a worker if it is idle (for deadlines and Close
// on parked connections); a busy connection's owner sees them itself.
func (g *group) dispatchIdle(ec *elConn) {
	if ec.claimIdle() {
		g.dispatch(ec)
	}
}

// expire closes ec, found parked past its read deadline by the scanner, or
// hands it to a worker when that needs one (a 408 for a partial head): a
// burst of idle timeouts costs no goroutine per connection.
func (g *group) expire(ec *elConn) {
	if ec.claimIdle() && !ec.closeExpired() {
		g.dispatch(ec)
	}
}

// claimIdle marks ec busy if it is idle (parked) and reports whether it
// did: the caller then owns it. A busy connection's owner sees deadlines
// and Close itself.
func (ec *elConn) claimIdle() bool {
	for {
		old := ec.st.Load()
		if old&elBusy != 0 {
			return false
		}
		if ec.st.CompareAndSwap(old, old|elBusy) {
			return true
		}
	}
}

// dispatch gives ec, just marked busy, to a worker.
func (g *group) dispatch(ec *elConn) {
	ec.drained = false
	w := g.pool.get()
	ec.w.Store(w)
	w.ch <- ec
}

// accept takes every pending connection (EPOLLEXCLUSIVE wakes one loop).
// The sockets are registered after the listener's descriptor is released:
// add takes the server's lock, which Shutdown holds while it closes the
// listener, and closing waits for every use of the descriptor to end.
func (lp *loop) accept() {
	g := lp.g
	lp.accepted = lp.accepted[:0]
	err := controlErr(g.lrc, func(lfd int) error {
		for {
			fd, sa, err := unix.Accept4(lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
			switch err {
			case nil:
				lp.accepted = append(lp.accepted, acceptedSock{fd, sa})
				continue
			case unix.EAGAIN:
				return nil
			case unix.EINTR, unix.ECONNABORTED:
				continue
			}
			return os.NewSyscallError("accept4", err)
		}
	})
	for i, a := range lp.accepted {
		g.add(lp, a.fd, a.sa)
		lp.accepted[i] = acceptedSock{}
	}
	if err == nil {
		return
	}
	if errors.Is(err, net.ErrClosed) || g.srv.shuttingDown() {
		g.listenerGone(err)
		return
	}
	// Out of descriptors and the like: stop accepting on this loop for a
	// while (level-triggered, the listener would spin the loop); the scanner
	// puts it back.
	g.srv.logger().Error("riptide: accept error; retrying", "err", err, "delay", time.Second)
	if lp.watchListener(false) == nil {
		lp.mu.Lock()
		lp.paused = true
		lp.mu.Unlock()
	}
}

// add registers an accepted socket and hands it to a worker, which runs
// conn.serve for it (ConnState new, the header deadline, h2c detection).
func (g *group) add(lp *loop, fd int, sa unix.Sockaddr) {
	s := g.srv
	s.count(statAccepted)
	if s.MaxConns > 0 && s.nconns.Load() >= int64(s.MaxConns) {
		s.count(statRefused)
		if nc, err := fdConn(fd); err == nil {
			refuse(nc)
		}
		return
	}
	// Counted in even if Shutdown has begun, as the goroutine engine does:
	// the socket was accepted before the listener closed (accept runs
	// inside the listener's Control, which Close waits for), so its client
	// may have sent a request already, and closing it unread would reset
	// the connection (a listener handed to a new process by package listen
	// must not drop one). It is served, answered with Connection: close.
	s.mu.Lock()
	s.nconns.Add(1)
	s.connsDone.Add(1)
	s.mu.Unlock()
	g.nconns.Add(1)
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	ec := &elConn{fd: fd, lp: lp, fresh: true, raddr: sockaddrAddrPort(sa)}
	ec.born = clockSec.Load()
	ec.st.Store(elBusy)
	lp.mu.Lock()
	for fd >= len(lp.conns) {
		lp.conns = append(lp.conns, nil)
	}
	lp.conns[fd] = ec
	lp.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(fd)}
	if err := unix.EpollCtl(lp.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		ec.shut.Store(true) // the worker finds it closed and counts it out
	}
	g.dispatch(ec)
}

// fdConn turns an accepted descriptor into an ordinary net.Conn.
func fdConn(fd int) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), "riptide-conn")
	defer f.Close()
	return net.FileConn(f)
}

// remove drops ec from the loop's table (idempotent).
func (lp *loop) remove(ec *elConn) {
	lp.mu.Lock()
	if ec.fd < len(lp.conns) && lp.conns[ec.fd] == ec {
		lp.conns[ec.fd] = nil
	}
	lp.mu.Unlock()
}

// connGone counts a closed or hijacked connection out.
func (g *group) connGone() {
	g.nconns.Add(-1)
	g.srv.mu.Lock()
	g.srv.nconns.Add(-1)
	g.srv.connsDone.Done()
	g.srv.mu.Unlock()
}

// each calls f for every connection of every loop of every group.
func (s *Server) elEach(f func(*elConn)) {
	s.el.mu.Lock()
	var all []*elConn
	for g := range s.el.groups {
		for _, lp := range g.loops {
			lp.mu.Lock()
			for _, ec := range lp.conns {
				if ec != nil {
					all = append(all, ec)
				}
			}
			lp.mu.Unlock()
		}
	}
	s.el.mu.Unlock()
	for _, ec := range all {
		f(ec)
	}
}

// elCloseIdle is Server.closeIdle for the event-loop connections.
func (s *Server) elCloseIdle() {
	now := clockSec.Load()
	s.elEach(func(ec *elConn) {
		st := ConnState(ec.cstate.Load())
		if st == StateIdle || st == StateNew && now-ec.born > 5 {
			ec.SetReadDeadline(aLongTimeAgo)
		}
	})
}

// elCloseAll is Server.closeAll for the event-loop connections.
func (s *Server) elCloseAll() {
	s.elEach(func(ec *elConn) { ec.Close() })
}

// scan is the group's housekeeping goroutine: deadlines of parked
// connections, idle workers, paused accepts, and the group's end once the
// listener is closed and the last connection gone.
func (g *group) scan() {
	t := time.NewTicker(scanInterval)
	defer t.Stop()
	var expired []*elConn
	for tick := 0; ; tick++ {
		select {
		case <-t.C:
		case <-g.lnDone:
		}
		if g.done() {
			return
		}
		now := time.Now().UnixNano()
		expired = expired[:0]
		for _, lp := range g.loops {
			lp.mu.Lock()
			for _, ec := range lp.conns {
				if ec != nil && ec.st.Load()&elBusy == 0 {
					if d := ec.rdl.Load(); d != 0 && d <= now {
						expired = append(expired, ec)
					}
				}
			}
			paused := lp.paused
			lp.mu.Unlock()
			if w := lp.leader.Load(); w != nil {
				// A leader still in the serve it was in one tick ago
				// is blocked: hand the loop on (see EngineOnLoop).
				n := w.serving.Load()
				if n&1 == 1 && w == lp.seenW && n == lp.seen {
					lp.promote(w)
				}
				lp.seenW, lp.seen = w, n
			}
			if paused && tick%40 == 0 && lp.watchListener(true) == nil {
				lp.mu.Lock()
				lp.paused = false
				lp.mu.Unlock()
			}
		}
		for _, ec := range expired {
			g.expire(ec)
		}
		if tick%40 == 0 {
			g.pool.trim(now)
		}
	}
}

// done reports whether the group can end (listener closed, no connection
// left) and if so ends it.
func (g *group) done() bool {
	select {
	case <-g.lnDone:
	default:
		// The listener may have been closed directly: probe it.
		if err := g.lrc.Control(func(uintptr) {}); err != nil {
			g.listenerGone(err)
		} else if !g.srv.shuttingDown() {
			return false
		}
	}
	if g.nconns.Load() != 0 {
		return false
	}
	s := g.srv
	s.el.mu.Lock()
	delete(s.el.groups, g)
	s.el.mu.Unlock()
	g.closeLoops()
	g.pool.trim(0)
	return true
}

// worker is a pooled goroutine that serves connections handed to it, with
// the channels and timers a waiting read or write uses.
type worker struct {
	g              *group
	ch             chan *elConn
	rwake, wwake   chan struct{}
	rtimer, wtimer *time.Timer
	parked         int64 // when it last went back to the pool
	// c is the worker's own engine conn (buffers, Ctx), reused for every
	// connection it serves: no pool round trip per request.
	c *conn
	// lp is the loop this worker runs in on-loop mode (it leads it while
	// lp.leader is this worker). Written by the worker itself (by lead
	// before it runs); also read by a goroutine waiting on the worker's
	// behalf while it serves (the disconnect watch), which then hands the
	// loop on as the worker would.
	lp *loop
	// serving is bumped by the worker before and after each connection
	// it serves as a loop's leader: odd while serving (see scan).
	serving atomic.Uint32
}

// leadMsg, sent on a worker's channel, tells it to run the loop in its lp.
var leadMsg elConn

// workerPool is a LIFO stack of parked workers (the most recently used one
// is reused first, its stack still warm), as fasthttp's workerpool.
type workerPool struct {
	g      *group
	mu     sync.Mutex
	ready  []*worker
	closed bool // the group ended: returning workers exit
	// spawned counts the workers started (tests: export_linux_test.go).
	spawned atomic.Int64
}

func (p *workerPool) get() *worker {
	p.mu.Lock()
	if n := len(p.ready); n > 0 {
		w := p.ready[n-1]
		p.ready[n-1] = nil
		p.ready = p.ready[:n-1]
		p.mu.Unlock()
		return w
	}
	p.mu.Unlock()
	return p.spawn()
}

// spawn starts a worker with its own conn.
func (p *workerPool) spawn() *worker {
	w := &worker{g: p.g, ch: make(chan *elConn, 1),
		rwake: make(chan struct{}, 1), wwake: make(chan struct{}, 1)}
	w.c = newConn(p.g.srv, nil)
	w.c.kept = true
	p.spawned.Add(1)
	go w.run()
	return w
}

// minWorkers are started with the group and never trimmed: a connection's
// next request often arrives before the worker that served the previous
// one is back in the pool, and a spare avoids starting a goroutine then.
const minWorkers = 4

// prestart starts the minimum of workers.
func (p *workerPool) prestart() {
	for range minWorkers {
		p.put(p.spawn())
	}
}

// put parks w; false when the group has ended and w must exit.
func (p *workerPool) put(w *worker) bool {
	// The server clock's second: trim's precision is a second anyway, and
	// time.Now here was a clock read per request.
	if sec := clockSec.Load(); sec != 0 {
		w.parked = sec * int64(time.Second)
	} else {
		w.parked = time.Now().UnixNano()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.ready = append(p.ready, w)
	return true
}

// trim ends the workers parked for longer than workerIdle (all of them,
// for good, when now is 0). The oldest are at the bottom of the stack.
func (p *workerPool) trim(now int64) {
	p.mu.Lock()
	p.closed = now == 0
	n := 0
	for n < len(p.ready)-minWorkers && now != 0 && now-p.ready[n].parked > int64(workerIdle) ||
		now == 0 && n < len(p.ready) {
		p.ready[n].ch <- nil
		n++
	}
	p.ready = append(p.ready[:0], p.ready[n:]...)
	p.mu.Unlock()
}

func (w *worker) run() {
	for ec := range w.ch {
		if ec == &leadMsg {
			w.runLoop()
			if w.g.pool.put(w) {
				continue
			}
		} else if ec != nil {
			if ec == &ec.lp.pullMsg {
				w.pull(ec.lp)
			} else {
				w.serve(ec)
			}
			if w.g.pool.put(w) {
				continue
			}
		}
		if c := w.c; c != nil {
			c.kept = false
			connPool.Put(c)
		}
		return
	}
}

// serve runs the HTTP/1.1 code for ec until it parks, closes or leaves.
func (w *worker) serve(ec *elConn) {
	s := w.g.srv
	c := w.c
	c.attach(s, ec)
	c.ec = ec
	if ec.fresh {
		ec.fresh = false
		c.born = ec.born
		c.serve()
		return
	}
	ec.resume(c)
	c.serveHTTP1()
}

// wait blocks until wake fires or the deadline d (unix nanoseconds, 0 none)
// passes, and reports the latter; the caller re-checks its condition either
// way. A loop's leader hands the loop on first: it is the loop that
// delivers the wake.
func (w *worker) wait(wake chan struct{}, tp **time.Timer, d int64) bool {
	w.offLoop()
	if d == 0 {
		<-wake
		return false
	}
	left := time.Duration(d - time.Now().UnixNano())
	if left <= 0 {
		return true
	}
	t := *tp
	if t == nil {
		t = time.NewTimer(left)
		*tp = t
	} else {
		t.Reset(left)
	}
	select {
	case <-wake:
		t.Stop()
		return false
	case <-t.C:
		return true
	}
}

// wake sends a non-blocking token: one pending wake is enough.
func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// elCountStates adds the event loop's connections to st's gauges, without
// allocating (Stats promises none).
func (s *Server) elCountStates(st *Stats) {
	s.el.mu.Lock()
	defer s.el.mu.Unlock()
	for g := range s.el.groups {
		for _, lp := range g.loops {
			lp.mu.Lock()
			for _, ec := range lp.conns {
				if ec == nil {
					continue
				}
				switch ConnState(ec.cstate.Load()) {
				case StateNew:
					st.ConnsNew++
				case StateActive:
					st.ConnsActive++
				case StateIdle:
					st.ConnsIdle++
				}
			}
			lp.mu.Unlock()
		}
	}
}

// lead makes w, a worker from the pool, run lp (on-loop mode); lp.leader is
// already w.
func (w *worker) lead(lp *loop) {
	w.lp = lp // before the send: the channel orders it
	w.ch <- &leadMsg
}

// offLoop hands w's loop to another worker if w leads one: w is about to
// block (see EngineOnLoop).
func (w *worker) offLoop() {
	if lp := w.lp; lp != nil && lp.leader.Load() == w {
		lp.promote(w)
	}
}

// promote replaces the leader from with a pooled worker, unless someone
// already did.
func (lp *loop) promote(from *worker) {
	p := &lp.g.pool
	nw := p.get()
	if !lp.leader.CompareAndSwap(from, nw) {
		if !p.put(nw) {
			nw.ch <- nil
		}
		return
	}
	nw.lead(lp)
	// What from still meant to serve goes to workers now: from is about
	// to block, or is blocked.
	lp.mu.Lock()
	rest := lp.pending
	lp.pending = rest[:0]
	for i, ec := range rest {
		rest[i] = nil
		lp.g.dispatch(ec)
	}
	lp.mu.Unlock()
}

// elBatch is a leader's event buffer, pooled: a replaced leader finishes
// its batch while its successor polls into another one.
type elBatch struct {
	n      int
	events [128]unix.EpollEvent
	poll   func(uintptr) bool // EpollWait(0) into events, for RawConn.Read
	epfd   int
	lp     *loop
	w      *worker
}

var batchPool sync.Pool

// runLoop is the loop's goroutine in on-loop mode, run by its leader w
// until it is replaced or the group ends. Unlike run, each wait is its own
// RawConn.Read (the read lock is not held while serving, so a successor can
// poll): after the readiness reset that starts a Read, the callback polls
// before parking, so no edge is lost.
func (w *worker) runLoop() {
	lp := w.lp
	defer func() { w.lp = nil }()
	b, _ := batchPool.Get().(*elBatch)
	if b == nil {
		b = new(elBatch)
		b.poll = func(uintptr) bool {
			if b.lp.leader.Load() != b.w {
				b.n = 0 // replaced while parked: let the successor poll
				return true
			}
			for {
				n, err := epollWait0(b.epfd, b.events[:])
				if err == unix.EINTR {
					continue
				}
				b.n = max(n, 0)
				return n > 0
			}
		}
	}
	b.epfd, b.lp, b.w = lp.epfd, lp, w
	defer func() {
		b.lp, b.w = nil, nil
		batchPool.Put(b)
	}()
	for lp.leader.Load() == w {
		if lp.rc.Read(b.poll) != nil {
			return // the group closed the epoll descriptor
		}
		lp.serveBatch(w, b)
	}
}

// serveBatch is handle for a leader: the readable idle connections of the
// batch are claimed into lp.pending, then served one by one on w itself
// while it leads (a successor dispatches what is left, see promote).
func (lp *loop) serveBatch(w *worker, b *elBatch) {
	events := b.events[:b.n]
	g := lp.g
	acc := false
	lp.mu.Lock()
	for i := range events {
		if events[i].Pad == listenerTag {
			acc = true
		} else if fd := int(events[i].Fd); fd < len(lp.conns) {
			if ec := lp.conns[fd]; ec != nil && g.claim(ec, events[i].Events) {
				lp.pending = append(lp.pending, ec)
			}
		}
	}
	lp.mu.Unlock()
	if acc {
		lp.accept()
	}
	for {
		lp.mu.Lock()
		n := len(lp.pending)
		if n == 0 || lp.leader.Load() != w {
			lp.mu.Unlock()
			return
		}
		ec := lp.pending[n-1]
		lp.pending[n-1] = nil
		lp.pending = lp.pending[:n-1]
		lp.mu.Unlock()
		if ec.closeHungUp() {
			continue
		}
		ec.drained = false
		ec.w.Store(w)
		w.serving.Add(1)
		w.serve(ec)
		w.serving.Add(1)
	}
}

// epollWait0 is epoll_wait with a zero timeout, as a raw system call: it
// never blocks, so it need not tell the scheduler it is entering a system
// call (entersyscall also wakes the sysmon thread when it sleeps: a futex
// call per loop wake-up in the profiles, bench/results/2026-11-23-profile).
// epoll_pwait with no signal mask is epoll_wait, on every architecture.
func epollWait0(epfd int, events []unix.EpollEvent) (int, error) {
	n, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd),
		uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}
