//go:build unix

package main

// The fleet test: real load balancers (Debian's haproxy and nginx, started
// by the test on loopback) in front of two hello processes, which this
// test binary plays (TestMain runs main when HELLO_MAIN is set, so that
// the zero-downtime restart re-executes the same binary). While a load
// generator on 127.0.0.2 runs, each backend is restarted in turn with
// SIGHUP, then one is drained (SIGUSR1) and stopped: every request must
// succeed, and the backends must see the generator's address.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if os.Getenv("HELLO_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// needTool skips the test when name is not installed, unless
// RIPTIDE_REQUIRE_TOOLS=1 (CI) makes that a failure.
func needTool(t *testing.T, name string) string {
	path, err := exec.LookPath(name)
	if err != nil {
		for _, dir := range []string{"/usr/sbin", "/sbin"} {
			if p := filepath.Join(dir, name); fileExists(p) {
				return p
			}
		}
		if os.Getenv("RIPTIDE_REQUIRE_TOOLS") == "1" {
			t.Fatalf("%s not installed (apt-get install -y haproxy nginx-light)", name)
		}
		t.Skipf("%s not installed", name)
	}
	return path
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// backend is one hello process family: the process the test started and
// the processes that replaced it through restarts (whose pids it learns
// from the shared stderr).
type backend struct {
	t    *testing.T
	addr string
	cmd  *exec.Cmd

	mu        sync.Mutex
	pid       int          // the serving process
	listening string       // its "listening" line
	stopped   map[int]bool // pids that logged "stopped"
	restarts  int
	changed   chan struct{}
}

var logPid = regexp.MustCompile(`msg=(\w+|"[^"]*").* pid=(\d+)`)

func startBackend(t *testing.T, args ...string) *backend {
	b := &backend{t: t, addr: freePort(t), stopped: map[int]bool{}, changed: make(chan struct{}, 64)}
	b.cmd = exec.Command(os.Args[0], append([]string{"-addr", b.addr}, args...)...)
	b.cmd.Env = append(os.Environ(), "HELLO_MAIN=1")
	// A pipe of our own, not StderrPipe: Wait would close that when the
	// first process exits, cutting off (and SIGPIPE-ing) its successors.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b.cmd.Stderr = w
	err = b.cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	go b.readLog(r)
	go b.cmd.Wait()
	b.waitFor("serving", func() bool { return b.pid != 0 })
	t.Cleanup(b.stop)
	return b
}

func (b *backend) readLog(r io.ReadCloser) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := logPid.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[2])
		b.mu.Lock()
		switch strings.Trim(m[1], `"`) {
		case "listening":
			b.pid, b.listening = pid, sc.Text()
		case "stopped":
			b.stopped[pid] = true
		}
		b.mu.Unlock()
		select {
		case b.changed <- struct{}{}:
		default:
		}
	}
}

func (b *backend) waitFor(what string, cond func() bool) {
	b.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		b.mu.Lock()
		ok := cond()
		b.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-b.changed:
		case <-time.After(50 * time.Millisecond):
		case <-timeout:
			b.t.Fatalf("backend %s: timed out waiting for %s", b.addr, what)
		}
	}
}

func (b *backend) signal(sig syscall.Signal) int {
	b.mu.Lock()
	pid := b.pid
	b.mu.Unlock()
	if err := syscall.Kill(pid, sig); err != nil {
		b.t.Fatalf("kill %d: %v", pid, err)
	}
	return pid
}

// restart hands the backend over to a new process and waits until the old
// one has drained and stopped.
func (b *backend) restart() {
	old := b.signal(syscall.SIGHUP)
	b.waitFor("the restart", func() bool { return b.pid != old && b.stopped[old] })
	b.mu.Lock()
	b.restarts++
	b.mu.Unlock()
}

// stop shuts the serving process down and waits for it.
func (b *backend) stop() {
	b.mu.Lock()
	pid, done := b.pid, b.stopped[b.pid]
	b.mu.Unlock()
	if done {
		return
	}
	syscall.Kill(pid, syscall.SIGTERM)
	b.waitFor("shutdown", func() bool { return b.stopped[pid] })
}

// phase is how many requests must succeed between the steps of the test
// (restarts, drain, stop), so that each step happens under load.
const phase = 1000

// load is the load generator: clients on 127.0.0.2 asking GET /whoami.
type load struct {
	sent, ok atomic.Int64
	mu       sync.Mutex
	errs     []string
	seen     map[string]int // the client address the backends reported
	stop     chan struct{}
	wg       sync.WaitGroup
}

func startLoad(t *testing.T, url string, clients int) *load {
	l := &load{seen: map[string]int{}, stop: make(chan struct{})}
	for i := range clients {
		tr := &http.Transport{
			DialContext:       (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext,
			DisableKeepAlives: i == 0, // one client opens a connection per request
		}
		c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer tr.CloseIdleConnections()
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				l.one(c, url)
			}
		}()
	}
	return l
}

func (l *load) one(c *http.Client, url string) {
	l.sent.Add(1)
	resp, err := c.Get(url)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode != 200 {
			err = fmt.Errorf("status %d: %q", resp.StatusCode, body)
		}
	}
	host, _, _ := strings.Cut(strings.TrimSpace(string(body)), ":")
	if strings.HasPrefix(string(body), "[") {
		host = string(body)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.errs = append(l.errs, err.Error())
		return
	}
	l.ok.Add(1)
	l.seen[host]++
}

// until waits until n more requests have succeeded.
func (l *load) until(t *testing.T, n int64) {
	t.Helper()
	target := l.ok.Load() + n
	for deadline := time.Now().Add(30 * time.Second); l.ok.Load() < target; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("load stalled at %d successes", l.ok.Load())
		}
	}
}

func (l *load) finish(t *testing.T, restarts int) {
	t.Helper()
	close(l.stop)
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Logf("requests sent %d, succeeded %d, restarts %d, client addresses the backends saw: %v",
		l.sent.Load(), l.ok.Load(), restarts, l.seen)
	if len(l.errs) > 0 {
		t.Errorf("%d requests failed; first: %s", len(l.errs), l.errs[0])
	}
	if l.sent.Load() != l.ok.Load() {
		t.Errorf("sent %d, succeeded %d", l.sent.Load(), l.ok.Load())
	}
	if len(l.seen) != 1 || l.seen["127.0.0.2"] == 0 {
		t.Errorf("backends saw %v, want only the generator's 127.0.0.2", l.seen)
	}
}

// answeredOf reads a backend's count of 2xx responses from its /metrics
// (health checks of a drained backend are answered 503), over a direct
// connection (with a PROXY header when proxy is set).
func answeredOf(t *testing.T, addr string, proxy bool) int64 {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return -1
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	if proxy {
		io.WriteString(nc, "PROXY TCP4 127.0.0.1 127.0.0.1 1 1\r\n")
	}
	io.WriteString(nc, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	b, _ := io.ReadAll(nc)
	_, rest, ok := strings.Cut(string(b), "\nriptide_responses_total{class=\"2xx\"} ")
	if !ok {
		return -1
	}
	line, _, _ := strings.Cut(rest, "\n")
	n, _ := strconv.ParseInt(line, 10, 64)
	return n
}

// drainOut drains b; with health checks (proxy: HAProxy) it waits until
// the balancer sends it nothing more (its 2xx count holds still while the
// load runs), without (nginx) it lets the load run on; then it stops b.
func drainOut(t *testing.T, b *backend, l *load, proxy bool) {
	t.Helper()
	b.signal(syscall.SIGUSR1)
	if !proxy {
		l.until(t, phase)
		b.stop()
		l.until(t, phase)
		return
	}
	last, still := answeredOf(t, b.addr, proxy), 0
	for deadline := time.Now().Add(30 * time.Second); still < 5; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the balancer kept sending to the drained backend")
		}
		n := answeredOf(t, b.addr, proxy)
		if n == last+1 { // our own /metrics request
			still++
		} else {
			still = 0
		}
		last = n
	}
	b.stop()
	l.until(t, phase)
}

func runFleet(t *testing.T, lbURL string, b1, b2 *backend, proxy bool) {
	l := startLoad(t, lbURL+"/whoami", 4)
	l.until(t, phase)
	b1.restart()
	l.until(t, phase)
	b2.restart()
	l.until(t, phase)
	drainOut(t, b2, l, proxy)
	l.finish(t, b1.restarts+b2.restarts)
}

func startTool(t *testing.T, path string, args ...string) {
	cmd := exec.Command(path, args...)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(path), out)
		}
	})
}

// waitHTTP waits until url answers 200.
func waitHTTP(t *testing.T, url string) {
	t.Helper()
	c := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := c.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never answered 200", url)
		}
	}
}

const haproxyConfig = `global
    maxconn 512
defaults
    mode tcp
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    timeout check 5s
    retries 3
    option redispatch
frontend fe
    bind %s
    default_backend be
backend be
    balance roundrobin
    option httpchk
    http-check send meth GET uri /ready ver HTTP/1.1 hdr Host fleet
    http-check expect status 200
    default-server send-proxy-v2 check-send-proxy check inter 100ms fall 2 rise 2
    server b1 %s
    server b2 %s
`

// TestFleetHAProxy: HAProxy (layer 4, PROXY protocol v2, HTTP health
// checks on /ready) in front of two backends.
func TestFleetHAProxy(t *testing.T) {
	haproxy := needTool(t, "haproxy")
	b1 := startBackend(t, "-proxy-from", "127.0.0.1/32", "-metrics")
	b2 := startBackend(t, "-proxy-from", "127.0.0.1/32", "-metrics")
	front := freePort(t)
	cfg := filepath.Join(t.TempDir(), "haproxy.cfg")
	os.WriteFile(cfg, []byte(fmt.Sprintf(haproxyConfig, front, b1.addr, b2.addr)), 0o644)
	startTool(t, haproxy, "-db", "-f", cfg)
	waitHTTP(t, "http://"+front+"/ready")
	runFleet(t, "http://"+front, b1, b2, true)
}

const nginxConfig = `user root;
worker_processes 1;
daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 512; }
http {
    access_log off;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    upstream be {
        server %[3]s max_fails=0;
        server %[4]s max_fails=0;
        keepalive 16;
    }
    server {
        listen %[2]s;
        location / {
            proxy_pass http://be;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_next_upstream error timeout;
        }
    }
}
`

// TestFleetNginx: nginx as an HTTP/1.1 keep-alive reverse proxy
// (X-Forwarded-For, which the backends trust from 127.0.0.1) in front of
// two backends. nginx has no active health checks: the drained backend is
// taken out when its stop refuses connections, which nginx retries
// elsewhere.
func TestFleetNginx(t *testing.T) {
	nginx := needTool(t, "nginx")
	b1 := startBackend(t, "-forwarded-from", "127.0.0.1/32", "-metrics")
	b2 := startBackend(t, "-forwarded-from", "127.0.0.1/32", "-metrics")
	front := freePort(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "nginx.conf")
	os.WriteFile(cfg, []byte(fmt.Sprintf(nginxConfig, dir, front, b1.addr, b2.addr)), 0o644)
	startTool(t, nginx, "-p", dir, "-c", cfg)
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Logf("nginx error.log:\n%.4000s", b)
		}
	})
	waitHTTP(t, "http://"+front+"/ready")
	runFleet(t, "http://"+front, b1, b2, false)
}
