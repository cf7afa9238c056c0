package riptide_test

// Many concurrent keep-alive connections, and MaxConns.
//
// The long variant holds 10,000 connections. Client and server ends in one
// process would need 20,000 descriptors, more than a typical hard
// RLIMIT_NOFILE, so the long variant's clients run in a child process (this
// test binary again, running TestRobustHelperClients).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
)

// connStats is what holdConnections reports.
type connStats struct {
	Conns    int    `json:"conns"`
	Requests int64  `json:"requests"`
	Errors   int64  `json:"errors"`
	FirstErr string `json:"firstErr,omitempty"`
}

// holdConnections opens n keep-alive connections to addr, makes one request
// on each, calls barrier while all n are open, then makes two more requests
// on each (same connections) and closes them; with closeAtOnce it closes
// them right after the barrier instead, all together.
func holdConnections(addr string, n int, closeAtOnce bool, barrier func()) connStats {
	st := connStats{Conns: n}
	var reqs, errs atomic.Int64
	var once sync.Once
	fail := func(err error) {
		errs.Add(1)
		once.Do(func() { st.FirstErr = err.Error() })
	}
	req := func(c *keepAliveClient, i, k int) bool {
		path := fmt.Sprintf("/readbody?conn=%d&req=%d", i, k)
		r, err := c.do(get(path), false, 60*time.Second)
		if err == nil {
			err = expectBody(r, 200, []byte("read 0 body bytes, 2 args\n"))
		}
		if err == nil && r.hasToken("Connection", "close") {
			err = fmt.Errorf("conn %d: server closed a keep-alive connection", i)
		}
		if err != nil {
			fail(fmt.Errorf("conn %d request %d: %w", i, k, err))
			return false
		}
		reqs.Add(1)
		return true
	}
	clients := make([]*keepAliveClient, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64) // bounded dialling: the accept backlog is finite
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := dialClient(addr)
			if err != nil {
				fail(fmt.Errorf("conn %d: dial: %w", i, err))
				return
			}
			if req(c, i, 0) {
				clients[i] = c
			} else {
				c.Close()
			}
		}()
	}
	wg.Wait()
	barrier()
	if closeAtOnce {
		for _, c := range clients {
			if c != nil {
				c.Close()
			}
		}
		st.Requests, st.Errors = reqs.Load(), errs.Load()
		return st
	}
	for i, c := range clients {
		if c == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			for k := 1; k <= 2; k++ {
				if !req(c, i, k) {
					return
				}
			}
		}()
	}
	wg.Wait()
	st.Requests, st.Errors = reqs.Load(), errs.Load()
	return st
}

// TestRobustHelperClients is not a test: it is the client process of
// TestRobustManyConnections's long variant, and skips unless started by it.
func TestRobustHelperClients(t *testing.T) {
	t.Parallel()
	addr := os.Getenv("RIPTIDE_HELPER_ADDR")
	if addr == "" {
		t.Skip("client process of TestRobustManyConnections (long variant)")
	}
	n, _ := strconv.Atoi(os.Getenv("RIPTIDE_HELPER_CONNS"))
	raiseNoFile(t, uint64(n+1000))
	closeAtOnce := os.Getenv("RIPTIDE_HELPER_CLOSE") != ""
	st := holdConnections(addr, n, closeAtOnce, func() {
		fmt.Println("READY")
		bufio.NewReader(os.Stdin).ReadString('\n') // "GO"
	})
	b, _ := json.Marshal(st)
	fmt.Println("RESULT " + string(b))
}

// holdInChild runs holdConnections in a child process.
func holdInChild(t *testing.T, addr string, n int, barrier func()) connStats {
	return holdInChildClose(t, addr, n, false, barrier)
}

// holdInChildClose is holdInChild with holdConnections' closeAtOnce.
func holdInChildClose(t *testing.T, addr string, n int, closeAtOnce bool, barrier func()) connStats {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestRobustHelperClients$", "-test.v")
	cmd.Env = append(os.Environ(), "RIPTIDE_HELPER_ADDR="+addr, "RIPTIDE_HELPER_CONNS="+strconv.Itoa(n))
	if closeAtOnce {
		cmd.Env = append(cmd.Env, "RIPTIDE_HELPER_CLOSE=1")
	}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	defer close(done)
	go func() { // the child must not outlive a stuck test
		select {
		case <-done:
		case <-time.After(10 * time.Minute):
			cmd.Process.Kill()
		}
	}()
	var st connStats
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "READY":
			barrier()
			io.WriteString(stdin, "GO\n")
		case strings.HasPrefix(line, "RESULT "):
			if err := json.Unmarshal([]byte(line[7:]), &st); err != nil {
				t.Errorf("child result %q: %v", line, err)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("client process: %v", err)
	}
	return st
}

func TestRobustManyConnections(t *testing.T) {
	n := size(500, 10_000)
	inChild := longMode()
	if !inChild {
		raiseNoFile(t, uint64(2*n+1000))
	} else {
		raiseNoFile(t, uint64(n+1000))
	}
	var open, peak atomic.Int64
	srv := &riptide.Server{
		Handler: riptide.HandlerFunc(robustHandler),
		ConnState: func(_ net.Conn, st riptide.ConnState) {
			switch st {
			case riptide.StateNew:
				if v := open.Add(1); v > peak.Load() {
					peak.Store(v) // only the connection goroutines race here; a max is enough
				}
			case riptide.StateClosed, riptide.StateHijacked:
				open.Add(-1)
			}
		},
	}
	ls := startLive(t, srv)
	healthy(t, ls.addr)
	base := backToBaseline(t, measure(false), "warm-up")
	var during usage
	barrier := func() {
		// Every connection has been answered once and is idle, still open.
		deadline := time.Now().Add(30 * time.Second)
		for open.Load() < int64(n) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		during = measure(false)
		if got := open.Load(); got != int64(n) {
			t.Errorf("server holds %d open connections at the barrier, want %d", got, n)
		}
	}
	start := time.Now()
	var st connStats
	if inChild {
		st = holdInChild(t, ls.addr, n, barrier)
	} else {
		st = holdConnections(ls.addr, n, false, barrier)
	}
	if st.Errors > 0 || st.Requests != int64(3*n) {
		t.Errorf("%d of %d requests ok, %d errors, first: %s", st.Requests, 3*n, st.Errors, st.FirstErr)
	}
	after := backToBaseline(t, base, "after closing them")
	t.Logf("%d concurrent keep-alive connections (clients in a child process: %v), %d requests, %d errors in %v; peak open %d; before %v, all open %v, after %v",
		n, inChild, st.Requests, st.Errors, time.Since(start).Round(time.Millisecond), peak.Load(), base, during, after)
}

func TestRobustMaxConns(t *testing.T) {
	limit := size(50, 5000)
	extra := size(20, 200)
	raiseNoFile(t, uint64(2*(limit+extra)+1000))
	ls := startLive(t, &riptide.Server{Handler: riptide.HandlerFunc(robustHandler), MaxConns: limit})
	serving(t, ls)
	base := backToBaseline(t, measure(false), "start")

	held := make([]*keepAliveClient, 0, limit)
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := range limit {
		c, err := dialClient(ls.addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		r, err := c.do(get("/"), false, 10*time.Second)
		if err != nil || r.status != 200 {
			t.Fatalf("connection %d of %d (within MaxConns): %v %v", i+1, limit, r, err)
		}
	}
	// Beyond the limit: a clean 503 with Connection: close, then EOF, both
	// for a client that sent its request and for one that did not yet.
	for i := range extra {
		nc, err := net.Dial("tcp", ls.addr)
		if err != nil {
			t.Fatal(err)
		}
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		if i%2 == 0 {
			io.WriteString(nc, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
		}
		br := bufio.NewReader(nc)
		r, err := finalResponse(br, false)
		if err != nil {
			t.Fatalf("refused connection %d: %v", i, err)
		}
		if r.status != 503 || !r.hasToken("Connection", "close") {
			t.Fatalf("refused connection %d: status %d, Connection %q; want 503 and close", i, r.status, r.header.Get("Connection"))
		}
		if n, err := br.Read(make([]byte, 1)); n != 0 || err == nil || isTimeoutErr(err) {
			t.Fatalf("refused connection %d not closed after the 503 (read %d, %v)", i, n, err)
		}
		nc.Close()
	}
	// The held connections still work.
	for i, c := range held {
		if r, err := c.do(get("/"), false, 10*time.Second); err != nil || r.status != 200 {
			t.Fatalf("held connection %d after refusals: %v %v", i, r, err)
		}
	}
	// Closing one makes room for one more.
	held[0].Close()
	held = held[1:]
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := dialClient(ls.addr)
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.do(get("/"), false, 10*time.Second)
		if err == nil && r.status == 200 {
			held = append(held, c)
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("no connection accepted 30s after one of %d closed: %v %v", limit, r, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range held {
		c.Close()
	}
	held = nil
	after := backToBaseline(t, base, "after MaxConns")
	t.Logf("MaxConns %d: %d refused cleanly with 503; before %v, after %v", limit, extra, base, after)
}
