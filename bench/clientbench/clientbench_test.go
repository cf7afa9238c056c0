package clientbench

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
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

var serverAddr string

func TestMain(m *testing.M) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &fasthttp.Server{Handler: fastroutes.Handler(benchserver.ProfileBench)}
	go srv.Serve(ln)
	serverAddr = ln.Addr().String()
	code := m.Run()
	srv.Shutdown()
	if code != 0 {
		panic("tests failed")
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
	want    int // response body length
}

var (
	getHello = workload{name: "GET", method: "GET", path: "/", want: len(benchserver.Hello)}
	getHdrs  = workload{name: "GETHeaders", method: "GET", path: "/", headers: tenHeaders, want: len(benchserver.Hello)}
	post1K   = workload{name: "POST1K", method: "POST", path: "/echo", body: body1K, want: len(body1K)}
)

// doer runs requests of one workload from one goroutine.
type doer func() error

// clientImpl makes per-goroutine doers sharing one client.
type clientImpl struct {
	name string
	make func(w workload) func() doer
}

var clients = []clientImpl{
	{"riptide", riptideNative},
	{"riptide-pipelined", riptidePipelined},
	{"riptide-rt", riptideRoundTripper},
	{"fasthttp", fastHTTP},
	{"nethttp", netHTTP},
}

func riptideNative(w workload) func() doer {
	return riptideDoer(&client.Client{MaxConnsPerHost: maxConns}, w)
}

// riptidePipelined is riptide's native client with HTTP/1.1 pipelining:
// up to 8 requests in flight on each of at most pipelinedConns connections.
func riptidePipelined(w workload) func() doer {
	return riptideDoer(&client.Client{MaxConnsPerHost: pipelinedConns, Pipeline: 8}, w)
}

// pipelinedConns bounds riptide-pipelined's connections.
const pipelinedConns = 4

func riptideDoer(c *client.Client, w workload) func() doer {
	return func() doer {
		var req client.Request
		var resp client.Response
		req.SetURL("http://" + serverAddr + w.path)
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

func riptideRoundTripper(w workload) func() doer {
	return stdDoer(&client.Client{MaxConnsPerHost: maxConns, DisableCompression: true}, w)
}

func netHTTP(w workload) func() doer {
	return stdDoer(&http.Transport{MaxConnsPerHost: maxConns, MaxIdleConnsPerHost: maxConns, DisableCompression: true}, w)
}

func stdDoer(rt http.RoundTripper, w workload) func() doer {
	hc := &http.Client{Transport: rt}
	url := "http://" + serverAddr + w.path
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

func fastHTTP(w workload) func() doer {
	c := &fasthttp.Client{MaxConnsPerHost: maxConns}
	url := "http://" + serverAddr + w.path
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
	for _, ci := range clients {
		b.Run("client="+ci.name, func(b *testing.B) {
			do := ci.make(w)()
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
	for _, ci := range clients {
		b.Run("client="+ci.name, func(b *testing.B) {
			newDoer := ci.make(w)
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
