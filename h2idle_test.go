package riptide_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/h2test"
	"github.com/riptide-http/riptide/internal/israce"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// TestH2IdleMemory holds idle HTTP/2 connections (h2c, one request each,
// then nothing) and asserts the Go heap each one keeps after a GC, for both
// doors: an idle connection must not keep the HTTP/1.1 buffers of the
// engine conn it started as (37 KiB by default), nor a 16 KiB header
// buffer it never needed. Measured here: about 29 KiB (mostly the 16 KiB
// frame reader), against about 82 KiB before; net/http's HTTP/2 keeps about
// 18 KiB of heap but twice the goroutine stack. The RSS per idle
// connection, in a separate process, is the harness's h2idle workload.
func TestH2IdleMemory(t *testing.T) {
	h2IdleRounds(t, 500, func(t *testing.T, door string, cost h2IdleCost) {
		if cost.heap > 48 {
			t.Errorf("%.1f KiB of live heap per idle HTTP/2 connection, want at most 48", cost.heap)
		}
	})
}

// TestH2ParkedIdleCost holds 1,000 idle h2c connections on the event loop
// (one request each, then nothing) and bounds what each costs, for both
// doors: live heap and goroutine stacks together at most
// h2ParkedIdleLimit, and no goroutine. A parked connection keeps only its
// state (settings, windows, HPACK tables): no reading or writing
// goroutine, no read buffer, no output buffer (internal/h2's park.go).
// Before parking, each kept its reader (the event loop's worker) and its
// writer goroutine, 2.0 goroutines and some 8.8 KiB of heap besides their
// stacks.
func TestH2ParkedIdleCost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("parking needs the event loop (Linux)")
	}
	h2IdleRounds(t, 1000, func(t *testing.T, door string, cost h2IdleCost) {
		if sum := cost.heap + cost.stack; sum > h2ParkedIdleLimit {
			t.Errorf("%.2f KiB (heap %.2f, stacks %.2f) per idle HTTP/2 connection, want at most %.1f", sum, cost.heap, cost.stack, h2ParkedIdleLimit)
		}
		if cost.goroutines > 0.01 {
			t.Errorf("%.2f goroutines per idle HTTP/2 connection, want none", cost.goroutines)
		}
	})
}

// h2ParkedIdleLimit is the most KiB of live heap and stacks an idle,
// parked h2c connection may keep (issue 36: h2o keeps 2.2 KiB of RSS).
// Measured 1.5 to 1.9 KiB (2.97 before the stream table and the writer's
// channel went back with the buffers and the HPACK encoder's table lost
// x/net's two maps; 4 was the bound then).
const h2ParkedIdleLimit = 2.5

// h2IdleCost is what one idle connection keeps: KiB of live heap and of
// goroutine stacks, and goroutines.
type h2IdleCost struct{ heap, stack, goroutines float64 }

// h2IdleRounds opens conns idle h2c connections (one request each) to a
// server of each door and calls check with what each keeps.
func h2IdleRounds(t *testing.T, conns int, check func(t *testing.T, door string, cost h2IdleCost)) {
	if testing.Short() || israce.Enabled {
		t.Skip("heap figures need a build without -race")
	}
	if lim := raiseNoFile(t, uint64(2*conns+200)); lim < uint64(2*conns+100) {
		t.Skipf("RLIMIT_NOFILE %d is too low for %d connections", lim, conns)
	}
	req := h2GetRequest("http")

	// prevGone is closed once the previous subtest's server has been
	// collected: until then its pooled conns (37 KiB each) may still be
	// freed, which would show as negative heap in the next baseline.
	var prevGone chan struct{}
	for _, door := range []struct {
		name string
		h    riptide.Handler
	}{
		{"native", riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString(h2HelloBody) })},
		{"compat", riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, h2HelloBody) }))},
	} {
		t.Run(door.name, func(t *testing.T) {
			if prevGone != nil {
				waitCollected(t, prevGone)
			}
			srv := &riptide.Server{Handler: door.h, HTTP2: &riptide.HTTP2Config{H2C: true}}
			gone := make(chan struct{})
			runtime.AddCleanup(srv, func(c chan struct{}) { close(c) }, gone)
			prevGone = gone
			ts := riptide.ServeTest(t, srv, riptide.TestServeOptions{})
			// allClosed waits until the server has closed every connection
			// it accepted: their memory is then garbage.
			allClosed := func() {
				deadline := time.Now().Add(20 * time.Second)
				for {
					var st riptide.Stats
					srv.Stats(&st)
					if st.Closed >= st.Accepted {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("%d connections accepted, %d closed", st.Accepted, st.Closed)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			open := func(n int) []net.Conn {
				cs := make([]net.Conn, 0, n)
				buf := make([]byte, 4096)
				for range n {
					c, err := net.Dial("tcp", ts.Addr)
					if err != nil {
						t.Fatal(err)
					}
					cs = append(cs, c)
					_ = c.SetDeadline(time.Now().Add(30 * time.Second))
					if _, err := c.Write(req); err != nil {
						t.Fatal(err)
					}
					for got := 0; !bytes.Contains(buf[:got], []byte(h2HelloBody)); {
						k, err := c.Read(buf[got:])
						if err != nil {
							t.Fatal(err)
						}
						got += k
					}
				}
				return cs
			}
			// Warm up pools and workers, so that the measurement counts
			// only what each connection keeps.
			for _, c := range open(50) {
				c.Close()
			}
			allClosed()
			heap0, stack0, g0 := settledCost()
			cs := open(conns)
			time.Sleep(500 * time.Millisecond) // let the first streams' handlers finish
			// The engine's workers that served the connections as they
			// opened (as many as were quiet but not yet parked at once)
			// are trimmed once idle (evloop.WorkerIdle): what is left
			// is what the idle connections keep.
			for deadline := time.Now().Add(20 * time.Second); runtime.NumGoroutine()-g0 > conns/100 && time.Now().Before(deadline); {
				time.Sleep(50 * time.Millisecond)
			}
			heap1, stack1, g1 := settledCost()
			cost := h2IdleCost{
				heap:       float64(heap1-heap0) / float64(conns) / 1024,
				stack:      float64(stack1-stack0) / float64(conns) / 1024,
				goroutines: float64(g1-g0) / float64(conns),
			}
			for _, c := range cs {
				c.Close()
			}
			allClosed() // the next subtest's baseline must not hold these
			t.Logf("%s: %.2f KiB of live heap, %.2f KiB of stacks, %.2f goroutines per idle HTTP/2 connection (%d connections)",
				door.name, cost.heap, cost.stack, cost.goroutines, conns)
			if cost.heap <= 0 {
				// An idle connection keeps something: memory freed
				// after the baseline was not this door's.
				t.Errorf("%.1f KiB of live heap per idle HTTP/2 connection: the baseline held memory that was freed later", cost.heap)
			}
			check(t, door.name, cost)
		})
	}
}

// h2GetRequest is what a client opening an HTTP/2 connection sends for one
// GET / (:scheme scheme): the preface, an empty SETTINGS, the request's
// HEADERS on stream 1 and the acknowledgement of the server's SETTINGS.
func h2GetRequest(scheme string) []byte {
	var req bytes.Buffer
	req.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&req, nil)
	fr.WriteSettings()
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", scheme}, {":authority", "localhost"}, {":path", "/"}} {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndStream: true, EndHeaders: true})
	fr.WriteSettingsAck()
	return req.Bytes()
}

// settledCost is settledHeap with the goroutine stacks in use and the
// number of goroutines.
func settledCost() (heap, stack int64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc), int64(ms.StackInuse), runtime.NumGoroutine()
}

// waitCollected runs GCs until gone is closed (by a runtime.AddCleanup of
// an object now unreachable), failing the test after 20 s.
func waitCollected(t *testing.T, gone chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		runtime.GC()
		select {
		case <-gone:
			return
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the previous subtest's server was not collected 20s after its test ended")
		}
	}
}

// settledHeap is liveHeap after a first GC has moved sync.Pool contents
// (pooled conns of closed connections) to the victim cache, so that they
// are not counted.
func settledHeap() int64 {
	runtime.GC()
	return h2test.LiveHeap()
}
