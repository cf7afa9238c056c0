package evloop

import (
	"sync/atomic"
	"time"
)

// Worker is a pooled goroutine that serves connections handed to it, with
// the channels and timers a waiting read or write uses.
type Worker struct {
	g              *Group
	ch             chan *Conn
	rwake, wwake   chan struct{}
	rtimer, wtimer *time.Timer
	// Local is the server's state for this worker, set by
	// Handler.StartWorker (riptide: its own engine conn, buffers and Ctx,
	// reused for every connection it serves: no pool round trip per
	// request).
	Local any
	// lp is the loop this worker runs in on-loop mode (it leads it while
	// lp.leader is this worker). Written by the worker itself (by lead
	// before it runs); also read by a goroutine waiting on the worker's
	// behalf while it serves (the disconnect watch), which then hands the
	// loop on as the worker would.
	lp *loop
	// serving is bumped by the worker before and after each connection
	// it serves as a loop's leader: odd while serving (see scan).
	serving atomic.Uint32
	// home is the loop, and so the pool's shard, this worker was last
	// taken for (Group.get); it parks there.
	home int
}

// leadMsg, sent on a worker's channel, tells it to run the loop in its lp.
var leadMsg Conn

// minWorkers are started with the group and never trimmed: a connection's
// next request often arrives before the worker that served the previous
// one is back in the pool, and a spare avoids starting a goroutine then.
const minWorkers = 4

// spawn starts a worker (workq.Pool.Spawn).
func (g *Group) spawn() *Worker {
	w := &Worker{g: g, ch: make(chan *Conn, 1),
		rwake: make(chan struct{}, 1), wwake: make(chan struct{}, 1)}
	g.h.StartWorker(w)
	go w.run()
	return w
}

// stopWorker tells a parked worker to exit (workq.Pool.Stop).
func stopWorker(w *Worker) { w.ch <- nil }

// prestart starts the minimum of workers.
func (g *Group) prestart() {
	for i := range minWorkers {
		w := g.pool.New()
		w.home = i
		g.put(w)
	}
}

// put parks w; false when the group has ended and w must exit. The server
// clock's second stamps it: trim's precision is a second anyway, and
// time.Now here was a clock read per request.
func (g *Group) put(w *Worker) bool { return g.pool.Put(w, w.home, g.clockNow()) }

// get takes a worker for loop lp (its index), from that loop's shard of
// the pool if one is parked there; the worker goes back there (put).
func (g *Group) get(lp int) *Worker {
	w := g.pool.Get(lp)
	w.home = lp // before the send on w.ch that hands it work
	return w
}

func (w *Worker) run() {
	for c := range w.ch {
		if c == &leadMsg {
			w.runLoop()
			if w.g.put(w) {
				continue
			}
		} else if c != nil {
			if c == &c.lp.pullMsg {
				w.pull(c.lp)
			} else {
				w.serve(c)
			}
			if w.g.put(w) {
				continue
			}
		}
		w.g.h.StopWorker(w)
		return
	}
}

// serve runs the server's protocol for c until it parks, closes or leaves.
func (w *Worker) serve(c *Conn) {
	fresh := c.fresh
	c.fresh = false
	w.g.h.Serve(w, c, fresh)
}

// wait blocks until wake fires or the deadline d (unix nanoseconds, 0 none)
// passes, and reports the latter; the caller re-checks its condition either
// way. A loop's leader hands the loop on first: it is the loop that
// delivers the wake.
func (w *Worker) wait(wake chan struct{}, tp **time.Timer, d int64) bool {
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
