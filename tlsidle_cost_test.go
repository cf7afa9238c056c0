package riptide_test

import (
	"bufio"
	"cmp"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/israce"
	"github.com/riptide-http/riptide/internal/memprof"
)

// tlsIdleCost is what the server holds for its idle HTTP/1.1-over-TLS
// connections, per connection: live heap allocated on the server's side
// (every allocation whose stack has a frame of the riptide package or its
// internal packages, from a heap profile at rate 1), split into crypto/tls
// and the rest, the largest sites, and the growth of goroutine stacks and
// goroutines (the client keeps none per connection).
type tlsIdleCost struct {
	heap, tlsHeap, stack, goroutines float64
	sites                            []string
	// alloc and tlsAlloc: bytes allocated on the server's side (live and
	// garbage) per connection while the connections opened, and the part
	// inside crypto/tls; allocSites: riptide's own sites of them.
	alloc, tlsAlloc float64
	allocSites      []string
}

// measureTLSIdle opens n TLS connections to srv with ALPN proto
// ("http/1.1" or "h2"), one GET / each, leaves them idle and measures what
// the server holds for them.
func measureTLSIdle(t *testing.T, srv *riptide.Server, n int, proto string) tlsIdleCost {
	t.Helper()
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	addr := riptide.ServeTest(t, srv, riptide.TestServeOptions{TLS: true}).Addr
	cfg := h2TestClientTLS(t, proto)
	// One connection first, so that pools and workers exist in both
	// snapshots.
	warm := dialTLSGet(t, addr, cfg)
	defer warm.Close()
	settle := func() {
		// As the bench harness's idle workloads: long enough for the
		// event loop's spare workers to end (evloop.WorkerIdle).
		time.Sleep(3 * time.Second)
		for range 5 {
			// sync.Pool items go in two cycles, the profile lags up to
			// two more.
			runtime.GC()
		}
	}
	settle()
	before := serverHeap()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	g0 := runtime.NumGoroutine()

	conns := make([]net.Conn, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range conns {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			conns[i] = dialTLSGet(t, addr, cfg)
		})
	}
	wg.Wait()
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	settle()
	if srv.TLSEngine == riptide.EngineEventLoop {
		// After the burst, pooled goroutines that served the connections
		// as they opened (HTTP/2's writers, the engine's workers) end on
		// their idle timers: what is left is what the idle connections
		// keep.
		for deadline := time.Now().Add(30 * time.Second); runtime.NumGoroutine()-g0 > n/100 && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
		}
		settle()
	}
	after := serverHeap()
	runtime.ReadMemStats(&ms1)
	g1 := runtime.NumGoroutine()
	for _, c := range conns {
		if c == nil {
			t.FailNow() // dialTLSGet reported it
		}
	}
	k := float64(n)
	cost := tlsIdleCost{
		heap:       float64(after.live-before.live) / k,
		tlsHeap:    float64(after.liveTLS-before.liveTLS) / k,
		alloc:      float64(after.alloc-before.alloc) / k,
		tlsAlloc:   float64(after.allocTLS-before.allocTLS) / k,
		stack:      float64(int64(ms1.StackInuse)-int64(ms0.StackInuse)) / k,
		goroutines: float64(g1-g0) / k,
		// The sites' growth: what the idle connections added at each, not
		// what the pools and workers held before them.
		sites: grownSites(before.liveSites, after.liveSites, k),
	}
	for name := range after.allocSites {
		if strings.HasPrefix(name, "crypto/tls.") {
			delete(after.allocSites, name)
		}
	}
	cost.allocSites = grownSites(before.allocSites, after.allocSites, k)
	return cost
}

// dialTLSGet dials addr over TLS with cfg, makes one GET / (HTTP/1.1,
// or an HTTP/2 stream when ALPN chose h2: the answer read to its body, the
// server's SETTINGS acknowledged) and returns the connection, left open.
func dialTLSGet(t *testing.T, addr string, cfg *tls.Config) net.Conn {
	c, err := tls.Dial("tcp", addr, cfg)
	if err == nil && c.ConnectionState().NegotiatedProtocol != cfg.NextProtos[0] {
		err = fmt.Errorf("ALPN chose %q, want %q", c.ConnectionState().NegotiatedProtocol, cfg.NextProtos[0])
	}
	if err != nil {
		t.Error(err)
		return nil
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if cfg.NextProtos[0] == "h2" {
		_, err = c.Write(h2GetRequest("https"))
		buf := make([]byte, 4096)
		for got := 0; err == nil && !strings.Contains(string(buf[:got]), h2HelloBody); {
			var k int
			k, err = c.Read(buf[got:])
			got += k
		}
	} else {
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
		var res *http.Response
		res, err = http.ReadResponse(bufio.NewReaderSize(c, 512), nil)
		if err == nil {
			_, err = io.Copy(io.Discard, res.Body)
		}
	}
	if err != nil {
		c.Close()
		t.Error(err)
		return nil
	}
	c.SetDeadline(time.Time{})
	return c
}

type heapSite struct {
	name  string
	bytes int64
}

// heapSnap is the server's side of the heap profile: live bytes and bytes
// allocated since the start (the garbage included), each in total and
// inside crypto/tls, and per site (the innermost crypto/tls frame, else
// the innermost riptide one).
type heapSnap struct {
	live, liveTLS, alloc, allocTLS int64
	liveSites, allocSites          map[string]int64
}

// serverHeap reads the server's side of the heap profile: every record
// whose stack has a frame of the riptide package or its internal packages.
func serverHeap() heapSnap {
	recs := memprof.Records()
	h := heapSnap{liveSites: map[string]int64{}, allocSites: map[string]int64{}}
	for i := range recs {
		r := &recs[i]
		frames := runtime.CallersFrames(r.Stack())
		server, tlsFrame, site := false, "", ""
		for {
			f, more := frames.Next()
			fn := f.Function
			switch {
			case strings.HasPrefix(fn, "github.com/riptide-http/riptide.") ||
				strings.HasPrefix(fn, "github.com/riptide-http/riptide/internal/"):
				server = true
				if site == "" {
					site = fn + ":" + strconv.Itoa(f.Line)
				}
			case strings.HasPrefix(fn, "crypto/tls."):
				if tlsFrame == "" {
					tlsFrame = fn + ":" + strconv.Itoa(f.Line)
				}
			}
			if !more {
				break
			}
		}
		if !server {
			continue
		}
		live := r.AllocBytes - r.FreeBytes
		h.live += live
		h.alloc += r.AllocBytes
		if tlsFrame != "" {
			h.liveTLS += live
			h.allocTLS += r.AllocBytes
			site = tlsFrame
		}
		h.liveSites[site] += live
		h.allocSites[site] += r.AllocBytes
	}
	return h
}

// grownSites lists the sites whose bytes grew from before to after, per
// connection (k of them), largest first.
func grownSites(before, after map[string]int64, k float64) []string {
	var sites []heapSite
	for name, b := range after {
		if g := b - before[name]; g > 0 {
			sites = append(sites, heapSite{name, g})
		}
	}
	slices.SortFunc(sites, func(a, b heapSite) int { return cmp.Compare(b.bytes, a.bytes) })
	var out []string
	for _, s := range sites {
		out = append(out, fmt.Sprintf("%7.0f B  %s", float64(s.bytes)/k, s.name))
	}
	return out
}

// TestTLSIdleCost measures what an idle HTTP/1.1-over-TLS keep-alive
// connection holds on the server (RIPTIDE_TLSIDLE_N connections, 300 by
// default) on each engine (Server.TLSEngine), logs the split (server heap,
// crypto/tls's part and the rest; goroutine stacks; goroutines; the
// largest heap sites) and bounds heap and goroutines per connection: on
// the event loop a parked TLS connection keeps crypto/tls's state only.
func TestTLSIdleCost(t *testing.T) {
	tlsIdleEngines(t, "http/1.1", []riptide.Engine{riptide.EngineGoroutine, riptide.EngineEventLoop}, func(t *testing.T, e riptide.Engine, c tlsIdleCost) {
		// Bounds: what each engine holds today (measured 13.4 KB of
		// heap and a goroutine with an 8 KiB stack on the goroutine
		// engine, 17.2 KB before its read buffer was lent too; 7.0 KB
		// of heap, no goroutine, on the event loop), with a margin for
		// crypto/tls versions.
		maxHeap, maxG := 14_500.0, 1.02
		if e == riptide.EngineEventLoop {
			maxHeap, maxG = 8_500, 0.02
		}
		if c.heap > maxHeap || c.goroutines > maxG {
			t.Errorf("%.0f B of server heap and %.2f goroutines per idle TLS connection, want at most %.0f B and %.2f", c.heap, c.goroutines, maxHeap, maxG)
		}
	})
}

// TestH2TLSIdleCost is TestTLSIdleCost for HTTP/2 over TLS (ALPN h2, one
// GET / stream per connection): on the event loop an idle HTTP/2
// connection parks (h2tlspark_linux.go), keeping crypto/tls's state and
// the h2.Conn (settings, windows, HPACK tables) and no goroutine. The
// goroutine engine is measured beside it (after it: its connections leave
// pooled goroutines behind for a while, which would lower the event
// loop's baseline), not bounded.
func TestH2TLSIdleCost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("parking needs the event loop (Linux)")
	}
	tlsIdleEngines(t, "h2", []riptide.Engine{riptide.EngineEventLoop, riptide.EngineGoroutine}, func(t *testing.T, e riptide.Engine, c tlsIdleCost) {
		if e != riptide.EngineEventLoop {
			return
		}
		// Issue 36 asks at most 16 KiB of RSS per idle HTTP/2 connection
		// over TLS; heap and stacks must leave room for the collector's
		// headroom (RSS is some 1.8 to 2 times the live heap after 10,000
		// handshakes, bench/cmd/tlsfloor): at most 10.5 KB, no
		// goroutine. Measured 8.3 to 8.9 KB (9.9 KB before the stream
		// table, the writer's channel and the TLS state left the parked
		// connection and the HPACK encoder's table lost x/net's maps).
		if sum := c.heap + c.stack; sum > 9_500 || c.goroutines > 0.02 {
			t.Errorf("%.0f B of server heap and stacks and %.2f goroutines per idle HTTP/2-over-TLS connection, want at most 9500 B and 0.02", sum, c.goroutines)
		}
	})
}

// tlsIdleEngines measures, for each engine in turn, what an idle TLS
// connection with ALPN proto holds (RIPTIDE_TLSIDLE_N connections, 300 by
// default; measureTLSIdle), logs it and calls check.
func tlsIdleEngines(t *testing.T, proto string, engines []riptide.Engine, check func(t *testing.T, e riptide.Engine, c tlsIdleCost)) {
	if israce.Enabled || testing.Short() {
		t.Skip("a measurement: not under -race or -short")
	}
	n := 300
	if v, err := strconv.Atoi(os.Getenv("RIPTIDE_TLSIDLE_N")); err == nil && v > 0 {
		n = v
	}
	body, what := "hello", "TLS"
	if proto == "h2" {
		body, what = h2HelloBody, "HTTP/2-over-TLS"
	}
	for _, e := range engines {
		t.Run(e.String(), func(t *testing.T) {
			srv := &riptide.Server{TLSEngine: e, Handler: riptide.HandlerFunc(func(c *riptide.Ctx) { c.WriteString(body) }),
				TLSConfig: h2TestServerTLS(t), IdleTimeout: time.Minute}
			c := measureTLSIdle(t, srv, n, proto)
			t.Logf("%d idle %s connections, per connection: server heap %.0f B (crypto/tls %.0f B, rest %.0f B), goroutine stacks %.0f B, %.2f goroutines",
				n, what, c.heap, c.tlsHeap, c.heap-c.tlsHeap, c.stack, c.goroutines)
			for _, s := range c.sites[:min(len(c.sites), 15)] {
				t.Log(s)
			}
			t.Logf("allocated while they opened, per connection: %.0f B (crypto/tls %.0f B, rest %.0f B); riptide's own sites:", c.alloc, c.tlsAlloc, c.alloc-c.tlsAlloc)
			for _, s := range c.allocSites[:min(len(c.allocSites), 10)] {
				t.Log(s)
			}
			check(t, e, c)
		})
	}
}
