package workq

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// newTestPool is a Pool of ints whose Spawn numbers the workers from 1 and
// whose Stop records them.
func newTestPool() (*Pool[int], *[]int) {
	var stopped []int
	n := 0
	p := &Pool[int]{
		Spawn: func() int { n++; return n },
		Stop:  func(w int) { stopped = append(stopped, w) },
	}
	return p, &stopped
}

func TestPoolIsLIFO(t *testing.T) {
	p, _ := newTestPool()
	a, b := p.Get(0), p.Get(0)
	if a != 1 || b != 2 || p.Spawned() != 2 {
		t.Fatalf("got %d, %d, spawned %d; want 1, 2, 2", a, b, p.Spawned())
	}
	p.Put(a, 0, 10)
	p.Put(b, 0, 20)
	if w := p.Get(0); w != b {
		t.Errorf("Get after Put(1), Put(2) = %d, want the last parked, 2", w)
	}
	if w := p.Get(0); w != a {
		t.Errorf("second Get = %d, want 1", w)
	}
	if w := p.Get(0); w != 3 || p.Spawned() != 3 {
		t.Errorf("Get on an empty pool = %d (spawned %d), want a new worker 3", w, p.Spawned())
	}
}

func TestPoolTrimKeepsTheYoungestAndTheMinimum(t *testing.T) {
	p, stopped := newTestPool()
	for i := range 5 {
		p.Put(p.New(), 0, int64(10*i)) // workers 1..5 parked at 0, 10, ..., 40
	}
	p.Trim(45, 20, 1) // idle for more than 20 at 45: parked before 25
	if got := *stopped; len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("Trim stopped %v, want [1 2 3]", got)
	}
	p.Trim(1000, 20, 1)
	if got := *stopped; len(got) != 4 || got[3] != 4 {
		t.Fatalf("second Trim stopped %v, want 4 added and 5 kept", got)
	}
	if w := p.Get(0); w != 5 {
		t.Errorf("Get = %d, want the kept worker 5", w)
	}
}

func TestPoolCloseStopsAllAndRefuses(t *testing.T) {
	p, stopped := newTestPool()
	p.Put(p.Get(0), 0, 0)
	p.Put(p.Get(0), 0, 0)
	p.Close()
	if len(*stopped) != 1 {
		t.Fatalf("Close stopped %v, want the one parked worker", *stopped)
	}
	if p.Put(7, 0, 0) {
		t.Error("Put after Close succeeded")
	}
}

func TestPoolRemove(t *testing.T) {
	p, _ := newTestPool()
	w := p.Get(0)
	if p.Remove(w) {
		t.Error("Remove of a worker not parked succeeded")
	}
	p.Put(w, 0, 0)
	if !p.Remove(w) {
		t.Error("Remove of a parked worker failed")
	}
	if got := p.Get(0); got == w {
		t.Error("Get returned a removed worker")
	}
}

// A burst gets one worker sent; each worker taking an item with more
// waiting sends the next spare, and no second spare while one is on its
// way.
func TestQueueSendsOneSpareAtATime(t *testing.T) {
	var q Queue[string]
	if q.Dispatch() {
		t.Fatal("Dispatch on an empty queue")
	}
	q.Push("a", "b", "c")
	if !q.Dispatch() {
		t.Fatal("no worker sent for a burst")
	}
	q.Push("d")
	if q.Dispatch() {
		t.Fatal("a second worker sent while the first is on its way")
	}
	q.Arrive()
	x, send, ok := q.Next()
	if x != "a" || !send || !ok {
		t.Fatalf("Next = %q, send %v, ok %v; want a, a spare sent", x, send, ok)
	}
	x, send, _ = q.Next()
	if x != "b" || send {
		t.Fatalf("Next = %q, send %v; want b and no second spare", x, send)
	}
	q.Arrive() // the spare arrives and takes the rest
	for _, want := range []string{"c", "d"} {
		x, send, ok = q.Next()
		if x != want || !ok {
			t.Fatalf("Next = %q, %v; want %q", x, ok, want)
		}
		if want == "c" && !send {
			t.Error("no spare sent for the item left behind c")
		}
		if want == "d" && send {
			t.Error("a spare sent for an emptied queue")
		}
	}
	if _, _, ok := q.Next(); ok || q.Len() != 0 {
		t.Errorf("queue not empty: Len %d", q.Len())
	}
}

// A sharded pool: Get takes from the hint's shard first, then from the
// others, and starts a worker only when every shard is empty; Remove,
// Trim and Close reach every shard.
func TestPoolShards(t *testing.T) {
	p, stopped := newTestPool()
	p.SetShards(3)
	for i := range 3 {
		p.Put(p.New(), i, int64(10*i)) // worker i+1 in shard i, parked at 10i
	}
	if w := p.Get(4); w != 2 { // 4 is shard 1
		t.Fatalf("Get(4) = %d, want worker 2 of shard 1", w)
	}
	if w := p.Get(1); w != 3 { // shard 1 is empty now: the next shard's
		t.Fatalf("Get(1) on an empty shard = %d, want worker 3 of shard 2", w)
	}
	if p.Spawned() != 3 {
		t.Fatalf("spawned %d, want 3: Get took parked workers", p.Spawned())
	}
	p.Put(2, 1, 100)
	p.Put(3, 2, 100)
	if !p.Remove(3) || p.Remove(3) {
		t.Error("Remove of worker 3 in shard 2: want true, then false")
	}
	p.Trim(1000, 500, 3) // keep 3 over 3 shards: 1 each, so nothing goes
	if len(*stopped) != 0 {
		t.Fatalf("Trim stopped %v, want none (one kept per shard)", *stopped)
	}
	p.Put(4, 0, 20)
	p.Trim(1000, 500, 3) // shard 0 holds 1 (at 0) and 4 (at 20): 1 goes
	if got := *stopped; len(got) != 1 || got[0] != 1 {
		t.Fatalf("Trim stopped %v, want [1]", got)
	}
	p.Close()
	if got := *stopped; len(got) != 3 {
		t.Fatalf("Close stopped %v, want 1, then 4 and 2", got)
	}
	for i := range 3 {
		if p.Put(9, i, 0) {
			t.Errorf("Put to shard %d after Close succeeded", i)
		}
	}
	if w := p.Get(0); w != 4 {
		t.Errorf("Get after Close = %d, want a new worker 4", w)
	}
}

// BenchmarkPoolGetPut is a dispatch's round trip through the pool from
// every P at once, with one stack and with a shard per P (each goroutine
// its own hint, as each event loop or connection has): run at -cpu 1,2,...
// to see the one lock's cost grow with the cores.
func BenchmarkPoolGetPut(b *testing.B) {
	for _, sharded := range []bool{false, true} {
		name := map[bool]string{false: "one", true: "sharded"}[sharded]
		b.Run(name, func(b *testing.B) {
			var p Pool[*int]
			p.Spawn = func() *int { return new(int) }
			if sharded {
				p.SetShards(runtime.GOMAXPROCS(0))
			}
			var next atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				hint := int(next.Add(1))
				for pb.Next() {
					p.Put(p.Get(hint), hint, 0)
				}
			})
		})
	}
}
