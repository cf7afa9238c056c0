package evloop

import (
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/riptide-http/riptide/internal/workq"
	"golang.org/x/sys/unix"
)

// Handler is the server side of the engine: every call the engine makes
// into the protocol. The calls come from loops, workers and the scanner,
// concurrently.
type Handler interface {
	// Admit is called for each accepted socket before the engine takes
	// it. It reports false when the server did not admit it (it closed
	// fd or refused the client); the engine then forgets fd.
	Admit(fd int) bool
	// StartWorker is called for each new worker, before its goroutine
	// runs: the server sets w.Local, its per-worker state.
	StartWorker(w *Worker)
	// StopWorker is called on a worker's goroutine when it exits.
	StopWorker(w *Worker)
	// Serve runs the protocol for c on w, its owner, until c parks
	// (Conn.Park), ends (Conn.Untrack) or leaves (Conn.Detach). fresh: c
	// was just accepted and never served.
	Serve(w *Worker, c *Conn, fresh bool)
	// Expired is told that c, parked with no partial head, passed its read
	// deadline and is about to be closed without a worker (CloseParked
	// follows): the idle or header timeout as the server counts it.
	Expired(c *Conn)
	// CloseParked ends c, parked with no partial head and claimed by a
	// loop or the scanner, without a worker: what the server does when it
	// closes a connection (state hooks, counters), and c.Untrack. It runs
	// on the claimer's goroutine.
	CloseParked(c *Conn)
	// Gone is told that a connection was counted out (Conn.Untrack).
	Gone()
	// AcceptError is told of an accept error after which the listener is
	// out of a loop's epoll for backoff.
	AcceptError(err error, backoff time.Duration)
	// ShuttingDown reports whether the server is shutting down: accepted
	// sockets are closed and the group may end once the listener is.
	ShuttingDown() bool
	// Ended is told that the group ended: its listener is closed and its
	// last connection gone.
	Ended(g *Group)
}

// Config configures a Group.
type Config struct {
	Handler Handler
	// OnLoop runs each loop on a worker that serves readable connections
	// itself (see the package comment).
	OnLoop bool
	// Clock is the server clock's current Unix second, 0 when it is not
	// running: it spares clock reads where a second's precision will do.
	Clock *atomic.Int64
	// Backoff returns the pause after an accept error, given the previous
	// one (0 for the first).
	Backoff func(prev time.Duration) time.Duration
	// Hooks, for tests, step into the listener's pause and resume; nil
	// otherwise.
	Hooks *Hooks
}

// Hooks are the test hooks of the listener's accepts, pause and resume and
// of Stop; those of a loop get its index. Accepted and Stopping may be nil.
type Hooks struct {
	Accept   func(loop int) error // before each accept4: an error fails the call
	Failed   func(loop int)       // after the loop handled a failed accept
	Resuming func(loop int)       // in scan, before the listener goes back in the epoll
	Resumed  func(loop int)       // in scan, once it is back
	// Accepted: after a loop's accept4 calls, before the n sockets they
	// returned are admitted.
	Accepted func(loop, n int)
	// Stopping: in Stop, once the listener is closed, before Stop waits
	// for the loops' admissions.
	Stopping func()
}

// scanInterval is how often parked connections' deadlines are checked: the
// precision of the idle and header timeouts on this engine.
const scanInterval = 25 * time.Millisecond

// WorkerIdle is how long a parked worker goroutine is kept.
const WorkerIdle = 2 * time.Second

// Group is the engine for one listener.
type Group struct {
	h      Handler
	cfg    Config
	ln     *net.TCPListener
	lrc    syscall.RawConn
	lnAddr *net.TCPAddr
	loops  []*loop
	pool   workq.Pool[*Worker]
	nconns atomic.Int64

	// acceptMu is held shared by a loop from its accept4 calls until what
	// they returned is admitted and registered (loop.accept), and
	// exclusively by Stop and by the group's end (done): neither may see
	// a socket the kernel handed over and the server has not counted in.
	acceptMu sync.RWMutex

	scans atomic.Int64 // the scanner's passes (tests)

	lnOnce sync.Once
	lnDone chan struct{} // the listener is closed or failed
	lnErr  error
}

// New makes the group for ln: its loops, each with the listener in its
// epoll, and its prestarted workers. Start runs it.
func New(ln *net.TCPListener, cfg Config) (*Group, error) {
	lrc, err := ln.SyscallConn()
	if err != nil {
		return nil, err
	}
	g := &Group{h: cfg.Handler, cfg: cfg, ln: ln, lrc: lrc, lnDone: make(chan struct{})}
	g.lnAddr, _ = ln.Addr().(*net.TCPAddr)
	g.pool.Spawn, g.pool.Stop = g.spawn, stopWorker
	// A shard of parked workers per loop (the loops are made below, one
	// per P): a loop hands off to, and its workers park in, their own.
	g.pool.SetShards(runtime.GOMAXPROCS(0))
	g.prestart()
	for i := range runtime.GOMAXPROCS(0) {
		lp, err := newLoop(g, i)
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

// Start runs the loops (on pooled workers in on-loop mode) and the scanner.
func (g *Group) Start() {
	for _, lp := range g.loops {
		if g.cfg.OnLoop {
			w := g.get(lp.id)
			lp.leader.Store(w)
			w.lead(lp)
		} else {
			go lp.run()
		}
	}
	go g.scan()
}

// Stop closes the listener, if it is still open, and waits until no loop
// is between an accept and its admission: every socket the group will
// ever admit (Handler.Admit) has been, and is in Each's view unless it is
// gone already. The server calls it before it lets Shutdown or Close go
// on, so that they reach every connection it counted in. It does not end
// the group: that happens once the last connection is gone.
func (g *Group) Stop() {
	g.ln.Close()
	if h := g.cfg.Hooks; h != nil && h.Stopping != nil {
		h.Stopping()
	}
	// Closing waited for any accept4 in progress, and none can start
	// now; a loop may still be admitting what it took. Taking the lock
	// is the wait: nothing is done under it.
	g.acceptMu.Lock()
	defer g.acceptMu.Unlock()
}

// Done is closed when the listener can no longer accept; Err then says why.
func (g *Group) Done() <-chan struct{} { return g.lnDone }

// Err is the listener's error once Done is closed.
func (g *Group) Err() error { return g.lnErr }

// OnLoop reports whether the group runs in on-loop mode.
func (g *Group) OnLoop() bool { return g.cfg.OnLoop }

// Leaders returns how many loops a worker runs now (on-loop mode).
func (g *Group) Leaders() int {
	n := 0
	for _, lp := range g.loops {
		if lp.leader.Load() != nil {
			n++
		}
	}
	return n
}

// Loops returns the number of loops.
func (g *Group) Loops() int { return len(g.loops) }

// Spawned returns how many worker goroutines the group has started.
func (g *Group) Spawned() int64 { return g.pool.Spawned() }

// Each calls f for every connection of the group, under the loops' locks:
// f must not block or call into the engine. It allocates nothing.
func (g *Group) Each(f func(*Conn)) {
	for _, lp := range g.loops {
		lp.mu.Lock()
		for _, c := range lp.conns {
			if c != nil {
				f(c)
			}
		}
		lp.mu.Unlock()
	}
}

// AppendConns appends the group's connections to dst, for a caller that
// acts on each outside the loops' locks (Close, SetReadDeadline).
func (g *Group) AppendConns(dst []*Conn) []*Conn {
	g.Each(func(c *Conn) { dst = append(dst, c) })
	return dst
}

func newLoop(g *Group, id int) (*loop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return nil, err
	}
	lp := &loop{g: g, id: id, epfd: epfd, file: os.NewFile(uintptr(epfd), "riptide-epoll")}
	lp.acceptAll = lp.acceptAllOn
	lp.pullMsg.lp = lp
	if lp.rc, err = lp.file.SyscallConn(); err != nil {
		lp.file.Close()
		return nil, err
	}
	return lp, nil
}

func (g *Group) closeLoops() {
	for _, lp := range g.loops {
		lp.file.Close()
	}
}

// listenerGone records that the listener can no longer accept.
func (g *Group) listenerGone(err error) {
	g.lnOnce.Do(func() {
		g.lnErr = err
		close(g.lnDone)
	})
}

// clockNow returns the server clock's second in nanoseconds, or the real
// time when the clock is not running.
func (g *Group) clockNow() int64 {
	if sec := g.cfg.Clock.Load(); sec != 0 {
		return sec * int64(time.Second)
	}
	return time.Now().UnixNano()
}

// controlErr runs f on rc's descriptor and returns f's error or rc's.
func controlErr(rc syscall.RawConn, f func(fd int) error) error {
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
