package riptide

import (
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"unsafe"
)

// plaintextHandlers returns the plaintext handler of the door benchmarks
// (BenchmarkCompatVsNative and its HTTP/2 forms) for each door: native,
// and net/http's (for FromHTTP).
func plaintextHandlers() (Handler, http.Handler) {
	hello := []byte("Hello, World!")
	native := HandlerFunc(func(c *Ctx) {
		c.SetHeader("Content-Type", "text/plain; charset=utf-8")
		c.Write(hello)
	})
	hh := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h["Content-Type"] = []string{"text/plain; charset=utf-8"}
		h["Content-Length"] = []string{strconv.Itoa(len(hello))}
		w.Write(hello)
	})
	return native, hh
}

// floorReq is what floorDoor allocates per request in one block, as the
// harness's riptide-floor server (bench/internal/floorroutes) does.
type floorReq struct {
	r http.Request
	u url.URL
	w http.Header
}

// floorKept makes every floorReq escape, as a kept request would.
var floorKept atomic.Pointer[floorReq]

// floorDoor is next behind the work net/http's contract makes any compat
// door do per request (a test-sized copy of bench/internal/floorroutes,
// which this module cannot import; its GETs have no body): a Request+URL
// block, one copy of the head's strings, the values array,
// the request Header map, and the response Header map filled as the
// plaintext handler fills it and read back. It is the lower bound of the
// compat door's cost, beside it in BenchmarkCompatVsNativeH2Burst.
func floorDoor(next Handler) Handler {
	return HandlerFunc(func(c *Ctx) {
		q := c.Request()
		n := len(q.Method) + len(q.Target) + len(q.Host)
		for _, f := range q.Headers {
			n += len(f.Name) + len(f.Value)
		}
		buf := make([]byte, 0, n)
		str := func(b []byte) string {
			if len(b) == 0 {
				return ""
			}
			off := len(buf)
			buf = append(buf, b...)
			return unsafe.String(&buf[off], len(b))
		}
		rq := new(floorReq)
		r := &rq.r
		r.Method, r.RequestURI, r.Host = str(q.Method), str(q.Target), str(q.Host)
		rq.u.Path = r.RequestURI
		r.URL, r.Proto, r.ProtoMajor = &rq.u, "HTTP/2.0", 2
		vals := make([]string, len(q.Headers))
		h := make(http.Header, len(q.Headers))
		for i, f := range q.Headers {
			vals[i] = str(f.Value)
			h[str(f.Name)] = vals[i : i+1 : i+1]
		}
		r.Header, r.Body = h, http.NoBody
		w := make(http.Header)
		w["Content-Type"] = []string{"text/plain; charset=utf-8"}
		w["Content-Length"] = []string{strconv.Itoa(13)}
		for k, v := range w {
			n += len(k) + len(v[0])
		}
		rq.w = w
		next.ServeCtx(c)
		floorKept.Store(rq)
	})
}

// BenchmarkCompatVsNativeH2Burst is BenchmarkCompatVsNativeH2 in bursts,
// as h2load -m10 sends: each op writes 10 HEADERS frames (new streams) on
// one h2c connection and reads their 10 responses, so that the hand-off
// of a burst to the workers, the connection's writes and its flushes are
// shared by 10 requests as in the harness. The floor door (floorDoor) is
// the native one behind what net/http's contract makes any compat door
// build, its lower bound. All doors run on pooled
// workers (the native door is not inline by default). ns/req and
// cpu-ns/req are per request (the process's CPU, client included):
//
//	go test -run '^$' -bench CompatVsNativeH2Burst -benchmem -count 6 .
func BenchmarkCompatVsNativeH2Burst(b *testing.B) {
	native, hh := plaintextHandlers()
	for _, door := range []struct {
		name string
		h    Handler
	}{{"native", native}, {"compat", FromHTTP(hh)}, {"floor", floorDoor(native)}} {
		b.Run(door.name, func(b *testing.B) {
			srv := &Server{Handler: door.h, Logger: slog.New(slog.DiscardHandler), HTTP2: &HTTP2Config{H2C: true}}
			bc := newH2BurstClient(b, serveTest(b, srv, testServeOptions{}).Addr, scaleH2Burst)
			for range 10 {
				bc.roundTrip()
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for b.Loop() {
				bc.roundTrip()
			}
			scaleReport(b, scaleH2Burst*b.N, cpu0)
		})
	}
}
