// Package workq holds the two scheduling shapes the engines share: a LIFO
// pool of parked worker goroutines and a burst queue served by workers of
// which at most one is on its way at a time (the spare). Neither starts a
// goroutine or takes a lock of its own on the caller's behalf beyond what
// each type documents: the pool has its lock, the queue is guarded by the
// caller's (it lives beside the state that same lock guards).
package workq

import (
	"sync"
	"sync/atomic"
)

// Pool is a LIFO stack of parked workers: the most recently used one is
// reused first, its stack still warm, as fasthttp's workerpool. W is the
// caller's worker handle (a pointer); the caller runs the worker's
// goroutine, which hands itself back with Put when it has nothing to do.
type Pool[W comparable] struct {
	// Spawn starts a new worker (its goroutine) and returns it; Get calls
	// it when no worker is parked.
	Spawn func() W
	// Stop tells a parked worker, which Trim or Close took out of the
	// pool, to exit.
	Stop func(W)

	mu     sync.Mutex
	ready  []parked[W]
	closed bool // Close was called: Put refuses, returning workers exit
	// spawned counts the workers started (tests).
	spawned atomic.Int64
}

// parked is a worker in the pool and when it went there (unix nanoseconds).
type parked[W any] struct {
	w  W
	at int64
}

// Get returns the most recently parked worker, or a new one.
func (p *Pool[W]) Get() W {
	p.mu.Lock()
	if n := len(p.ready); n > 0 {
		w := p.ready[n-1].w
		p.ready[n-1] = parked[W]{}
		p.ready = p.ready[:n-1]
		p.mu.Unlock()
		return w
	}
	p.mu.Unlock()
	return p.New()
}

// New starts a worker with Spawn, bypassing the parked ones (prestarting).
func (p *Pool[W]) New() W {
	p.spawned.Add(1)
	return p.Spawn()
}

// Put parks w, at now (unix nanoseconds, for Trim). It reports false when
// the pool is closed: w must exit.
func (p *Pool[W]) Put(w W, now int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.ready = append(p.ready, parked[W]{w, now})
	return true
}

// Remove takes w out of the pool if it is parked there and reports whether
// it was: a worker whose own idle timer fired exits only if no Get took it
// meanwhile (otherwise a message is on its way to it).
func (p *Pool[W]) Remove(w W) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.ready {
		if p.ready[i].w == w {
			p.ready = append(p.ready[:i], p.ready[i+1:]...)
			return true
		}
	}
	return false
}

// Trim stops the workers parked for longer than idle at now, keeping at
// least keep of them. The oldest are at the bottom of the stack.
func (p *Pool[W]) Trim(now, idle int64, keep int) {
	p.mu.Lock()
	n := 0
	for n < len(p.ready)-keep && now-p.ready[n].at > idle {
		p.Stop(p.ready[n].w)
		n++
	}
	p.drop(n)
	p.mu.Unlock()
}

// Close stops every parked worker, for good: workers that come back later
// are refused by Put.
func (p *Pool[W]) Close() {
	p.mu.Lock()
	p.closed = true
	for i := range p.ready {
		p.Stop(p.ready[i].w)
	}
	p.drop(len(p.ready))
	p.mu.Unlock()
}

// drop removes the n oldest entries (p.mu held).
func (p *Pool[W]) drop(n int) {
	k := copy(p.ready, p.ready[n:])
	clear(p.ready[k:])
	p.ready = p.ready[:k]
}

// Spawned returns how many workers were started.
func (p *Pool[W]) Spawned() int64 { return p.spawned.Load() }

// Queue is a FIFO of items a burst made ready (readable connections, new
// streams), served by workers sent for it. At most one worker is on its
// way at a time, the spare: a burst costs one goroutine wake-up, not one
// per item. A worker that arrives (Arrive) takes items one by one (Next);
// before it serves one while others wait, Next has it send the next spare,
// so a handler that blocks holds up its own item only, while with quick
// handlers a few workers serve a whole burst between them.
//
// A Queue is guarded by the caller's lock, held across every call.
type Queue[T any] struct {
	items []T
	head  int
	spare bool // a worker is on its way to take from the queue
}

// Push appends items; the caller then calls Dispatch (at once, or once
// for a burst).
func (q *Queue[T]) Push(items ...T) { q.items = append(q.items, items...) }

// Dispatch reports whether the caller must send a worker to serve the
// queue: it has items and no spare is on its way. It marks the spare sent.
func (q *Queue[T]) Dispatch() bool {
	if q.head == len(q.items) || q.spare {
		return false
	}
	q.spare = true
	return true
}

// Arrive is called by the worker sent for the queue when it starts taking
// items: the spare is no longer on its way.
func (q *Queue[T]) Arrive() { q.spare = false }

// Next removes the first item. ok is false when the queue is empty. send
// is true when items remain and no spare is on its way: the caller must
// send one (it is marked sent) before it serves x.
func (q *Queue[T]) Next() (x T, send, ok bool) {
	if q.head == len(q.items) {
		return x, false, false
	}
	var zero T
	x = q.items[q.head]
	q.items[q.head] = zero
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if !q.spare {
		q.spare = true
		send = true
	}
	return x, send, true
}

// Len returns the number of items waiting.
func (q *Queue[T]) Len() int { return len(q.items) - q.head }
