package http3

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	qhttp3 "github.com/quic-go/quic-go/http3"
	"github.com/riptide-http/riptide"
)

// heapChildEnv makes the test binary a server process for
// TestIdleConnHeap: it records every allocation's stack (MemProfileRate 1,
// set before any allocation of the tests).
const heapChildEnv = "RIPTIDE_H3_IDLE_HEAP_CHILD"

func init() {
	if os.Getenv(heapChildEnv) != "" {
		runtime.MemProfileRate = 1
	}
}

// layerHeap is the live heap, in bytes, allocated with a given layer's
// code on the stack.
type layerHeap struct {
	// riptide: a function of the riptide module on the stack (its HTTP/3
	// engine and Serve, and what they had quic-go allocate: the control
	// stream they open, the streams they accept).
	riptide int64
	// quicgo: a function of quic-go's http3 package on the stack (its
	// server's connection state, and what it had quic-go allocate).
	quicgo int64
	// connCtx: allocated by quic-go's handleInitialImpl itself or through
	// the context package only: the connection's contexts, which quic-go
	// makes larger (a second cancelable context, a closure) when
	// ConnContext is set, as Serve sets it.
	connCtx int64
}

// TestIdleConnHeap compares the live heap an idle HTTP/3 connection holds
// in riptide's layer (Serve and its engine) with quic-go's http3.Server's,
// exactly: both servers run in a child process that records the stack of
// every allocation (runtime.MemProfileRate 1) and sums the live bytes by
// the layer on the stack; quic-go's HTTP/3 client runs here, in the
// parent, so none of its allocations is counted. What Serve's ConnContext
// adds to quic-go's own connection contexts is charged to riptide. A round
// opens 50 connections to each server in turn, one GET each, and measures
// after the lingers (idleSettle); a first round (goroutine descriptors,
// which the runtime never frees, and pools filled once) is discarded.
func TestIdleConnHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 50 connections per round in a child process")
	}
	if os.Getenv(heapChildEnv) != "" {
		t.Skip("the child process")
	}
	const n, rounds = 50, 3
	in, outp := startChild(t, "TestIdleHeapChild", heapChildEnv+"=1")
	out := bufio.NewScanner(outp)
	// read returns the child's next reply, skipping what the testing
	// package prints.
	read := func() string {
		for out.Scan() {
			if l, ok := strings.CutPrefix(out.Text(), "heapchild "); ok {
				return l
			}
		}
		t.Fatalf("child process: %v", out.Err())
		return ""
	}
	var saddr, qaddr string
	if _, err := fmt.Sscan(read(), &saddr, &qaddr); err != nil {
		t.Fatal(err)
	}
	// phase opens n connections to addr, and returns the live heap they
	// added to the child process, per connection, by layer.
	phase := func(addr string) (per [3]float64) {
		fmt.Fprintln(in, "base")
		read()
		closers := make([]func(), n)
		for i := range closers {
			closers[i] = getH3Conn(t, addr)
		}
		time.Sleep(idleSettle)
		fmt.Fprintln(in, "measure")
		var h layerHeap
		if _, err := fmt.Sscan(read(), &h.riptide, &h.quicgo, &h.connCtx); err != nil {
			t.Fatal(err)
		}
		for _, c := range closers {
			c()
		}
		return [3]float64{float64(h.riptide) / n, float64(h.quicgo) / n, float64(h.connCtx) / n}
	}
	phase(qaddr)
	phase(saddr)
	var rip, qgo []float64
	for r := range rounds {
		s, q := phase(saddr), phase(qaddr)
		// Serve's layer: its own code's allocations and what its
		// ConnContext adds to quic-go's connection contexts.
		rip = append(rip, s[0]+s[2]-q[2])
		qgo = append(qgo, q[1])
		t.Logf("round %d, live heap per idle connection, server side: riptide Serve %.0f B (its code %.0f, ConnContext's extra in quic-go's contexts %.0f); quic-go http3.Server %.0f B",
			r+1, rip[r], s[0], s[2]-q[2], qgo[r])
		// The other server's layer is idle meanwhile: it may only give
		// back a little of what it cached (a pooled buffer freed).
		if math.Abs(s[1]) > otherLayerSlack || math.Abs(q[0]) > otherLayerSlack {
			t.Errorf("round %d: %+.0f B per connection of quic-go's http3 package while Serve was measured, %+.0f B of riptide's while quic-go's server was: want at most %d either way", r+1, s[1], q[0], otherLayerSlack)
		}
	}
	// The figures are exact but for a few bytes per connection of
	// runtime state (map growth, pools): the largest of riptide's rounds
	// against the smallest of quic-go's.
	if mr, mq := slices.Max(rip), slices.Min(qgo); mr >= mq {
		t.Errorf("riptide's layer holds %.0f B of live heap per idle connection (largest of %d rounds), quic-go's http3.Server %.0f B (smallest): want less", mr, rounds, mq)
	}
}

// startHelloServers starts riptide's Serve (native door) and quic-go's
// http3.Server, each answering every request with hello, and returns their
// addresses.
func startHelloServers(t *testing.T) (serve, quicgo string) {
	t.Helper()
	qln, err := quic.ListenAddr("127.0.0.1:0", testTLS(t), &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	qs := &qhttp3.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(hello) })}
	go qs.ServeListener(qln)
	t.Cleanup(func() { qs.Close() })
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) { x.Write(hello) })}
	serve, _ = startServe(t, srv, nil)
	return serve, qln.Addr().String()
}

// startChild runs this test binary's test named test in a child process
// with env added to its environment, and returns its stdin and stdout. It
// ends when the test does: its stdin is closed and it is waited for.
func startChild(t *testing.T, test string, env ...string) (io.Writer, io.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	return in, out
}

// otherLayerSlack bounds, in bytes per connection, how much the live heap
// of the layer not being measured may move during a phase (one run saw -1).
const otherLayerSlack = 16

// getH3Conn makes one GET to addr with quic-go's HTTP/3 client, on a
// connection of its own, and returns what closes it.
func getH3Conn(t *testing.T, addr string) (close func()) {
	t.Helper()
	tr := &qhttp3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h3"}}}
	resp, err := (&http.Client{Transport: tr}).Get("https://" + addr + "/hello")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return func() { tr.Close() }
}

// TestIdleHeapChild is TestIdleConnHeap's server process: it serves
// riptide's Serve and quic-go's http3.Server and answers the parent's
// commands on stdin, one line each: "base" records the live heap by layer,
// "measure" writes what was added since.
func TestIdleHeapChild(t *testing.T) {
	if os.Getenv(heapChildEnv) == "" {
		t.Skip("TestIdleConnHeap's child process")
	}
	saddr, qaddr := startHelloServers(t)
	// The goroutines of the servers alone: each phase starts once the
	// previous phase's connections are gone.
	time.Sleep(200 * time.Millisecond)
	g0 := runtime.NumGoroutine()
	fmt.Printf("heapchild %s %s\n", saddr, qaddr)
	var base layerHeap
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "base":
			for i := 0; runtime.NumGoroutine() > g0 && i < 1000; i++ {
				time.Sleep(10 * time.Millisecond)
			}
			base = liveHeapByLayer()
			fmt.Println("heapchild ok")
		case "measure":
			h := liveHeapByLayer()
			fmt.Printf("heapchild %d %d %d\n", h.riptide-base.riptide, h.quicgo-base.quicgo, h.connCtx-base.connCtx)
		}
	}
}

// liveHeapByLayer returns the live heap by layer, from the memory profile
// once collections have made it current.
func liveHeapByLayer() layerHeap {
	for range 3 {
		runtime.GC() // the profile is up to two cycles old
	}
	var recs []runtime.MemProfileRecord
	for {
		k, _ := runtime.MemProfile(nil, false)
		recs = make([]runtime.MemProfileRecord, k+64)
		if k, ok := runtime.MemProfile(recs, false); ok {
			recs = recs[:k]
			break
		}
	}
	var h layerHeap
	for i := range recs {
		if b := recs[i].InUseBytes(); b != 0 {
			switch layerOf(recs[i].Stack()) {
			case "riptide":
				h.riptide += b
			case "quicgo":
				h.quicgo += b
			case "connctx":
				h.connCtx += b
			}
		}
	}
	return h
}

// layerOf names the layer an allocation's stack belongs to ("" none).
// Goroutine descriptors (runtime.malg) and the records of goroutines
// blocked on channels (runtime.acquireSudog) belong to none: the runtime
// keeps both for reuse by any goroutine, so whichever goroutine first needs
// one more pays for it (a phase reuses what the previous one freed), and
// the goroutines themselves are compared in TestIdleConnCost.
func layerOf(stk []uintptr) string {
	frames := runtime.CallersFrames(stk)
	layer, leaf := "", ""
	for {
		f, more := frames.Next()
		fn := f.Function
		switch {
		case fn == "runtime.malg" || fn == "runtime.acquireSudog" ||
			strings.Contains(fn, "liveHeapByLayer") || strings.Contains(fn, "TestIdleHeapChild"):
			return ""
		case strings.HasPrefix(fn, "github.com/riptide-http/riptide"):
			return "riptide"
		case strings.HasPrefix(fn, "github.com/quic-go/quic-go/http3."):
			layer = "quicgo"
		case leaf == "" && !strings.HasPrefix(fn, "runtime.") && !strings.HasPrefix(fn, "context."):
			leaf = fn
		}
		if !more {
			break
		}
	}
	if layer == "" && leaf == "github.com/quic-go/quic-go.(*baseServer).handleInitialImpl" {
		layer = "connctx"
	}
	return layer
}
