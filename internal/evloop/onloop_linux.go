package evloop

import (
	"sync"

	"golang.org/x/sys/unix"
)

// lead makes w, a worker from the pool, run lp (on-loop mode); lp.leader is
// already w.
func (w *Worker) lead(lp *loop) {
	w.lp = lp // before the send: the channel orders it
	w.ch <- &leadMsg
}

// offLoop hands w's loop to another worker if w leads one: w is about to
// block (see Config.OnLoop).
func (w *Worker) offLoop() {
	if lp := w.lp; lp != nil && lp.leader.Load() == w {
		lp.promote(w)
	}
}

// promote replaces the leader from with a pooled worker, unless someone
// already did.
func (lp *loop) promote(from *Worker) {
	g := lp.g
	nw := g.get(lp.id)
	if !lp.leader.CompareAndSwap(from, nw) {
		if !g.put(nw) {
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
	for i, c := range rest {
		rest[i] = nil
		g.dispatch(c)
	}
	lp.mu.Unlock()
}

// leaderBatch is a leader's event buffer, pooled: a replaced leader finishes
// its batch while its successor polls into another one.
type leaderBatch struct {
	n      int
	events [128]unix.EpollEvent
	poll   func(uintptr) bool // EpollWait(0) into events, for RawConn.Read
	epfd   int
	lp     *loop
	w      *Worker
}

var batchPool sync.Pool

// runLoop is the loop's goroutine in on-loop mode, run by its leader w
// until it is replaced or the group ends. Unlike run, each wait is its own
// RawConn.Read (the read lock is not held while serving, so a successor can
// poll): after the readiness reset that starts a Read, the callback polls
// before parking, so no edge is lost.
func (w *Worker) runLoop() {
	lp := w.lp
	defer func() { w.lp = nil }()
	b, _ := batchPool.Get().(*leaderBatch)
	if b == nil {
		b = new(leaderBatch)
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
func (lp *loop) serveBatch(w *Worker, b *leaderBatch) {
	events := b.events[:b.n]
	acc := false
	lp.mu.Lock()
	for i := range events {
		if events[i].Pad == listenerTag {
			acc = true
		} else if fd := int(events[i].Fd); fd < len(lp.conns) {
			if c := lp.conns[fd]; c != nil && c.claim(events[i].Events) {
				lp.pending = append(lp.pending, c)
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
		c := lp.pending[n-1]
		lp.pending[n-1] = nil
		lp.pending = lp.pending[:n-1]
		lp.mu.Unlock()
		if c.closeHungUp() {
			continue
		}
		c.drained = false
		c.w.Store(w)
		w.serving.Add(1)
		w.serve(c)
		w.serving.Add(1)
	}
}
