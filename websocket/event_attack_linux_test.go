package websocket

import (
	"errors"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/israce"
	"github.com/riptide-http/riptide/ws"
)

// The attacks of attack_test.go against the event-driven mode (Serve) on
// the event loop (Linux), where nothing blocks: each ends with the connection
// closed, OnClose told why, and memory and goroutines within a bound.

// serveEvents serves h's callbacks with o on the event loop and returns
// the URL and the channel of OnClose's errors; the test fails if a
// connection is not event-driven.
func serveEvents(t *testing.T, o *Options, h Handler) (string, <-chan error) {
	t.Helper()
	eh, closed := eventsHandler(t, o, h)
	return serve(t, riptide.EngineAuto, eh), closed
}

// eventsHandler serves h's callbacks with o, failing the test for a
// connection that is not event-driven, and returns the channel of
// OnClose's errors.
func eventsHandler(t *testing.T, o *Options, h Handler) (riptide.Handler, <-chan error) {
	closed := make(chan error, 16)
	onClose := h.OnClose
	h.OnClose = func(p *Peer, err error) {
		if onClose != nil {
			onClose(p, err)
		}
		closed <- err
	}
	return riptide.HandlerFunc(func(x *riptide.Ctx) {
		if p, err := Serve(x, o, &h); err == nil && !p.EventDriven() {
			t.Error("not event-driven on the event loop")
		}
	}), closed
}

// waitClosed returns the next OnClose error, failing after a minute (a
// guard against a hang: a race build compresses the bomb slowly).
func waitClosed(t *testing.T, closed <-chan error) error {
	t.Helper()
	select {
	case err := <-closed:
		return err
	case <-time.After(time.Minute):
		t.Fatal("OnClose not called within a minute")
		return nil
	}
}

// A client that never reads, under a server goroutine that writes 16 KiB
// messages as fast as it can: no write waits; once the socket buffers are
// full the queue fills to Options.WriteQueueLimit (plus the message that
// crossed it), the next write fails with ErrWriteQueueFull, the connection
// closes, and the server's heap grew by at most about that bound.
func TestEventNeverReadingClient(t *testing.T) {
	eachNet(t, testEventNeverReadingClient)
}

// testEventNeverReadingClient is TestEventNeverReadingClient over en.
func testEventNeverReadingClient(t *testing.T, en *evNet) {
	const queueLimit = 128 << 10
	type result struct {
		sent   int64
		err    error
		heap   int64 // heap growth with the queue about full
		queued int   // the most bytes queued
	}
	res := make(chan result, 1)
	url, closed := en.serveEvents(t, &Options{WriteQueueLimit: queueLimit}, Handler{
		OnOpen: func(p *Peer) {
			go func() {
				msg := make([]byte, 16<<10)
				before := heapNow()
				var r result
				for r.sent < 1<<30 {
					if r.err = p.WriteMessage(BinaryMessage, msg); r.err != nil {
						break
					}
					r.sent += int64(len(msg))
					p.ev.mu.Lock()
					queued := p.ev.queued()
					p.ev.mu.Unlock()
					if queued > r.queued {
						r.queued = queued
						if queued > queueLimit-2*len(msg) && r.heap == 0 {
							// The queue is about full: what it holds.
							r.heap = int64(heapNow()) - int64(before)
						}
					}
				}
				res <- r
			}()
		},
	})
	en.dial(t, url, nil) // and never read
	r := <-res
	if r.err != ErrWriteQueueFull {
		t.Fatalf("server sent %d bytes to a client that reads nothing; write error %v, want %v", r.sent, r.err, ErrWriteQueueFull)
	}
	if err := waitClosed(t, closed); err != ErrWriteQueueFull {
		t.Errorf("OnClose: %v, want %v", err, ErrWriteQueueFull)
	}
	most := queueLimit + 16<<10 + ws.MaxHeaderLen
	if en.tls {
		most += 2 * tlsRecordOverhead // the message's records
	}
	if r.queued > most || r.queued < queueLimit {
		t.Errorf("at most %d bytes queued, want the queue filled to its %d and at most one message (%d in all)", r.queued, queueLimit, most)
	}
	if r.heap > queueLimit+512<<10 {
		t.Errorf("server heap grew %d bytes with the queue about full (sent %d bytes), want under the queue's %d + 512 KiB", r.heap, r.sent, queueLimit)
	}
	t.Logf("sent %d bytes, at most %d queued; heap growth %d with the queue about full", r.sent, r.queued, r.heap)
}

// A message dripping in a byte at a time, and a connection that sends
// nothing: with Options.ReadTimeout the parked connection's alarm ends it
// (OnClose: os.ErrDeadlineExceeded) and its socket is closed.
func TestEventSlowDrip(t *testing.T) {
	url, closed := serveEvents(t, &Options{ReadTimeout: 200 * time.Millisecond}, Handler{
		OnMessage: func(*Peer, MessageType, []byte) { t.Error("a message was delivered") },
	})
	slowDrip(t, url, func(drip bool) {
		if err := waitClosed(t, closed); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("drip %v: OnClose %v, want %v", drip, err, os.ErrDeadlineExceeded)
		}
	})
}

// A fragmented message past the read limit: 1009 as soon as the limit is
// passed, sent to the client and given to OnClose.
func TestEventFragmentedBeyondLimit(t *testing.T) {
	url, closed := serveEvents(t, &Options{ReadLimit: 64 << 10}, Handler{
		OnMessage: func(_ *Peer, _ MessageType, msg []byte) { t.Errorf("a message of %d bytes was delivered", len(msg)) },
	})
	c := dial(t, url, nil)
	go writeFragmentsPastLimit(c)
	if err := waitClosed(t, closed); CloseStatus(err) != ws.CloseTooBig {
		t.Errorf("OnClose: %v, want close 1009", err)
	}
	expectClose1009(t, c)
}

// A compression bomb (64 MiB of zeros, about 64 KiB compressed) against a
// 1 MiB read limit: inflating stops just past the limit, 1009, and the
// server allocates a bounded amount (the 1 MiB output doubling to 2 MiB,
// and the compressed input).
func TestEventCompressionBomb(t *testing.T) {
	var before atomic.Uint64
	url, closed := serveEvents(t, &Options{Compression: true, ReadLimit: 1 << 20}, Handler{
		OnOpen:    func(*Peer) { before.Store(totalAlloc()) },
		OnMessage: func(_ *Peer, _ MessageType, msg []byte) { t.Errorf("a message of %d bytes was delivered", len(msg)) },
	})
	c := dialBomb(t, url) // the bomb is made before OnOpen: not counted
	err := waitClosed(t, closed)
	alloc := totalAlloc() - before.Load()
	if CloseStatus(err) != ws.CloseTooBig {
		t.Errorf("OnClose: %v, want close 1009", err)
	}
	if alloc > 8<<20 {
		t.Errorf("server allocated %d bytes reading the bomb, want under 8 MiB", alloc)
	}
	t.Logf("server allocated %d bytes reading the bomb", alloc)
	expectClose1009(t, c)
}

// A ping flood from a client that never reads the pongs: the pongs fill
// the socket, then the write queue, and the connection is closed with
// ErrWriteQueueFull; no goroutine is added for it and the heap grows by
// about the queue's bound at most.
func TestEventPingFlood(t *testing.T) {
	const queueLimit = 64 << 10
	url, closed := serveEvents(t, &Options{WriteQueueLimit: queueLimit}, Handler{})
	c := dial(t, url, nil)
	g0, h0 := runtime.NumGoroutine(), heapNow()
	sent, werr := floodPings(t, c, 5*time.Second, g0)
	if err := waitClosed(t, closed); err != ErrWriteQueueFull {
		t.Errorf("OnClose: %v, want %v", err, ErrWriteQueueFull)
	}
	if grew := int64(heapNow()) - int64(h0); grew > queueLimit+512<<10 {
		t.Errorf("heap grew %d bytes over %d pings, want under the queue's %d + 512 KiB", grew, sent, queueLimit)
	}
	t.Logf("%d pings before the server closed the connection (client write error %v)", sent, werr)
}

// Connections opened and dropped without a close frame give everything
// back: OnClose sees 1006 for each, the engine counts each closed, and
// three more rounds of as many leave the goroutines where they were and
// the heap within 256 KiB of where the first round left it (a Peer left
// behind would be about 500 bytes each, 1.5 MB in all), once the workers
// that the bursts of hang-ups started (OnClose runs on one) are trimmed.
func TestEventDroppedConns(t *testing.T) {
	var live, abnormal atomic.Int64
	h := &Handler{
		OnOpen: func(*Peer) { live.Add(1) },
		OnClose: func(_ *Peer, err error) {
			if CloseStatus(err) == ws.CloseAbnormal {
				abnormal.Add(1)
			}
			live.Add(-1)
		},
	}
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) { Serve(x, nil, h) })}
	url := serveServer(t, srv)
	idleConns(t, url, 1)[0].Close() // the engine is running
	for live.Load() > 0 {
		time.Sleep(time.Millisecond)
	}
	gStart := runtime.NumGoroutine()
	// settled is the heap and goroutines once the engine has trimmed the
	// workers a burst of hang-ups started (each runs OnClose; idle ones
	// go after evloop.WorkerIdle).
	settled := func(want int) (int, uint64) {
		g := runtime.NumGoroutine()
		for deadline := time.Now().Add(20 * time.Second); g > want && time.Now().Before(deadline); g = runtime.NumGoroutine() {
			time.Sleep(50 * time.Millisecond)
		}
		return g, quietMem()
	}
	const n = 1000
	dropConns(t, url, n, &live)
	g0, before := settled(gStart + 2)
	for range 3 {
		dropConns(t, url, n, &live)
	}
	g1, after := settled(g0 + 2)
	if a := abnormal.Load(); a != 4*n+1 {
		t.Errorf("OnClose saw 1006 for %d connections of %d", a, 4*n+1)
	}
	var st riptide.Stats
	srv.Stats(&st)
	if st.Closed != st.Accepted {
		t.Errorf("the server accepted %d connections and closed %d", st.Accepted, st.Closed)
	}
	if g1 > g0+2 {
		t.Errorf("%d goroutines after %d more dropped connections, %d before", g1, 3*n, g0)
	}
	if grew := int64(after) - int64(before); grew > 256<<10 && !israce.Enabled {
		t.Errorf("heap and stacks %d bytes above the first round's after %d more dropped connections, want under 256 KiB", grew, 3*n)
	}
}
