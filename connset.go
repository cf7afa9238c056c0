package riptide

// The Server's connections of every engine and protocol as one set of
// operations: Shutdown, Close, Drain and Stats loop over connSets instead
// of naming each engine and protocol, and the rules they share are written
// once here: admission under MaxConns (admit) and which connections
// closeIdle wakes (idleToClose).

// connSet is the connections of one engine or protocol, as the Server's
// lifecycle and Stats see them. Its methods may be called concurrently
// with connections arriving and leaving.
type connSet interface {
	// drain tells each connection to finish what it serves and close:
	// GOAWAY on HTTP/2 and HTTP/3 (Shutdown, and Drain, which also stops
	// the Alt-Svc; shutdown says which). HTTP/1.1 connections need
	// nothing: each response carries Connection: close from the draining
	// flag, and closeIdle closes the idle ones.
	drain(shutdown bool)
	// closeIdle wakes the connections idleToClose picks so that they
	// close; now is the server clock's second (clock.Sec).
	closeIdle(now int64)
	// closeAll closes every connection at once (Close, or Shutdown's
	// context expiring).
	closeAll()
	// countStates adds the connections to st's gauges, without
	// allocating (Stats promises none).
	countStates(st *Stats)
}

// connSets returns the Server's connection sets: the goroutine engine's
// connections (HTTP/1.1, and HTTP/2 served on them), the event loop's,
// the HTTP/2 connections (for their GOAWAY) and the HTTP/3 listeners and
// connections (h3Conns, h3.go). Each is a one-pointer value: the array
// costs no allocation.
func (s *Server) connSets() [4]connSet {
	return [...]connSet{goConns{s}, elConns{s}, h2Conns{s}, h3Conns{s}}
}

// newIdleAfter is how long, in seconds, a connection that has sent
// nothing since its accept may stay open while the server drains or shuts
// down: after it, it is treated as idle (as net/http does); a younger one
// may have its first request in flight.
const newIdleAfter = 5

// idleToClose reports whether a connection in state st, accepted at born
// (server clock seconds), is closed by closeIdle at now: it is idle
// between requests, or new for longer than newIdleAfter.
func idleToClose(st ConnState, born, now int64) bool {
	return st == StateIdle || st == StateNew && now-born > newIdleAfter
}

// admit takes one of MaxConns's slots for a new connection, whatever its
// engine or protocol (a TCP connection of the goroutine engine or of the
// event loop, a QUIC connection whose address is validated), or counts it
// in Stats.Refused and reports false: the caller refuses it (refuse, or
// the QUIC layer's CONNECTION_REFUSED). The slot is taken before it is
// checked, so that connections admitted at once never exceed MaxConns. A
// slot taken is freed with release when the connection ends.
func (s *Server) admit() bool {
	if n := s.nconns.Add(1); s.MaxConns > 0 && n > int64(s.MaxConns) {
		s.nconns.Add(-1)
		s.count(statRefused)
		return false
	}
	return true
}

// release frees a slot admit took.
func (s *Server) release() { s.nconns.Add(-1) }

// goConns is the goroutine engine's connections (Server.conns).
type goConns struct{ s *Server }

func (goConns) drain(bool) {}

func (g goConns) closeIdle(now int64) {
	s := g.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		// Ordering contract with conn.readRequest: the connection stores
		// StateIdle after arming its own deadline and then checks
		// draining; Drain and Shutdown set draining before this. Either it
		// sees the flag or we see it idle, and our deadline comes last.
		if idleToClose(ConnState(c.state.Load()), c.born, now) {
			c.nc.SetReadDeadline(aLongTimeAgo)
		}
	}
}

func (g goConns) closeAll() {
	s := g.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.nc.Close()
	}
}

func (g goConns) countStates(st *Stats) {
	s := g.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		st.countConn(ConnState(c.state.Load()))
	}
}

// elConns is the event loop's connections (engine_linux.go; none
// elsewhere).
type elConns struct{ s *Server }

func (elConns) drain(bool)              {}
func (e elConns) closeIdle(now int64)   { e.s.elCloseIdle(now) }
func (e elConns) closeAll()             { e.s.elCloseAll() }
func (e elConns) countStates(st *Stats) { e.s.elCountStates(st) }

// h2Conns is the HTTP/2 connections (h2.go), for their GOAWAY: they run
// on the goroutine engine's connections, which closeIdle, closeAll and
// countStates see.
type h2Conns struct{ s *Server }

func (h h2Conns) drain(shutdown bool) {
	if !shutdown {
		h.s.h2() // built now, so that h2Shutdown does not turn HTTP/2 off for the connections still to come
	}
	h.s.h2Shutdown()
}
func (h2Conns) closeIdle(int64)    {}
func (h2Conns) closeAll()          {}
func (h2Conns) countStates(*Stats) {}
