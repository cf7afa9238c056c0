package evloop

import (
	"bufio"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// echo is a Handler with no HTTP in it: it writes back what it reads and
// parks the connection when the socket is empty, which is all the engine
// asks of a protocol.
type echo struct {
	admitted, gone, parks atomic.Int64
	ended                 chan *Group
}

func (e *echo) Admit(int) bool                   { e.admitted.Add(1); return true }
func (e *echo) StartWorker(w *Worker)            { w.Local = make([]byte, 512) }
func (e *echo) StopWorker(*Worker)               {}
func (e *echo) Expired(*Conn)                    {}
func (e *echo) CloseParked(c *Conn)              { c.Untrack() }
func (e *echo) Gone()                            { e.gone.Add(1) }
func (e *echo) AcceptError(error, time.Duration) {}
func (e *echo) ShuttingDown() bool               { return false }
func (e *echo) Ended(g *Group)                   { e.ended <- g }

func (e *echo) Serve(w *Worker, c *Conn, fresh bool) {
	buf := w.Local.([]byte)
	for {
		if c.Empty() {
			if c.Park(Saved{NReq: c.Saved.NReq + 1}, nil) {
				e.parks.Add(1)
				return
			}
			continue
		}
		n, err := c.RawRead(buf)
		if n > 0 {
			if _, err := c.Write(buf[:n]); err != nil {
				c.Untrack()
				return
			}
			continue
		}
		if err != unix.EAGAIN {
			c.Untrack() // EOF or a broken socket
			return
		}
	}
}

// waitUntil polls cond for up to 10 s (a bound on a hang, not a timing).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
	}
}

// startEcho runs a group serving echo on a fresh 127.0.0.1 listener and
// dials it.
func startEcho(t *testing.T, onLoop bool) (*net.TCPListener, *Group, *echo, net.Conn) {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	e := &echo{ended: make(chan *Group, 1)}
	g, nc := startGroup(t, ln, e, onLoop)
	return ln, g, e, nc
}

// startGroup runs a group serving h on ln and dials it.
func startGroup(t *testing.T, ln *net.TCPListener, h Handler, onLoop bool) (*Group, net.Conn) {
	t.Helper()
	var clock atomic.Int64
	g, err := New(ln, Config{Handler: h, OnLoop: onLoop, Clock: &clock,
		Backoff: func(time.Duration) time.Duration { return time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	g.Start()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return g, nc
}

// The engine serves a protocol it knows nothing about through the Handler
// alone: accept, serve, park between messages, the connection's end, and
// the group's end once the listener is closed.
func TestEngineServesAnyProtocol(t *testing.T) {
	for _, onLoop := range []bool{false, true} {
		ln, g, e, nc := startEcho(t, onLoop)
		r := bufio.NewReader(nc)
		for i, msg := range []string{"ping\n", "pong\n", "again\n"} {
			if i > 0 {
				// Parked between messages: the loop hands it back.
				waitUntil(t, "park", func() bool { return e.parks.Load() >= int64(i) })
			}
			nc.Write([]byte(msg))
			if got, err := r.ReadString('\n'); got != msg {
				t.Fatalf("onLoop %v: echo %q, %v; want %q", onLoop, got, err, msg)
			}
		}
		nc.Close()
		waitUntil(t, "connection counted out", func() bool { return e.gone.Load() == 1 })
		ln.Close()
		select {
		case <-g.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("Done not closed after the listener closed")
		}
		select {
		case got := <-e.ended:
			if got != g || e.admitted.Load() != 1 {
				t.Errorf("onLoop %v: Ended(%p) for group %p, %d admitted", onLoop, got, g, e.admitted.Load())
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the group did not end after its listener and connection")
		}
	}
}

// Once its listener is closed the group's scanner keeps its pace while
// connections remain. (It spun instead, a core's worth for as long as
// they lasted, for instance through a whole graceful Shutdown: its wait
// also returned on lnDone, closed for good by then.) The bound is not a
// timing: a ticker never ticks faster than its period however loaded the
// machine, so a span holds at most span/scanInterval passes, plus the
// tick pending at its start and the wake-up on lnDone.
func TestScannerPacedAfterListenerClose(t *testing.T) {
	for _, onLoop := range []bool{false, true} {
		_, g, e, nc := startEcho(t, onLoop)
		nc.Write([]byte("ping\n"))
		if got, err := bufio.NewReader(nc).ReadString('\n'); got != "ping\n" {
			t.Fatalf("onLoop %v: echo %q, %v", onLoop, got, err)
		}
		g.Stop()
		select {
		case <-g.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("Done not closed after the listener closed")
		}
		n0, t0 := g.scans.Load(), time.Now()
		time.Sleep(10 * scanInterval)
		n, span := g.scans.Load()-n0, time.Since(t0)
		if most := int64(span/scanInterval) + 2; n > most {
			t.Errorf("onLoop %v: %d scanner passes in %v with the listener closed and a connection open, want at most %d (one per %v)",
				onLoop, n, span, most, scanInterval)
		}
		nc.Close()
		select {
		case <-e.ended:
		case <-time.After(10 * time.Second):
			t.Fatal("the group did not end after its listener and connection")
		}
	}
}
