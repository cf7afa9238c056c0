package evloop

import (
	"bufio"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// acceptErrEcho is echo that records the accept errors the engine reports.
type acceptErrEcho struct {
	echo
	mu   sync.Mutex
	errs []error
}

func (e *acceptErrEcho) AcceptError(err error, _ time.Duration) {
	e.mu.Lock()
	e.errs = append(e.errs, err)
	e.mu.Unlock()
}

// TestAcceptResumesAfterRacedPause forces an interleaving on every loop:
// the scanner has put a paused listener back in a loop's epoll and the
// loop, woken by the connections waiting, fails to accept again before the
// scanner has recorded the listener as back. The listener must not end in
// no epoll: once accepts succeed again, every connection that waited is
// served. (Before the fix the loop took the listener out, the scanner then
// marked it resumed, and nothing ever put it back: no connection was
// accepted again.)
func TestAcceptResumesAfterRacedPause(t *testing.T) {
	for _, onLoop := range []bool{false, true} {
		name := "workers"
		if onLoop {
			name = "onloop"
		}
		t.Run(name, func(t *testing.T) { racedPause(t, onLoop) })
	}
}

func racedPause(t *testing.T, onLoop bool) {
	var (
		failing  atomic.Bool // accepts fail with EMFILE
		mu       sync.Mutex
		failures = map[int]int{}  // failed accepts handled, by loop index
		base     = map[int]int{}  // failures when its listener's resume began
		raced    = map[int]bool{} // its first resume while failing began
		// racedDone counts the loops whose first resume is done.
		racedDone atomic.Int32
	)
	hooks := &Hooks{
		Accept: func(int) error {
			if failing.Load() {
				return unix.EMFILE
			}
			return nil
		},
		Failed: func(lp int) {
			mu.Lock()
			failures[lp]++
			mu.Unlock()
		},
		Resuming: func(lp int) {
			mu.Lock()
			base[lp] = failures[lp]
			mu.Unlock()
		},
		Resumed: func(lp int) {
			mu.Lock()
			first := !raced[lp] && failing.Load()
			raced[lp] = true
			mu.Unlock()
			if !first {
				return
			}
			// The listener is in lp's epoll again with connections
			// waiting: lp wakes and fails to accept. Let it handle
			// that before this resume completes.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
				mu.Lock()
				n, b := failures[lp], base[lp]
				mu.Unlock()
				if n > b {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("loop %d did not retry its accept within 10 s of its listener's resume", lp)
					break
				}
			}
			racedDone.Add(1)
		},
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	e := &acceptErrEcho{echo: echo{ended: make(chan *Group, 1)}}
	var clock atomic.Int64
	// The server's back-off: 5 ms, doubling to at most 1 s.
	backoff := func(prev time.Duration) time.Duration { return min(max(2*prev, 5*time.Millisecond), time.Second) }
	g, err := New(ln, Config{Handler: e, OnLoop: onLoop, Clock: &clock, Backoff: backoff, Hooks: hooks})
	if err != nil {
		t.Fatal(err)
	}
	g.Start()
	var conns []net.Conn
	defer func() {
		for _, nc := range conns {
			nc.Close()
		}
		g.Stop()
		select {
		case <-g.Done():
		case <-time.After(10 * time.Second):
			t.Error("Done not closed after Stop")
		}
	}()
	nloops := g.Loops()
	// Connections arrive while accepts fail, until every loop has paused
	// and met the interleaving on its resume.
	failing.Store(true)
	for deadline := time.Now().Add(20 * time.Second); racedDone.Load() < int32(nloops); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not every loop paused and resumed in 20 s (%d loops)", nloops)
		}
		nc, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, nc)
		if _, err := nc.Write([]byte("ping\n")); err != nil {
			t.Fatal(err)
		}
	}
	failing.Store(false)

	// Every waiting connection is accepted and served; 10 s is ten times
	// the longest back-off.
	for i, nc := range conns {
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		if got, err := bufio.NewReader(nc).ReadString('\n'); got != "ping\n" {
			t.Fatalf("connection %d of %d not served within 10 s of the accept errors' end: %q, %v", i+1, len(conns), got, err)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	emfile := 0
	for _, err := range e.errs {
		if !errors.Is(err, unix.EMFILE) {
			t.Errorf("accept error %v, want only EMFILE", err)
		}
		emfile++
	}
	if emfile < nloops {
		t.Errorf("%d accept errors reported, want at least %d (a pause per loop)", emfile, nloops)
	}
}

// remoteEcho is echo that reports each connection's RemoteAddr when it is
// first served.
type remoteEcho struct {
	echo
	addrs chan string
}

func (e *remoteEcho) Serve(w *Worker, c *Conn, fresh bool) {
	if fresh {
		e.addrs <- c.RemoteAddr().String()
	}
	e.echo.Serve(w, c, fresh)
}

// A connection's RemoteAddr is its peer's address and port, over IPv4 and
// IPv6 (the engine's accept4 decodes the kernel's socket address itself,
// allocating nothing), in both modes.
func TestAcceptRemoteAddr(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "::1"} {
		for _, onLoop := range []bool{false, true} {
			ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.ParseIP(host)})
			if err != nil {
				if host == "::1" {
					t.Skipf("no IPv6 loopback: %v", err)
				}
				t.Fatal(err)
			}
			e := &remoteEcho{echo: echo{ended: make(chan *Group, 1)}, addrs: make(chan string, 1)}
			g, nc := startGroup(t, ln, e, onLoop)
			select {
			case got := <-e.addrs:
				if want := nc.LocalAddr().String(); got != want {
					t.Errorf("%s, onLoop %v: RemoteAddr %s, want %s", host, onLoop, got, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s, onLoop %v: the connection was not served", host, onLoop)
			}
			nc.Close()
			ln.Close()
			<-g.Done()
		}
	}
}
