package evloop

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/riptide-http/riptide/internal/workq"
	"golang.org/x/sys/unix"
)

// loop is one epoll instance and the connections registered in it.
type loop struct {
	g    *Group
	id   int // index in g.loops (Hooks)
	epfd int
	file *os.File // epfd on Go's netpoller, to park on
	rc   syscall.RawConn

	// The listener's place in this epoll after accept errors (see
	// pauseListener): lnState is one of lnArmed...lnRefail; lnResume is
	// when a paused listener goes back (UnixNano), lnDelay the back-off
	// that set it.
	lnState  atomic.Int32
	lnResume atomic.Int64
	lnDelay  atomic.Int64

	mu    sync.Mutex
	conns []*Conn // by descriptor

	// On-loop mode: the worker running the loop; seenW and seen are the
	// scanner's last sample of it and of its serving counter.
	leader atomic.Pointer[Worker]
	seenW  *Worker
	seen   uint32
	// pending (under mu): connections the leader claimed from its last
	// batch and has not served yet; a replaced leader's are dispatched.
	pending []*Conn

	// accepted holds the sockets one accept call took, registered once
	// the listener is released (touched only by whoever runs the loop,
	// as are the fields below it up to rq). acceptAll is acceptAllOn,
	// made once; acceptErr is the error that ended its accepting; rsa and
	// rsaLen are accept4's address buffer.
	accepted  []acceptedSock
	acceptAll func(lfd uintptr)
	acceptErr error
	rsa       unix.RawSockaddrAny
	rsaLen    uint32

	// Worker mode: rq (under mu) holds the readable connections the loop
	// claimed and no worker has taken yet, and whether a worker is on its
	// way to take them (pull, sent pullMsg).
	rq workq.Queue[*Conn]
	// pullMsg, sent on a worker's channel, tells it to pull from rq.
	pullMsg Conn
}

// run is the loop's goroutine: wait for events, accept, hand readable
// connections to workers and wake the workers waiting on theirs.
func (lp *loop) run() {
	var events [128]unix.EpollEvent
	var batch [128]*Conn
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
func (lp *loop) handle(events []unix.EpollEvent, batch []*Conn) {
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
		} else if c := batch[i]; c != nil {
			batch[i] = nil
			// A parked connection whose peer hung up with nothing
			// left to read is closed right here (closeHungUp): no
			// worker for it.
			if c.claim(events[i].Events) && !c.closeHungUp() {
				// No owner until a worker takes it: edges meanwhile
				// are only recorded (claim wakes c.w).
				c.w.Store(nil)
				batch[k] = c
				k++
			}
		}
	}
	if k > 0 {
		lp.queue(batch[:k]...)
		clear(batch[:k])
	}
}

// queue puts cs, marked busy and without an owner, on the loop's queue
// and sends a worker to pull from it unless one is on its way already.
func (lp *loop) queue(cs ...*Conn) {
	lp.mu.Lock()
	lp.rq.Push(cs...)
	send := lp.rq.Dispatch()
	lp.mu.Unlock()
	if send {
		lp.g.get(lp.id).ch <- &lp.pullMsg
	}
}

// pull serves the connections of lp's queue until it is empty. Before it
// serves one while others wait, it makes sure a worker is on its way to
// take them: a handler that blocks holds up its own connection only, while
// with quick handlers a few workers serve a whole batch between them.
func (w *Worker) pull(lp *loop) {
	lp.mu.Lock()
	lp.rq.Arrive() // this worker was the one on its way
	for {
		c, send, ok := lp.rq.Next()
		if !ok {
			break
		}
		lp.mu.Unlock()
		if send {
			lp.g.get(lp.id).ch <- &lp.pullMsg
		}
		if c.keepDrained {
			c.keepDrained = false // queued by WakeToWrite
		} else {
			c.drained = false
		}
		c.w.Store(w)
		w.serve(c)
		lp.mu.Lock()
	}
	lp.mu.Unlock()
}

// claim records the edges ev on c. It reports true when c was idle and
// became readable: it is now marked busy and the caller must serve it.
func (c *Conn) claim(ev uint32) bool {
	in := ev&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0
	out := ev&(unix.EPOLLOUT|unix.EPOLLHUP|unix.EPOLLERR) != 0
	var hup uint32
	if ev&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		hup = stHup
	}
	for {
		old := c.st.Load()
		if old&stBusy == 0 {
			if !in && (!out || old&stWantOut == 0) {
				return false
			}
			if c.st.CompareAndSwap(old, (old|stBusy|hup)&^stWantOut) {
				return true
			}
			continue
		}
		nw := old | hup
		if in {
			nw |= stReadReady
		}
		if out {
			nw |= stWriteReady
		}
		if c.st.CompareAndSwap(old, nw) {
			if w := c.w.Load(); w != nil {
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

// dispatchIdle hands c to a worker if it is idle (for deadlines and Close
// on parked connections); a busy connection's owner sees them itself.
func (g *Group) dispatchIdle(c *Conn) {
	if c.claimIdle() {
		g.dispatch(c)
	}
}

// expire closes c, found parked past its read deadline by the scanner, or
// hands it to a worker when that needs one (a 408 for a partial head): a
// burst of idle timeouts costs no goroutine per connection.
func (g *Group) expire(c *Conn) {
	if c.claimIdle() && !c.closeExpired() {
		g.dispatch(c)
	}
}

// claimIdle marks c busy if it is idle (parked) and reports whether it
// did: the caller then owns it. A busy connection's owner sees deadlines
// and Close itself.
func (c *Conn) claimIdle() bool {
	for {
		old := c.st.Load()
		if old&stBusy != 0 {
			return false
		}
		if c.st.CompareAndSwap(old, (old|stBusy)&^stWantOut) {
			return true
		}
	}
}

// dispatch gives c, just marked busy, to a worker.
func (g *Group) dispatch(c *Conn) {
	c.drained = false
	w := g.get(c.lp.id)
	c.w.Store(w)
	w.ch <- c
}

// remove drops c from the loop's table (idempotent).
func (lp *loop) remove(c *Conn) {
	lp.mu.Lock()
	if c.fd < len(lp.conns) && lp.conns[c.fd] == c {
		lp.conns[c.fd] = nil
	}
	lp.mu.Unlock()
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
