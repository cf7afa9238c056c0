package websocket

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/israce"
	"github.com/riptide-http/riptide/internal/rlimit"
)

// idleClientEnv tells the test binary, run as a child process, to be the
// client of an idle-memory measurement: "ADDR N", or "ADDR N tls" over
// TLS (TestIdleClientProcess).
const idleClientEnv = "RIPTIDE_WS_IDLE_CLIENT"

// upgradeRequest is a raw WebSocket upgrade for addr.
func upgradeRequest(addr string) []byte {
	return []byte("GET / HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
}

// TestIdleClientProcess is not a test: run by idleInChild in a child
// process, it opens N WebSocket connections to ADDR, reads each 101,
// prints "ready" and holds them until its stdin closes. Its sockets and
// their memory are then not the measuring process's.
func TestIdleClientProcess(t *testing.T) {
	spec := os.Getenv(idleClientEnv)
	if spec == "" {
		t.Skip("the client half of TestEventIdleMemory, run in a child process")
	}
	addr, ns, _ := strings.Cut(spec, " ")
	ns, secure := strings.CutSuffix(ns, " tls")
	n, _ := strconv.Atoi(ns)
	req := upgradeRequest(addr)
	conns := make([]net.Conn, 0, n)
	buf := make([]byte, 1024)
	// The server's certificate is the parent's, made at its start.
	cfg := &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}}
	for range n {
		var nc net.Conn
		var err error
		if secure {
			nc, err = tls.Dial("tcp", addr, cfg)
		} else {
			nc, err = net.Dial("tcp", addr)
		}
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, nc)
		if _, err := nc.Write(req); err != nil {
			t.Fatal(err)
		}
		for got := 0; !bytes.Contains(buf[:got], []byte("\r\n\r\n")); {
			k, err := nc.Read(buf[got:])
			if err != nil {
				t.Fatal(err)
			}
			got += k
		}
		if !bytes.HasPrefix(buf, []byte("HTTP/1.1 101 ")) {
			t.Fatalf("upgrade answered %q", buf)
		}
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	for _, nc := range conns {
		nc.Close()
	}
}

// idleInChild starts the client process holding n idle connections to
// addr (over TLS if secure) and returns once they are open; stop closes
// them.
func idleInChild(t *testing.T, addr string, n int, secure bool) (stop func()) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestIdleClientProcess$", "-test.count=1")
	spec := addr + " " + strconv.Itoa(n)
	if secure {
		spec += " tls"
	}
	stdout, stop := startChild(t, cmd, idleClientEnv+"="+spec)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if sc.Text() == "ready" {
			go io.Copy(io.Discard, stdout)
			return stop
		}
	}
	stop()
	t.Fatal("the client process ended before its connections were open")
	return nil
}

// startChild starts cmd, this test binary as a child process, with env
// added to its environment and its stderr on ours; stop closes its stdin
// (the child's signal to end) and waits for it.
func startChild(t *testing.T, cmd *exec.Cmd, env ...string) (stdout io.Reader, stop func()) {
	t.Helper()
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return out, func() {
		stdin.Close()
		cmd.Wait()
	}
}

// idleCost is what one idle connection keeps in the server's process
// (and of it, what idleCostOf's part counts).
type idleCost struct{ bytes, goroutines, part float64 }

// serverIdleCost measures what n idle connections, held by a client in a
// child process, keep in this process: live heap plus goroutine stacks
// and goroutines, per connection, once the engine's workers that served
// the upgrades are trimmed (each connection may keep perConn goroutines
// of its own). open reports the server's connections that are open now.
func serverIdleCost(t *testing.T, h riptide.Handler, n, perConn int, open func() int64) idleCost {
	return idleCostOf(t, &riptide.Server{Handler: h}, false, n, perConn, open, nil)
}

// idleCostOf is serverIdleCost for srv, served over TLS if secure; part,
// if not nil, is measured with the memory (idleCost.part).
func idleCostOf(t *testing.T, srv *riptide.Server, secure bool, n, perConn int, open, part func() int64) idleCost {
	if lim, err := rlimit.RaiseNoFile(uint64(n + 200)); err != nil || lim < uint64(n+100) {
		t.Skipf("RLIMIT_NOFILE %d is too low for %d connections", lim, n)
	}
	var url string
	if secure {
		url, _ = serveWSS(t, srv)
	} else {
		url = serveServer(t, srv)
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(url, "ws://"), "wss://"), "/")
	waitOpen := func(want int64) {
		for deadline := time.Now().Add(20 * time.Second); open() != want; {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections open, want %d", open(), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// Warm up the pools and the engine's tables.
	idleInChild(t, addr, 50, secure)()
	waitOpen(0)
	var p0, p1 int64
	settle := func(g0 int, p *int64) (uint64, int) {
		for deadline := time.Now().Add(20 * time.Second); runtime.NumGoroutine()-g0 > n/100 && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
		}
		m := quietMem()
		if part != nil {
			*p = part()
		}
		return m, runtime.NumGoroutine()
	}
	m0, g0 := settle(runtime.NumGoroutine(), &p0)
	stop := idleInChild(t, addr, n, secure)
	waitOpen(int64(n))
	m1, g1 := settle(g0+perConn*n, &p1)
	stop()
	waitOpen(0)
	return idleCost{
		bytes:      float64(int64(m1)-int64(m0)) / float64(n),
		goroutines: float64(g1-g0) / float64(n),
		part:       float64(p1-p0) / float64(n),
	}
}

// eventIdleLimit is the most an idle event-driven connection may keep in
// the server: heap and stacks (issue 35: at most 1 KiB).
const eventIdleLimit = 1024

// N idle event-driven connections (Serve) on the event loop, the client in
// a child process: each keeps at most 1 KiB of the server's heap and
// stacks and no goroutine (its Peer and the engine's connection, nothing
// else). The blocking Conn on a goroutine of its own, measured the same
// way, is logged beside it.
func TestEventIdleMemory(t *testing.T) {
	if israce.Enabled || testing.Short() {
		t.Skip("memory figures need a build without -race, and time")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the event mode parks on the event loop (Linux)")
	}
	const n = 2000
	t.Run("event", func(t *testing.T) {
		var live atomic.Int64
		cost := serverIdleCost(t, countedEcho(t, &live, true), n, 0, live.Load)
		t.Logf("event-driven: %.0f bytes of heap and stacks, %.3f goroutines per idle connection (%d connections, client in a child process)", cost.bytes, cost.goroutines, n)
		if cost.bytes > eventIdleLimit {
			t.Errorf("%.0f bytes per idle event-driven connection, want at most %d", cost.bytes, eventIdleLimit)
		}
		if cost.bytes <= 0 {
			t.Errorf("%.0f bytes per idle connection: the baseline held memory freed later", cost.bytes)
		}
		if cost.goroutines > 0.01 {
			t.Errorf("%.3f goroutines per idle event-driven connection, want none", cost.goroutines)
		}
	})
	t.Run("blocking", func(t *testing.T) {
		var live atomic.Int64
		h := riptide.HandlerFunc(func(x *riptide.Ctx) {
			if c, err := Upgrade(x, nil); err == nil {
				live.Add(1)
				go func() { wholeEcho(c); live.Add(-1) }()
			}
		})
		cost := serverIdleCost(t, h, n, 1, live.Load)
		t.Logf("blocking Conn on its own goroutine: %.0f bytes of heap and stacks, %.3f goroutines per idle connection (%d connections, client in a child process)", cost.bytes, cost.goroutines, n)
	})
}

// countedEcho serves an event-mode echo (Serve) that counts its open
// connections in live, failing t for a Peer whose EventDriven is not event.
func countedEcho(t *testing.T, live *atomic.Int64, event bool) riptide.Handler {
	eh := &Handler{
		OnOpen:    func(*Peer) { live.Add(1) },
		OnMessage: func(p *Peer, mt MessageType, msg []byte) { p.WriteMessage(mt, msg) },
		OnClose:   func(*Peer, error) { live.Add(-1) },
	}
	return riptide.HandlerFunc(func(x *riptide.Ctx) {
		if p, err := Serve(x, nil, eh); err == nil && p.EventDriven() != event {
			t.Errorf("EventDriven() = %v, want %v", p.EventDriven(), event)
		}
	})
}
