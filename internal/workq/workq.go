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
//
// A pool may be split into shards (SetShards), each a stack with its own
// lock on its own cache line, so that dispatchers on many cores do not all
// take one lock per hand-off: Get and Put name a shard by a hint (an event
// loop's index, a connection's), Get takes from another shard before it
// starts a worker. With one shard (the zero Pool) it is one stack.
type Pool[W comparable] struct {
	// Spawn starts a new worker (its goroutine) and returns it; Get calls
	// it when no worker is parked.
	Spawn func() W
	// Stop tells a parked worker, which Trim or Close took out of the
	// pool, to exit.
	Stop func(W)

	one    poolShard[W]   // the stack when shards is nil
	shards []poolShard[W] // SetShards
	// spawned counts the workers started (tests).
	spawned atomic.Int64
}

// poolShard is one stack of a Pool, padded so that no two shards' locks
// share a cache line.
type poolShard[W any] struct {
	mu     sync.Mutex
	ready  []parked[W]
	closed bool // Close was called: Put refuses, returning workers exit
	_      [64]byte
}

// parked is a worker in the pool and when it went there (unix nanoseconds).
type parked[W any] struct {
	w  W
	at int64
}

// SetShards splits the pool into n shards (n < 1: one). It must be called
// before the pool is used.
func (p *Pool[W]) SetShards(n int) {
	if n > 1 {
		p.shards = make([]poolShard[W], n)
	}
}

// shard returns the shard for hint.
func (p *Pool[W]) shard(hint int) *poolShard[W] {
	if len(p.shards) == 0 {
		return &p.one
	}
	return &p.shards[uint(hint)%uint(len(p.shards))]
}

// each calls f for every shard, each under its lock.
func (p *Pool[W]) each(f func(*poolShard[W])) {
	if len(p.shards) == 0 {
		p.one.mu.Lock()
		f(&p.one)
		p.one.mu.Unlock()
		return
	}
	for i := range p.shards {
		sh := &p.shards[i]
		sh.mu.Lock()
		f(sh)
		sh.mu.Unlock()
	}
}

// pop takes the most recently parked worker of sh, if any.
func (sh *poolShard[W]) pop() (w W, ok bool) {
	sh.mu.Lock()
	if n := len(sh.ready); n > 0 {
		w, ok = sh.ready[n-1].w, true
		sh.ready[n-1] = parked[W]{}
		sh.ready = sh.ready[:n-1]
	}
	sh.mu.Unlock()
	return w, ok
}

// Get returns the most recently parked worker of the shard for hint, else
// of the other shards in turn, else a new one.
func (p *Pool[W]) Get(hint int) W {
	if w, ok := p.shard(hint).pop(); ok {
		return w
	}
	for i := 1; i < len(p.shards); i++ {
		if w, ok := p.shard(hint + i).pop(); ok {
			return w
		}
	}
	return p.New()
}

// New starts a worker with Spawn, bypassing the parked ones (prestarting).
func (p *Pool[W]) New() W {
	p.spawned.Add(1)
	return p.Spawn()
}

// Put parks w in the shard for hint, at now (unix nanoseconds, for Trim).
// It reports false when the pool is closed: w must exit.
func (p *Pool[W]) Put(w W, hint int, now int64) bool {
	sh := p.shard(hint)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.closed {
		return false
	}
	sh.ready = append(sh.ready, parked[W]{w, now})
	return true
}

// Remove takes w out of the pool if it is parked there and reports whether
// it was: a worker whose own idle timer fired exits only if no Get took it
// meanwhile (otherwise a message is on its way to it).
func (p *Pool[W]) Remove(w W) bool {
	found := false
	p.each(func(sh *poolShard[W]) {
		for i := range sh.ready {
			if !found && sh.ready[i].w == w {
				sh.ready = append(sh.ready[:i], sh.ready[i+1:]...)
				found = true
				return
			}
		}
	})
	return found
}

// Trim stops the workers parked for longer than idle at now, keeping at
// least keep of them (with shards, keep/shards rounded up in each). The
// oldest are at the bottom of each stack.
func (p *Pool[W]) Trim(now, idle int64, keep int) {
	if n := len(p.shards); n > 1 {
		keep = (keep + n - 1) / n
	}
	p.each(func(sh *poolShard[W]) {
		n := 0
		for n < len(sh.ready)-keep && now-sh.ready[n].at > idle {
			p.Stop(sh.ready[n].w)
			n++
		}
		sh.drop(n)
	})
}

// Close stops every parked worker, for good: workers that come back later
// are refused by Put.
func (p *Pool[W]) Close() {
	p.each(func(sh *poolShard[W]) {
		sh.closed = true
		for i := range sh.ready {
			p.Stop(sh.ready[i].w)
		}
		sh.drop(len(sh.ready))
	})
}

// drop removes the n oldest entries (sh.mu held).
func (sh *poolShard[W]) drop(n int) {
	k := copy(sh.ready, sh.ready[n:])
	clear(sh.ready[k:])
	sh.ready = sh.ready[:k]
}

// Spawned returns how many workers were started.
func (p *Pool[W]) Spawned() int64 { return p.spawned.Load() }

// ProcIndex returns an index of the P (the scheduler's processor) the
// caller runs on, for sharding by core: the same on one P from call to
// call, different on different Ps (up to MaxProcIndex of them). Each P
// holds its index in its private slot of a sync.Pool, whose Get and Put of
// that slot touch only the P's own memory; indexes are handed out round
// robin when a P first asks, or after the garbage collector emptied the
// pool twice with the P idle meanwhile. The goroutine may move to another
// P after the call: the index is a locality hint, never a lock.
func ProcIndex() int {
	i := procIndex.Get().(*int)
	procIndex.Put(i)
	return *i
}

// MaxProcIndex bounds ProcIndex.
const MaxProcIndex = 256

var (
	// procIndexes[i] is i: procIndex hands out pointers to these, so its
	// New allocates nothing.
	procIndexes [MaxProcIndex]int
	nextProc    atomic.Uint32
	procIndex   = sync.Pool{New: func() any {
		return &procIndexes[(nextProc.Add(1)-1)%MaxProcIndex]
	}}
)

func init() {
	for i := range procIndexes {
		procIndexes[i] = i
	}
}

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
