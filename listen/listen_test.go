package listen

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// The test binary doubles as the restarted server: LISTEN_TEST_CHILD picks
// its role.
func TestMain(m *testing.M) {
	switch os.Getenv("LISTEN_TEST_CHILD") {
	case "":
		os.Exit(m.Run())
	case "handoff":
		os.Exit(childHandoff())
	case "systemd":
		os.Exit(childSystemd())
	case "fail":
		os.Exit(3)
	}
	os.Exit(4)
}

// serveUntilTERM serves "name" on ln until SIGTERM, then shuts down.
func serveUntilTERM(ln net.Listener, name string, ready func()) int {
	srv := &riptide.Server{Logger: slog.New(slog.DiscardHandler),
		Handler: riptide.HandlerFunc(func(x *riptide.Ctx) { x.WriteString(name) })}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	ready()
	<-term
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	<-done
	return 0
}

func childHandoff() int {
	h, err := NewHandoff()
	if err != nil || !h.Inherited() {
		return 5
	}
	ln, err := h.Listen("tcp", "127.0.0.1:0")
	if err != nil || ln.Addr().String() != os.Getenv("LISTEN_TEST_ADDR") {
		return 6 // not the inherited socket
	}
	return serveUntilTERM(ln, "child", func() { h.Ready() })
}

func childSystemd() int {
	lns, names, err := Systemd()
	if err != nil || len(lns) != 1 || names[0] != "web" || os.Getenv("LISTEN_FDS") != "" {
		return 5
	}
	return serveUntilTERM(lns[0], "systemd", func() {})
}

// loadClient sends GETs in a loop until stop, on new connections or
// keep-alive ones, counting answers by body and failures.
type loadClient struct {
	mu     sync.Mutex
	bodies map[string]int
	errs   []error
}

func (lc *loadClient) run(addr string, keepAlive bool, stop <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	tr := &http.Transport{DisableKeepAlives: !keepAlive}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for {
		select {
		case <-stop:
			return
		default:
		}
		resp, err := c.Get("http://" + addr + "/")
		var body []byte
		if err == nil {
			body, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		lc.mu.Lock()
		if err != nil {
			lc.errs = append(lc.errs, err)
		} else {
			lc.bodies[string(body)]++
		}
		lc.mu.Unlock()
	}
}

func (lc *loadClient) count(body string) int {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.bodies[body]
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// testHandoff returns a Handoff whose Restart runs this test binary with
// the environment env returns for the listener's address, and its
// listener on a fresh loopback port.
func testHandoff(t *testing.T, env func(addr string) []string) (*Handoff, net.Listener) {
	t.Helper()
	h, err := NewHandoff()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := h.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.Path, h.Args = os.Args[0], []string{"-test.run=^$"}
	h.Env = append(os.Environ(), env(ln.Addr().String())...)
	return h, ln
}

// TestHandoffRestart: a serving process hands its listener to a new one
// (this test binary in its child role), shuts down and drains, while
// clients on new and on keep-alive connections keep sending: every request
// succeeds, first answered by the old process, then by the new.
func TestHandoffRestart(t *testing.T) {
	var addr string
	h, ln := testHandoff(t, func(a string) []string {
		addr = a
		return []string{"LISTEN_TEST_CHILD=handoff", "LISTEN_TEST_ADDR=" + a}
	})

	srv := &riptide.Server{Logger: slog.New(slog.DiscardHandler),
		Handler: riptide.HandlerFunc(func(x *riptide.Ctx) { x.WriteString("parent") })}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	lc := &loadClient{bodies: map[string]int{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, ka := range []bool{false, false, true, true} {
		wg.Add(1)
		go lc.run(addr, ka, stop, &wg)
	}
	defer func() { close(stop); wg.Wait() }()
	waitFor(t, "parent answers", func() bool { return lc.count("parent") >= 100 })

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	proc, err := h.Restart(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { proc.Signal(syscall.SIGTERM); proc.Wait() }()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != riptide.ErrServerClosed {
		t.Fatalf("Serve: %v", err)
	}
	parent := lc.count("parent")
	waitFor(t, "child answers", func() bool { return lc.count("child") >= 100 })
	close(stop)
	wg.Wait()
	stop = make(chan struct{})

	lc.mu.Lock()
	defer lc.mu.Unlock()
	t.Logf("answers: %v; the parent's after the restart began: %d", lc.bodies, lc.bodies["parent"]-parent)
	if len(lc.errs) > 0 {
		t.Errorf("%d failed requests, first: %v", len(lc.errs), lc.errs[0])
	}
	if len(lc.bodies) != 2 {
		t.Errorf("answers %v, want only parent and child", lc.bodies)
	}
}

// TestHandoffRestartFails: a new process that exits before Ready makes
// Restart fail, and the old one keeps its listener.
func TestHandoffRestartFails(t *testing.T) {
	h, ln := testHandoff(t, func(string) []string { return []string{"LISTEN_TEST_CHILD=fail"} })
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := h.Restart(ctx); !errors.Is(err, ErrNotReady) {
		t.Fatalf("Restart = %v, want ErrNotReady", err)
	}
	go func() {
		if nc, err := ln.Accept(); err == nil {
			nc.Close()
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("listener gone after a failed restart: %v", err)
	}
	nc.Close()
}

// TestSystemd: a process started the way systemd starts a socket-activated
// service (the socket at descriptor 3, LISTEN_PID its own pid, LISTEN_FDS
// and LISTEN_FDNAMES) serves on it.
func TestSystemd(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// sh sets LISTEN_PID to its own pid and execs: the pid is the child's.
	cmd := exec.Command("/bin/sh", "-c", `LISTEN_PID=$$ exec "$0" -test.run='^$'`, os.Args[0])
	cmd.Env = append(os.Environ(), "LISTEN_TEST_CHILD=systemd", "LISTEN_FDS=1", "LISTEN_FDNAMES=web")
	cmd.ExtraFiles = []*os.File{f}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { cmd.Process.Signal(syscall.SIGTERM); <-exited }()
	ln.Close() // the child holds the socket now
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		select {
		case e := <-exited:
			t.Fatalf("child exited: %v", e)
		default:
		}
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "systemd" {
		t.Errorf("got %q", body)
	}
}

// TestReusePort: two processes' worth of listeners bind one port with
// SO_REUSEPORT, and connections reach both.
func TestReusePort(t *testing.T) {
	ctx := context.Background()
	a, err := ReusePort(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := ReusePort(ctx, "tcp", a.Addr().String())
	if err != nil {
		t.Fatalf("second SO_REUSEPORT listener: %v", err)
	}
	defer b.Close()
	if _, err := net.Listen("tcp", a.Addr().String()); err == nil {
		t.Error("a listener without SO_REUSEPORT bound the same port")
	}
	var hits [2]atomic.Int64
	for i, ln := range []net.Listener{a, b} {
		go func() {
			for {
				nc, err := ln.Accept()
				if err != nil {
					return
				}
				hits[i].Add(1)
				nc.Close()
			}
		}()
	}
	for n := 0; hits[0].Load() == 0 || hits[1].Load() == 0; n++ {
		if n == 2000 {
			t.Fatalf("connections reached only one listener: %d, %d", hits[0].Load(), hits[1].Load())
		}
		nc, err := net.Dial("tcp", a.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		nc.Close()
	}
}
