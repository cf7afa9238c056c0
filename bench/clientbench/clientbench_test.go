package clientbench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/riptide-http/riptide/bench/internal/benchserver"
	"github.com/riptide-http/riptide/bench/internal/fastroutes"
	"github.com/riptide-http/riptide/client"
)

// parallelism is the number of goroutines per GOMAXPROCS in ConcurrentGET.
const parallelism = 16

// maxConns bounds each client's connections to the server, the same for
// every client.
const maxConns = 512

// Environment variables that choose the server (see the package doc).
const (
	envServer = "CLIENTBENCH_SERVER" // ceiling (default), fasthttp or inproc
	envAddr   = "CLIENTBENCH_ADDR"   // host:port of a server already running
	envServe  = "CLIENTBENCH_SERVE"  // set in the fasthttp child process
)

var (
	serverOnce   sync.Once
	serverAddr   string
	serverEchoes bool // POST /echo echoes the body (not the ceiling)
	serverStop   func()
)

func TestMain(m *testing.M) {
	if os.Getenv(envServe) == "1" {
		serveChild()
		return
	}
	code := m.Run()
	if serverStop != nil {
		serverStop()
	}
	os.Exit(code)
}

// addr returns the server's address, starting the server on first use.
func addr(b *testing.B) string {
	serverOnce.Do(func() {
		var err error
		mode := os.Getenv(envServer)
		switch {
		case os.Getenv(envAddr) != "":
			serverAddr = os.Getenv(envAddr)
			serverEchoes = mode != "" && mode != "ceiling"
		case mode == "" || mode == "ceiling":
			serverAddr, serverStop, err = startCeiling()
		case mode == "fasthttp":
			serverAddr, serverStop, err = startChild()
			serverEchoes = true
		case mode == "inproc":
			serverAddr, serverStop, err = serveInProcess()
			serverEchoes = true
		default:
			err = fmt.Errorf("%s=%q: want ceiling, fasthttp or inproc", envServer, mode)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "clientbench:", err)
			os.Exit(1)
		}
	})
	if serverAddr == "" {
		b.Fatal("no server")
	}
	return serverAddr
}

func newServer() *fasthttp.Server {
	return &fasthttp.Server{Handler: fastroutes.Handler(benchserver.ProfileBench)}
}

func serveInProcess() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := newServer()
	go srv.Serve(ln)
	return ln.Addr().String(), func() { srv.Shutdown() }, nil
}

// startCeiling builds bench/ceiling (the C epoll responder) with cc into a
// temporary directory and runs it with one thread.
func startCeiling() (string, func(), error) {
	dir, err := os.MkdirTemp("", "clientbench")
	if err != nil {
		return "", nil, err
	}
	bin := filepath.Join(dir, "ceiling")
	out, err := exec.Command("cc", "-O2", "-o", bin, filepath.Join("..", "ceiling", "ceiling.c"), "-lpthread").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("building the ceiling server (needs cc; or set %s=fasthttp): %v\n%s", envServer, err, out)
	}
	a, stop, err := startProcess(exec.Command(bin, "-addr", "127.0.0.1:0", "-threads", "1"), "listening on ")
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return a, func() { stop(); os.RemoveAll(dir) }, nil
}

// startChild runs the fasthttp server in a child process: this test
// binary again, with envServe set.
func startChild() (string, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envServe+"=1")
	return startProcess(cmd, "")
}

// startProcess starts a server process and returns the address it prints
// on its first line after prefix. The process is killed by stop, and by
// the kernel if the benchmark dies first (see setDeathSignal).
func startProcess(cmd *exec.Cmd, prefix string) (string, func(), error) {
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = os.Stderr
	setDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		cmd.Process.Kill()
		cmd.Wait()
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("%s: no address: %v", cmd.Path, err)
	}
	return strings.TrimPrefix(strings.TrimSpace(line), prefix), stop, nil
}

// serveChild is the fasthttp child process: it serves until killed.
func serveChild() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	if err := newServer().Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// header is one extra request header of GETHeaders.
type header struct{ name, value string }

var tenHeaders = func() []header {
	hs := []header{
		{"Accept", "text/plain,text/html;q=0.9,*/*;q=0.8"},
		{"Accept-Language", "en-US,en;q=0.5"},
		{"Cache-Control", "no-cache"},
		{"Authorization", "Bearer 0123456789abcdef0123456789abcdef"},
		{"X-Request-Id", "5f0c6f3e-0d1b-4c5a-9a43-2f1c6d7e8f90"},
		{"Cookie", "session=abcdef0123456789; theme=dark"},
	}
	for i := len(hs); i < 10; i++ {
		hs = append(hs, header{"X-Extra-" + strconv.Itoa(i), "value-" + strconv.Itoa(i)})
	}
	return hs
}()

var body1K = bytes.Repeat([]byte("0123456789abcdef"), 64)

// workload is what one request of a benchmark sends.
type workload struct {
	name    string
	method  string
	path    string
	headers []header
	body    []byte
	want    int  // response body length
	echo    bool // the response echoes the request body
}

var (
	getHello = workload{name: "GET", method: "GET", path: "/", want: len(benchserver.Hello)}
	getHdrs  = workload{name: "GETHeaders", method: "GET", path: "/", headers: tenHeaders, want: len(benchserver.Hello)}
	post1K   = workload{name: "POST1K", method: "POST", path: "/echo", body: body1K, want: len(body1K), echo: true}
)

// forServer adjusts w to the server: the ceiling answers every request
// with the same 13 bytes.
func (w workload) forServer() workload {
	if w.echo && !serverEchoes {
		w.want = len(benchserver.Hello)
	}
	return w
}

// doer runs requests of one workload from one goroutine.
type doer func() error

// clientImpl makes per-goroutine doers sharing one client.
type clientImpl struct {
	name string
	make func(addr string, w workload) func() doer
}

var clients = []clientImpl{
	{"riptide", riptideNative},
	{"riptide-pipelined", riptidePipelined},
	{"riptide-rt", riptideRoundTripper},
	{"fasthttp", fastHTTP},
	{"nethttp", netHTTP},
	{"raw", rawConn},
}

func riptideNative(addr string, w workload) func() doer {
	return riptideDoer(&client.Client{MaxConnsPerHost: maxConns}, addr, w)
}

// riptidePipelined is riptide's native client with HTTP/1.1 pipelining:
// up to 8 requests in flight on each of at most pipelinedConns connections.
func riptidePipelined(addr string, w workload) func() doer {
	return riptideDoer(&client.Client{MaxConnsPerHost: pipelinedConns, Pipeline: 8}, addr, w)
}

// pipelinedConns bounds riptide-pipelined's connections.
const pipelinedConns = 4

func riptideDoer(c *client.Client, addr string, w workload) func() doer {
	return func() doer {
		var req client.Request
		var resp client.Response
		req.SetURL("http://" + addr + w.path)
		req.SetMethod(w.method)
		for _, h := range w.headers {
			req.AddHeader(h.name, h.value)
		}
		if w.body != nil {
			req.SetBody(w.body)
		}
		ctx := context.Background()
		return func() error {
			if err := c.Do(ctx, &req, &resp); err != nil {
				return err
			}
			return check(resp.StatusCode(), len(resp.Body()), w.want)
		}
	}
}

func riptideRoundTripper(addr string, w workload) func() doer {
	return stdDoer(&client.Client{MaxConnsPerHost: maxConns, DisableCompression: true}, addr, w)
}

func netHTTP(addr string, w workload) func() doer {
	return stdDoer(&http.Transport{MaxConnsPerHost: maxConns, MaxIdleConnsPerHost: maxConns, DisableCompression: true}, addr, w)
}

func stdDoer(rt http.RoundTripper, addr string, w workload) func() doer {
	hc := &http.Client{Transport: rt}
	url := "http://" + addr + w.path
	return func() doer {
		buf := make([]byte, 4096)
		return func() error {
			var body io.Reader
			if w.body != nil {
				body = bytes.NewReader(w.body)
			}
			req, err := http.NewRequest(w.method, url, body)
			if err != nil {
				return err
			}
			for _, h := range w.headers {
				req.Header.Set(h.name, h.value)
			}
			resp, err := hc.Do(req)
			if err != nil {
				return err
			}
			n, err := io.ReadFull(resp.Body, buf[:w.want])
			resp.Body.Close()
			if err != nil {
				return err
			}
			return check(resp.StatusCode, n, w.want)
		}
	}
}

func fastHTTP(addr string, w workload) func() doer {
	c := &fasthttp.Client{MaxConnsPerHost: maxConns}
	url := "http://" + addr + w.path
	return func() doer {
		req := fasthttp.AcquireRequest()
		resp := fasthttp.AcquireResponse()
		req.SetRequestURI(url)
		req.Header.SetMethod(w.method)
		for _, h := range w.headers {
			req.Header.Set(h.name, h.value)
		}
		if w.body != nil {
			req.SetBody(w.body)
		}
		return func() error {
			if err := c.Do(req, resp); err != nil {
				return err
			}
			return check(resp.StatusCode(), len(resp.Body()), w.want)
		}
	}
}

// rawConn is not a client but a yardstick: each goroutine owns one
// connection, writes the canned request bytes and reads until the head's
// end and the body's known length have arrived, with no parsing, pooling,
// timeouts or error recovery. No Go client doing one write and one read
// per request can beat it on this machine, so a client's distance from it
// is that client's own cost.
func rawConn(addr string, w workload) func() doer {
	var head []byte
	head = append(head, w.method+" "+w.path+" HTTP/1.1\r\nHost: "+addr+"\r\n"...)
	for _, h := range w.headers {
		head = append(head, h.name+": "+h.value+"\r\n"...)
	}
	if w.body != nil {
		head = append(head, "Content-Length: "+strconv.Itoa(len(w.body))+"\r\n"...)
	}
	head = append(head, "\r\n"...)
	head = append(head, w.body...)
	return func() doer {
		var nc net.Conn
		buf := make([]byte, 64<<10)
		return func() error {
			if nc == nil {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					return err
				}
				nc = c
				rawConns.Lock()
				rawConns.list = append(rawConns.list, c)
				rawConns.Unlock()
			}
			if _, err := nc.Write(head); err != nil {
				return err
			}
			n := 0
			for {
				m, err := nc.Read(buf[n:])
				if err != nil {
					return err
				}
				n += m
				if i := bytes.Index(buf[:n], crlfcrlf); i >= 0 && n-(i+4) >= w.want {
					return nil
				}
			}
		}
	}
}

var crlfcrlf = []byte("\r\n\r\n")

// rawConns are rawConn's connections, closed after each sub-benchmark.
var rawConns struct {
	sync.Mutex
	list []net.Conn
}

func closeRawConns() {
	rawConns.Lock()
	defer rawConns.Unlock()
	for _, c := range rawConns.list {
		c.Close()
	}
	rawConns.list = nil
}

type badResponse struct{ status, n, want int }

func (e *badResponse) Error() string {
	return "status " + strconv.Itoa(e.status) + ", body " + strconv.Itoa(e.n) + " bytes, want 200 and " + strconv.Itoa(e.want)
}

func check(status, n, want int) error {
	if status != 200 || n != want {
		return &badResponse{status, n, want}
	}
	return nil
}

func runSequential(b *testing.B, w workload) {
	defer closeRawConns()
	for _, ci := range clients {
		b.Run("client="+ci.name, func(b *testing.B) {
			do := ci.make(addr(b), w.forServer())()
			if err := do(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := do(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func runConcurrent(b *testing.B, w workload) {
	defer closeRawConns()
	for _, ci := range clients {
		b.Run("client="+ci.name, func(b *testing.B) {
			newDoer := ci.make(addr(b), w.forServer())
			if err := newDoer()(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetParallelism(parallelism)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				do := newDoer()
				for pb.Next() {
					if err := do(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkSequentialGET: one goroutine, keep-alive GET / (13-byte body).
func BenchmarkSequentialGET(b *testing.B) { runSequential(b, getHello) }

// BenchmarkConcurrentGET: 16 goroutines per GOMAXPROCS, keep-alive GET /.
func BenchmarkConcurrentGET(b *testing.B) { runConcurrent(b, getHello) }

// BenchmarkGETHeaders: one goroutine, GET / with ten request headers.
func BenchmarkGETHeaders(b *testing.B) { runSequential(b, getHdrs) }

// BenchmarkPOST1K: one goroutine, POST /echo with a 1 KiB body.
func BenchmarkPOST1K(b *testing.B) { runSequential(b, post1K) }
