//go:build linux

package riptide

import (
	"crypto/tls"
	"net"
	"os"
	"sync"
	"time"

	"github.com/riptide-http/riptide/internal/clock"
	"github.com/riptide-http/riptide/internal/evloop"
	"github.com/riptide-http/riptide/internal/h2"
	"github.com/riptide-http/riptide/internal/takeover"
	"golang.org/x/sys/unix"
)

// The event-loop engine is internal/evloop (its package comment has the
// design). This file is the server's side of it: the evloop.Handler
// callbacks, the registry of a Server's groups, and the HTTP/1.1 code's
// park and resume over an evloop.Conn.

// elServer is a Server's event-loop groups.
type elServer struct {
	mu     sync.Mutex
	groups map[*evloop.Group]struct{}
	// hooks, set by tests before Serve, step into the listener's pause
	// and resume (accept_linux_test.go); nil otherwise.
	hooks *evloop.Hooks
}

// platformEngine is EngineAuto's choice here.
const platformEngine = EngineEventLoop

// elConn is the event loop's socket (conn.ec).
type elConn = evloop.Conn

// serveEventLoop is Serve on the event-loop engine; false when ln is not
// served by it (not a plain TCP listener, or another engine chosen).
func (s *Server) serveEventLoop(ln net.Listener) (bool, error) {
	if tl, ok := ln.(*tlsListener); ok {
		return true, s.serveGroup(tl.TCPListener, tl.cfg) // tlsloop_linux.go
	}
	tl, ok := ln.(*net.TCPListener)
	if e := s.engine(); !ok || e != EngineEventLoop && e != EngineOnLoop {
		return false, nil
	}
	return true, s.serveGroup(tl, nil)
}

// serveGroup serves ln with an event-loop group until it ends; through
// crypto/tls with cfg when it is not nil.
func (s *Server) serveGroup(ln *net.TCPListener, cfg *tls.Config) error {
	g, err := s.newGroup(ln, cfg)
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
		s.el.groups = make(map[*evloop.Group]struct{})
	}
	s.el.groups[g] = struct{}{}
	s.el.mu.Unlock()
	g.Start()
	select {
	case <-s.closed:
	case <-g.Done():
	}
	// Serve holds s.acceptors until this returns: Shutdown and Close
	// count and close connections only once every socket the loops
	// accepted is admitted and in the group's table, where they look.
	// The group itself ends later, with its last connection.
	g.Stop()
	if s.shuttingDown() {
		return ErrServerClosed
	}
	return g.Err()
}

// newGroup makes the event-loop group for ln, a TLS listener's when cfg
// is not nil. The compat door and TLS keep their workers under EngineOnLoop
// (see there).
func (s *Server) newGroup(ln *net.TCPListener, cfg *tls.Config) (*evloop.Group, error) {
	_, compat := s.Handler.(compatHandler)
	var h evloop.Handler = (*elHandler)(s)
	if cfg != nil {
		h = elTLSHandler{(*elHandler)(s), cfg}
	}
	return evloop.New(ln, evloop.Config{
		Handler: h,
		OnLoop:  s.engine() == EngineOnLoop && !compat && cfg == nil,
		Clock:   clock.Counter(),
		Backoff: acceptBackoff,
		Hooks:   s.el.hooks,
	})
}

// elHandler is the Server as the event loop's evloop.Handler: a distinct
// type, so that the callbacks stay out of Server's method set.
type elHandler Server

func (h *elHandler) srv() *Server { return (*Server)(h) }

// Admit counts an accepted socket in, or refuses it (MaxConns) or closes it
// (shutting down).
func (h *elHandler) Admit(fd int) bool {
	s := h.srv()
	s.count(statAccepted)
	if !s.admit() {
		if nc, err := evloop.FileConn(fd); err == nil {
			refuse(nc)
		}
		return false
	}
	// Counted in even if Shutdown has begun, as the goroutine engine does:
	// the socket was accepted before the listener closed (serveGroup, which
	// runs the group, holds s.acceptors until the loops have admitted all
	// they accepted: evloop.Group.Stop), so its
	// client may have sent a request already, and closing it unread would
	// reset the connection (a listener handed to a new process by package
	// listen must not drop one). It is served, answered with
	// Connection: close.
	s.mu.Lock()
	defer s.mu.Unlock()
	s.connsDone.Add(1)
	return true
}

// StartWorker gives the worker its own conn, reused for every connection
// it serves.
func (h *elHandler) StartWorker(w *evloop.Worker) {
	c := newConn(h.srv(), nil)
	c.kept = true
	w.Local = c
}

// StopWorker pools the worker's conn. The worker lets go of it: a parked
// connection still points at the worker that served it last (evloop.Conn's
// wake channels), and would otherwise keep the conn's ~37 KiB of buffers
// alive after the pool dropped it (TestTLSIdleCost).
func (h *elHandler) StopWorker(w *evloop.Worker) {
	if c, _ := w.Local.(*conn); c != nil {
		c.kept = false
		w.Local = nil
		connPool.Put(c)
	}
}

// Serve runs the HTTP/1.1 code for ec until it parks, closes or leaves.
func (h *elHandler) Serve(w *evloop.Worker, ec *evloop.Conn, fresh bool) {
	c := w.Local.(*conn)
	c.attach(h.srv(), ec)
	c.ec = ec
	if fresh {
		c.born = ec.Born
		c.serve()
		return
	}
	if hc, ok := ec.Saved.Proto.(*h2.Conn); ok {
		c.resumeH2(hc) // h2park_linux.go
		return
	}
	if p, ok := ec.Saved.Proto.(takeover.Proto); ok {
		c.resumeHandover(p) // takeover_linux.go
		return
	}
	c.resume()
	c.serveHTTP1()
}

// Expired counts the idle (or first-request) timeout of a parked
// connection the engine closes, as the worker would (conn.statReadError).
func (h *elHandler) Expired(ec *evloop.Conn) {
	s := h.srv()
	if !ec.Shut() && !s.draining.Load() {
		if ec.Saved.NReq > 0 {
			s.statTimeout(timeoutIdle)
		} else {
			s.statTimeout(timeoutHeader)
		}
	}
}

// CloseParked is what conn.closeConn does for a parked connection, with
// no conn. The ConnState hook runs on the caller's goroutine (a loop or
// the scanner).
func (h *elHandler) CloseParked(ec *evloop.Conn) {
	s := h.srv()
	if ConnState(ec.Status.Swap(int32(StateClosed))) != StateClosed {
		if hook := s.ConnState; hook != nil {
			var nc net.Conn = ec
			if t, ok := ec.Saved.Session.(*tlsSock); ok {
				nc = t.tc // the hook saw the tls.Conn before
			}
			hook(nc, StateClosed)
		}
	}
	ec.Untrack()
	s.count(statClosed)
}

// Gone counts a closed or hijacked connection out.
func (h *elHandler) Gone() {
	s := h.srv()
	s.mu.Lock()
	s.release()
	s.connsDone.Done()
	s.mu.Unlock()
}

// AcceptError counts and logs an accept error.
func (h *elHandler) AcceptError(err error, backoff time.Duration) {
	h.srv().acceptError(err, backoff)
}

// ShuttingDown reports Shutdown or Close.
func (h *elHandler) ShuttingDown() bool { return h.srv().shuttingDown() }

// Ended forgets an ended group.
func (h *elHandler) Ended(g *evloop.Group) {
	s := h.srv()
	s.el.mu.Lock()
	delete(s.el.groups, g)
	s.el.mu.Unlock()
}

// elEach calls f for every event-loop connection of s, outside the loops'
// locks.
func (s *Server) elEach(f func(*elConn)) {
	s.el.mu.Lock()
	var all []*elConn
	for g := range s.el.groups {
		all = g.AppendConns(all)
	}
	s.el.mu.Unlock()
	for _, ec := range all {
		f(ec)
	}
}

// elCloseIdle is connSet.closeIdle for the event-loop connections.
func (s *Server) elCloseIdle(now int64) {
	s.elEach(func(ec *elConn) {
		if idleToClose(ConnState(ec.Status.Load()), ec.Born, now) {
			ec.SetReadDeadline(aLongTimeAgo)
		}
	})
}

// elCloseAll is connSet.closeAll for the event-loop connections.
func (s *Server) elCloseAll() {
	s.elEach(func(ec *elConn) { ec.Close() })
}

// elCountStates adds the event loop's connections to st's gauges, without
// allocating (Stats promises none).
func (s *Server) elCountStates(st *Stats) {
	s.el.mu.Lock()
	defer s.el.mu.Unlock()
	for g := range s.el.groups {
		g.Each(func(ec *elConn) { st.countConn(ConnState(ec.Status.Load())) })
	}
}

// fillHead reads more of a request head without waiting. When the socket is
// empty it parks the connection (c.parked, nil error): the worker lets go
// of it and the loop hands it to a worker again on the next readable edge
// or when its read deadline passes.
func (c *conn) fillHead(armed bool) error {
	ec := c.ec
	for {
		if ec.Shut() {
			return net.ErrClosed
		}
		if ec.ReadExpired() {
			return os.ErrDeadlineExceeded
		}
		if ec.Empty() {
			if c.park(armed) {
				return nil
			}
			continue
		}
		if c.w == len(c.rbuf) {
			if err := c.makeRoom(); err != nil {
				return err
			}
		}
		n, err := ec.RawRead(c.rbuf[c.w:])
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

// park saves c's state on its connection and hands it to its loop; false
// when a readable edge came in meanwhile (see evloop.Conn.Park).
func (c *conn) park(armed bool) bool {
	ec := c.loopConn()
	// ec.Born is not saved: set once at accept, read by Shutdown's scan
	// (elCloseIdle).
	ec.Status.Store(c.state.Load())
	sv := evloop.Saved{NReq: c.nreq, RKind: c.rkind, RSec: c.rsec,
		WKind: c.wkind, WSec: c.wsec, HeadArmed: armed}
	if c.addrOf == c.nc {
		sv.RemoteAddr = c.addrStr
	}
	if c.laddrOf == c.nc {
		sv.LocalAddr = c.laddr
	}
	if c.tl != nil {
		sv.Session = c.tl
	}
	if !ec.Park(sv, c.rbuf[c.r:c.w]) {
		return false
	}
	c.parked = true
	return true
}

// resume restores what park saved into c, a fresh conn from the pool.
func (c *conn) resume() {
	ec := c.loopConn()
	sv := &ec.Saved
	c.nreq, c.born = sv.NReq, ec.Born
	c.rkind, c.rsec, c.wkind, c.wsec = sv.RKind, sv.RSec, sv.WKind, sv.WSec
	c.headArmed, c.resumed = sv.HeadArmed, true
	// The addresses made for an earlier request of the connection, by
	// whichever worker served it (localAddr, remoteAddrString).
	if sv.RemoteAddr != "" {
		c.addrOf, c.addrStr = c.nc, sv.RemoteAddr
	}
	if sv.LocalAddr != nil {
		c.laddrOf, c.laddr = c.nc, sv.LocalAddr
	}
	c.state.Store(ec.Status.Load())
	if p := ec.Partial(); p != nil {
		if len(p) > len(c.rbuf) {
			c.rbuf = make([]byte, max(len(p), 2*len(c.rbuf)))
		}
		c.w = copy(c.rbuf, p)
		ec.DropPartial()
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
	c.sent = true
	if err != nil {
		c.werr = err
	}
	return err
}

// The conn's seams to the event loop (engine_other.go answers them off
// Linux): each reports whether c is on the event loop and, if so, does
// what the goroutine engine does otherwise. A TLS connection on the loop
// has c.tl and no c.ec: the seams that reach the raw socket (writev,
// sendfile, half-close) must not see it, those that read, park and count
// it use loopConn.

// loopConn is c's event-loop socket, under TLS or not; nil on the
// goroutine engine.
func (c *conn) loopConn() *elConn {
	if c.tl != nil {
		return c.tl.ec
	}
	return c.ec
}

// elFill is readRequest's read on the event loop (fillHead).
func (c *conn) elFill(armed bool) (bool, error) {
	if c.tl != nil {
		return true, c.fillTLS(armed) // tlsloop_linux.go
	}
	if c.ec == nil {
		return false, nil
	}
	return true, c.fillHead(armed)
}

// elWritev is writeDirect on the event loop when wbuf holds something to
// send with p (writevDirect).
func (c *conn) elWritev(p []byte) (bool, error) {
	if c.ec == nil || c.werr != nil || len(c.wbuf) == 0 {
		return false, nil
	}
	return true, c.writevDirect(p)
}

// elMirrorState keeps the connection's state on its socket, where Shutdown
// and Stats read it while c is parked.
func (c *conn) elMirrorState(st ConnState) {
	if ec := c.loopConn(); ec != nil {
		ec.Status.Store(int32(st))
	}
}

// elUntrack counts c's socket out of the event loop, closing it unless
// hijacked.
func (c *conn) elUntrack() bool {
	ec := c.loopConn()
	if ec == nil {
		return false
	}
	ec.Untrack()
	return true
}

// elCloseWriter returns the event loop's socket for a lingering close, or
// nil.
func (c *conn) elCloseWriter() interface{ CloseWrite() error } {
	if c.ec == nil {
		return nil
	}
	return c.ec
}

// elDetach takes c's socket out of the event loop for Hijack.
func (c *conn) elDetach() (net.Conn, bool, error) {
	if c.tl != nil {
		// The tls.Conn goes on over the detached socket.
		return c.nc, true, c.tl.detach()
	}
	if c.ec == nil {
		return nil, false, nil
	}
	nc, err := c.ec.Detach()
	return nc, true, err
}
