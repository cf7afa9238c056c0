package riptide

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/israce"
)

// TestLazyCtxDoneRacesCancel: a request's Context asked for Done on one
// goroutine while the request ends on another (lazyCtx, which takes no
// lock) is cancelled whichever comes first: every channel Done returned
// is closed once cancel has returned, Err is then context.Canceled, and a
// context derived after the end is cancelled too, and a flag sharing the
// state word (ctxHijack) set meanwhile is kept. Under -race this also
// checks that the sides only meet through state (ctx and stop are
// written before ctxMade publishes them).
func TestLazyCtxDoneRacesCancel(t *testing.T) {
	t.Parallel()
	for i := range 2000 {
		var c lazyCtx
		var wg sync.WaitGroup
		chans := make([]<-chan struct{}, 2)
		created := make([]bool, 2)
		start := make(chan struct{})
		wg.Add(3)
		// Each side in turn is started last (the scheduler runs the
		// newest goroutine first) and all wait for start, so that every
		// order of the three calls comes up.
		for k := range 3 {
			switch g := (i + k) % 3; g {
			case 2:
				go func() {
					defer wg.Done()
					<-start
					c.setFlag(ctxHijack, true)
					c.cancel()
				}()
			default:
				go func() {
					defer wg.Done()
					<-start
					chans[g], created[g] = c.done()
				}()
			}
		}
		close(start)
		wg.Wait()
		if created[0] && created[1] {
			t.Fatalf("round %d: both Done calls made an inner context", i)
		}
		if !c.flag(ctxHijack) {
			t.Fatalf("round %d: the hijack flag set while Done ran was lost", i)
		}
		for g, ch := range chans {
			select {
			case <-ch:
			default:
				t.Fatalf("round %d: Done channel %d not closed after cancel", i, g)
			}
		}
		if err := c.Err(); err != context.Canceled {
			t.Fatalf("round %d: Err = %v, want context.Canceled", i, err)
		}
		d, stop := context.WithCancel(lazyCtxDone{&c})
		select {
		case <-d.Done():
		default:
			t.Fatalf("round %d: a context derived after the end is not cancelled", i)
		}
		stop()
	}
}

// lazyCtxDone is a lazyCtx as a context.Context (compatContext's Done
// without the disconnect watch).
type lazyCtxDone struct{ *lazyCtx }

func (c lazyCtxDone) Done() <-chan struct{} {
	ch, _ := c.done()
	return ch
}

// TestCompatContextDoneAllocs measures what a handler that asks for its
// request context's Done channel costs beyond one that does not, over a
// loopback keep-alive connection as TestCompatAllocs does: database/sql,
// for one, calls Done on every query. The first Done makes a
// context.WithCancel inside the request context (so that contexts derived
// from it, through WithValue layers too, hang off a real cancelCtx without
// a goroutine each) and starts the engine's disconnect watch for it,
// which tells the request context through an interface (no closure) and
// makes no channel of its own; the inner context and its cancel function
// live in the request's block. Before, it also made the pair holding
// them, the closure by which the watch cancelled the context and the
// engine's own Done channel.
func TestCompatContextDoneAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	if israce.Enabled {
		t.Skip("allocation counts need a build without -race")
	}
	measure := func(h Handler) (allocs, bytes float64) {
		srv := &Server{Handler: h, Logger: slog.New(slog.DiscardHandler)}
		ac := newAllocClient(t, serveTest(t, srv, testServeOptions{}).Addr, compatAllocRequest)
		return memPerRun(2000, ac.roundTrip)
	}
	// A native handler's Ctx.Done: its channel and the engine's disconnect
	// watch, which the request context's Done starts too. Measured here,
	// since the watch's cost is the engine's.
	nativeA, _ := measure(HandlerFunc(func(c *Ctx) { c.WriteString("Hello, World!") }))
	watchA, _ := measure(HandlerFunc(func(c *Ctx) {
		if c.Done() == nil {
			c.SetStatus(http.StatusInternalServerError)
		}
		c.WriteString("Hello, World!")
	}))
	watch := watchA - nativeA
	plainA, plainB := measure(FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "Hello, World!")
	})))
	doneA, doneB := measure(FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Done() == nil || r.Context().Err() != nil {
			w.WriteHeader(http.StatusInternalServerError)
		}
		io.WriteString(w, "Hello, World!")
	})))
	toA, toB := measure(FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
		if ctx.Done() == nil || ctx.Err() != nil {
			w.WriteHeader(http.StatusInternalServerError)
		}
		cancel()
		io.WriteString(w, "Hello, World!")
	})))
	t.Logf("per request: native Ctx.Done %.4f allocs beyond a native handler (its channel and the engine's watch)", watch)
	t.Logf("per request: compat plain %.4f allocs %.0f B; Done %.4f allocs %.0f B (+%.2f, +%.0f B); WithTimeout %.4f allocs %.0f B (+%.2f, +%.0f B)",
		plainA, plainB, doneA, doneB, doneA-plainA, doneB-plainB, toA, toB, toA-plainA, toB-plainB)
	// Done costs what a native handler's Ctx.Done does (the channel, here
	// the inner context's, and the watch) and 2 more: the inner
	// context.WithCancel's context and its cancel function, which the
	// request's block holds without an allocation of its own. Before, 5:
	// also the pair holding them, the closure by which the watch cancelled
	// it and the engine's own Done channel. 0.05 is room for allocations
	// made elsewhere in the process.
	if d := doneA - plainA - watch; d > 2.05 {
		t.Errorf("Done costs %.4f allocations per request beyond a plain handler and a native handler's Ctx.Done, want at most 2", d)
	}
	// WithTimeout adds package context's own 7 beyond Done: the timerCtx,
	// its channel, its time.Timer, the timer's function, its cancel
	// function, and the inner context's map of children (before: 12).
	if d := toA - plainA - watch; d > 9.05 {
		t.Errorf("context.WithTimeout of the request context costs %.4f allocations per request beyond a plain handler and a native handler's Ctx.Done, want at most 9", d)
	}
}

// TestCompatDerivedContextCancelled checks that contexts derived from the
// request context (context.WithCancel of a WithValue, WithTimeout,
// context.AfterFunc) are cancelled with it, both when the client goes
// away during the handler and when the handler returns, keep its values,
// that those derived from it directly need no goroutine each (package
// context uses its AfterFunc method), and that AfterFunc's stop works
// before the end and reports false after. (Through a WithValue layer
// package context finds neither a *cancelCtx nor an AfterFunc method, so
// it cancels the child from a goroutine of its own: still cancelled, as
// checked here, but not free.)
func TestCompatDerivedContextCancelled(t *testing.T) {
	type key struct{}
	type derived struct {
		ctxs    []context.Context
		cancels []context.CancelFunc
		ran     chan struct{}
		stopped bool // a second AfterFunc's stop reported true
		extra   int  // goroutines added by deriving 64 contexts
		stop    func() bool
	}
	got := make(chan derived, 1)
	release := make(chan struct{})
	addr := serveCompat(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := r.Context()
		var d derived
		vc := context.WithValue(rc, key{}, "v")
		// Cancelled by the test once checked, not by the handler: its
		// return must cancel them.
		c1, cancel1 := context.WithCancel(vc)
		c2, cancel2 := context.WithTimeout(rc, time.Hour)
		d.ctxs, d.cancels = []context.Context{c1, c2}, []context.CancelFunc{cancel1, cancel2}
		d.ran = make(chan struct{})
		d.stop = context.AfterFunc(rc, func() { close(d.ran) })
		d.stopped = context.AfterFunc(rc, func() { t.Error("stopped AfterFunc ran") })()
		if c1.Value(key{}) != "v" || c1.Value(http.LocalAddrContextKey) == nil || c2.Value(http.ServerContextKey) == nil {
			t.Error("derived context lost a value")
		}
		before := runtime.NumGoroutine()
		for range 64 {
			_, cancel := context.WithCancel(rc)
			defer cancel()
		}
		d.extra = runtime.NumGoroutine() - before
		for _, c := range d.ctxs {
			if c.Err() != nil {
				t.Errorf("derived context done during the handler: %v", c.Err())
			}
		}
		got <- d
		if r.URL.Path == "/disconnect" {
			select {
			case <-c1.Done(): // the client went away
			case <-time.After(10 * time.Second):
				t.Error("derived context not cancelled on disconnect")
			}
			return
		}
		<-release
		io.WriteString(w, "ok")
	}))
	for _, path := range []string{"/return", "/disconnect"} {
		nc, br := dialRaw(t, addr)
		io.WriteString(nc, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		d := <-got
		if !d.stopped {
			t.Errorf("%s: AfterFunc's stop before the end reported false", path)
		}
		if d.extra >= 64 {
			t.Errorf("%s: deriving 64 contexts started %d goroutines", path, d.extra)
		}
		if path == "/disconnect" {
			nc.Close()
		} else {
			release <- struct{}{}
			readResponse(t, br)
		}
		for i, c := range d.ctxs {
			select {
			case <-c.Done():
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: derived context %d not cancelled", path, i)
			}
			if c.Err() != context.Canceled {
				t.Errorf("%s: derived context %d: Err = %v, want context.Canceled", path, i, c.Err())
			}
		}
		select {
		case <-d.ran:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: context.AfterFunc's function did not run", path)
		}
		if d.stop() {
			t.Errorf("%s: AfterFunc's stop after it ran reported true", path)
		}
		for _, cancel := range d.cancels {
			cancel()
		}
	}
}

// TestCompatValueDerivedContextNoGoroutine: the usual middleware pattern,
// context.WithTimeout of a context.WithValue of the request context,
// starts no goroutine per derived context, as with net/http (whose request
// context is a context.WithCancel). Package context finds the parent to
// hang a child off through a WithValue layer only by
// Value(&cancelCtxKey), which the request context answers with the
// context.WithCancel made inside it; a context implementing only
// AfterFunc is not found there, and each child then costs a goroutine
// until cancelled. The derived contexts are still cancelled when the
// handler returns.
func TestCompatValueDerivedContextNoGoroutine(t *testing.T) {
	type key struct{}
	const n = 64
	type result struct {
		extra   int
		ctxs    []context.Context
		cancels []context.CancelFunc
	}
	got := make(chan result, 1)
	addr := serveCompat(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The first Done starts the engine's watch (one goroutine, as
		// net/http's background read): before counting.
		if r.Context().Done() == nil {
			t.Error("Done returned nil")
		}
		var res result
		before := runtime.NumGoroutine()
		for range n {
			ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), key{}, 1), time.Minute)
			res.ctxs, res.cancels = append(res.ctxs, ctx), append(res.cancels, cancel)
		}
		res.extra = runtime.NumGoroutine() - before
		for _, ctx := range res.ctxs {
			if ctx.Err() != nil || ctx.Value(key{}) != 1 {
				t.Errorf("derived context during the handler: Err %v, value %v", ctx.Err(), ctx.Value(key{}))
				break
			}
		}
		got <- res
		io.WriteString(w, "ok")
	}))
	nc, br := dialRaw(t, addr)
	io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	res := <-got
	readResponse(t, br)
	// Other goroutines of the process (the server's, the runtime's) may
	// come and go meanwhile; one per derived context may not.
	if res.extra >= n/4 {
		t.Errorf("deriving %d contexts with WithTimeout(WithValue(r.Context())) started %d goroutines, want none", n, res.extra)
	}
	// Cancelled by the handler's return, not by their cancel functions
	// (called only once checked).
	for i, ctx := range res.ctxs {
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("derived context %d not cancelled when the handler returned", i)
		}
		if ctx.Err() != context.Canceled {
			t.Fatalf("derived context %d: Err = %v, want context.Canceled", i, ctx.Err())
		}
	}
	for _, cancel := range res.cancels {
		cancel()
	}
}

// TestCompatContextAfterCancelAfter: a compat handler run under a native
// CancelAfter (as middleware.Timeout does) sees its request context
// cancelled once the deadline passed, whether it first asks for Done
// before the deadline or after it (the deadline had then already closed
// the engine's signal, once, before the context asked to be told).
func TestCompatContextAfterCancelAfter(t *testing.T) {
	t.Parallel()
	res := make(chan string, 1)
	compat := FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/late" {
			// Past the deadline. Were the machine too slow for the
			// deadline to have fired by then, this case would only
			// repeat /early's.
			time.Sleep(200 * time.Millisecond)
		}
		select {
		case <-r.Context().Done():
			res <- "cancelled: " + r.Context().Err().Error()
		case <-time.After(10 * time.Second): // a bound on a hang, not a timing check
			res <- "not cancelled"
		}
		io.WriteString(w, "ok")
	}))
	srv := &Server{Handler: HandlerFunc(func(c *Ctx) {
		c.CancelAfter(20 * time.Millisecond)
		compat.ServeCtx(c)
	}), Logger: slog.New(slog.DiscardHandler)}
	addr := serveTest(t, srv, testServeOptions{}).Addr
	for _, path := range []string{"/early", "/late"} {
		nc, br := dialRaw(t, addr)
		io.WriteString(nc, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		got := <-res
		readResponse(t, br)
		if got == "not cancelled" {
			t.Errorf("%s: request context not cancelled 10 s after CancelAfter's 20 ms deadline", path)
		}
	}
}
