package evloop

import "time"

// scan is the group's housekeeping goroutine: deadlines of parked
// connections, idle workers, paused accepts, and the group's end once the
// listener is closed and the last connection gone.
func (g *Group) scan() {
	t := time.NewTicker(scanInterval)
	defer t.Stop()
	var expired []*Conn
	lnDone := g.lnDone // nil once seen closed: the ticker paces the rest
	for tick := 0; ; tick++ {
		select {
		case <-t.C:
		case <-lnDone:
			lnDone = nil
		}
		g.scans.Add(1)
		if g.done() {
			return
		}
		now := time.Now().UnixNano()
		expired = expired[:0]
		for _, lp := range g.loops {
			expired = lp.scan(now, expired)
		}
		for _, c := range expired {
			g.expire(c)
		}
		if tick%40 == 0 {
			g.pool.Trim(now, int64(WorkerIdle), minWorkers)
		}
	}
}

// scan is the group's scan of one loop at now: it appends the parked
// connections past their read deadline to expired, hands on a stuck
// leader's loop and resumes a paused listener that is due.
func (lp *loop) scan(now int64, expired []*Conn) []*Conn {
	lp.mu.Lock()
	for _, c := range lp.conns {
		if c != nil && c.st.Load()&stBusy == 0 {
			if d := c.rdl.Load(); d != 0 && d <= now {
				expired = append(expired, c)
			}
		}
	}
	lp.mu.Unlock()
	if w := lp.leader.Load(); w != nil {
		// A leader still in the serve it was in one tick ago
		// is blocked: hand the loop on (see Config.OnLoop).
		n := w.serving.Load()
		if n&1 == 1 && w == lp.seenW && n == lp.seen {
			lp.promote(w)
		}
		lp.seenW, lp.seen = w, n
	}
	if lp.lnState.Load() == lnPaused && now >= lp.lnResume.Load() {
		lp.resumeListener()
	}
	return expired
}

// done reports whether the group can end (listener closed, no socket
// between its accept and its admission, no connection left) and if so
// ends it.
func (g *Group) done() bool {
	// Probe the listener even when lnDone is closed: a loop's failed
	// accept while the server shuts down closes lnDone before Shutdown
	// has closed the listener, and loops may accept until it has.
	err := g.lrc.Control(func(uintptr) {})
	if err == nil {
		return false
	}
	g.listenerGone(err)
	// Closed: no accept can start. One that took sockets before the
	// close holds acceptMu until they are admitted (counted in nconns).
	if !g.acceptMu.TryLock() {
		return false
	}
	defer g.acceptMu.Unlock()
	if g.nconns.Load() != 0 {
		return false
	}
	g.h.Ended(g)
	g.closeLoops()
	g.pool.Close()
	return true
}
