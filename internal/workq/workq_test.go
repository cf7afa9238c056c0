package workq

import "testing"

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
	a, b := p.Get(), p.Get()
	if a != 1 || b != 2 || p.Spawned() != 2 {
		t.Fatalf("got %d, %d, spawned %d; want 1, 2, 2", a, b, p.Spawned())
	}
	p.Put(a, 10)
	p.Put(b, 20)
	if w := p.Get(); w != b {
		t.Errorf("Get after Put(1), Put(2) = %d, want the last parked, 2", w)
	}
	if w := p.Get(); w != a {
		t.Errorf("second Get = %d, want 1", w)
	}
	if w := p.Get(); w != 3 || p.Spawned() != 3 {
		t.Errorf("Get on an empty pool = %d (spawned %d), want a new worker 3", w, p.Spawned())
	}
}

func TestPoolTrimKeepsTheYoungestAndTheMinimum(t *testing.T) {
	p, stopped := newTestPool()
	for i := range 5 {
		p.Put(p.New(), int64(10*i)) // workers 1..5 parked at 0, 10, ..., 40
	}
	p.Trim(45, 20, 1) // idle for more than 20 at 45: parked before 25
	if got := *stopped; len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("Trim stopped %v, want [1 2 3]", got)
	}
	p.Trim(1000, 20, 1)
	if got := *stopped; len(got) != 4 || got[3] != 4 {
		t.Fatalf("second Trim stopped %v, want 4 added and 5 kept", got)
	}
	if w := p.Get(); w != 5 {
		t.Errorf("Get = %d, want the kept worker 5", w)
	}
}

func TestPoolCloseStopsAllAndRefuses(t *testing.T) {
	p, stopped := newTestPool()
	p.Put(p.Get(), 0)
	p.Put(p.Get(), 0)
	p.Close()
	if len(*stopped) != 1 {
		t.Fatalf("Close stopped %v, want the one parked worker", *stopped)
	}
	if p.Put(7, 0) {
		t.Error("Put after Close succeeded")
	}
}

func TestPoolRemove(t *testing.T) {
	p, _ := newTestPool()
	w := p.Get()
	if p.Remove(w) {
		t.Error("Remove of a worker not parked succeeded")
	}
	p.Put(w, 0)
	if !p.Remove(w) {
		t.Error("Remove of a parked worker failed")
	}
	if got := p.Get(); got == w {
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
