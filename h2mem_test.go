package riptide_test

// What an HTTP/2 stream holds while its handler waits (issue 24): a
// native stream is served by a conn of its own pool, with the read buffer
// its request head lives in but no HTTP/1.1 write buffer, and a response
// body buffer only while it buffers a body.

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/h2test"
	"golang.org/x/net/http2"
)

// A held stream's handler waits in one of these states.
const (
	heldIdle      = "idle"      // before writing anything
	heldBuffered  = "buffered"  // after a small Write, the body still buffered
	heldStreaming = "streaming" // after Write and Flush: the head and data sent
)

// h2HeldStreamLimit bounds the live heap of one native HTTP/2 stream whose
// handler waits idle or streaming: the conn (its Ctx and body reader,
// 5.4 KiB, in a 6 KiB size class), its 1 KiB read buffer holding the
// request head and the engine's stream, about 7.5 KB measured, with room
// to spare. The old native door held a whole HTTP/1.1 conn, about
// 44.6 KB with its 17 KiB write buffer and 16 KiB body buffer.
const h2HeldStreamLimit = 12 << 10

// h2HeldBufferedLimit is the bound for a stream whose handler waits with
// its body buffered: h2HeldStreamLimit and the 16 KiB body buffer.
const h2HeldBufferedLimit = h2HeldStreamLimit + 16<<10

// heldStreamServer serves the held-stream measurements: every request's
// handler reaches state, counts itself in entered and waits for release.
type heldStreamServer struct {
	in      *h2Instance
	entered atomic.Int64
	release atomic.Pointer[chan struct{}]
}

// startHeldStreamServer starts an h2c server whose handler (native or
// compat door) waits in state.
func startHeldStreamServer(tb testing.TB, door, state string, streams int) *heldStreamServer {
	tb.Helper()
	hs := &heldStreamServer{}
	hold := func() { ch := *hs.release.Load(); hs.entered.Add(1); <-ch }
	var h riptide.Handler = riptide.HandlerFunc(func(c *riptide.Ctx) {
		if state != heldIdle {
			c.WriteString("ok")
		}
		if state == heldStreaming {
			c.Flush()
		}
		hold()
		c.WriteString("!")
	})
	if door == "compat" {
		h = riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if state != heldIdle {
				io.WriteString(w, "ok")
			}
			if state == heldStreaming {
				w.(http.Flusher).Flush()
			}
			hold()
			io.WriteString(w, "!")
		}))
	}
	srv := &riptide.Server{Handler: h, HTTP2: &riptide.HTTP2Config{H2C: true, MaxConcurrentStreams: uint32(2 * streams)}}
	hs.in = &h2Instance{addr: riptide.ServeTest(tb, srv, riptide.TestServeOptions{}).Addr}
	return hs
}

// round opens streams streams on one h2c connection, waits until every
// handler holds, and returns the live heap they added.
func (hs *heldStreamServer) round(tb testing.TB, streams int) int64 {
	tb.Helper()
	hs.entered.Store(0)
	ch := make(chan struct{})
	hs.release.Store(&ch)
	a := newH2Attacker(tb, hs.in, 0)
	seen := a.Drain()
	before := settledHeap()
	block := a.RequestBlock("/")
	for i := 0; i < streams; i++ {
		if err := a.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(2*i + 1), BlockFragment: block, EndStream: true, EndHeaders: true}); err != nil {
			tb.Fatal(err)
		}
	}
	for deadline := time.Now().Add(h2AttackBound); hs.entered.Load() < int64(streams); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			close(ch)
			tb.Fatalf("%d of %d handlers reached their wait", hs.entered.Load(), streams)
		}
	}
	grown := settledHeap() - before
	close(ch)
	_ = a.Fr.WriteGoAway(0, http2.ErrCodeNo, nil)
	a.Wait(seen)
	h2test.CloseRaw(a.Conn)
	return grown
}

// TestH2HeldStreamMemory holds 100 native HTTP/2 streams on one
// connection, their handlers waiting idle, with a body buffered, or
// streaming, and bounds the live heap each holds: no HTTP/1.1 write
// buffer, and a body buffer only while one is buffered.
func TestH2HeldStreamMemory(t *testing.T) {
	if riptide.InOwnProcess(t) {
		return // ran in a process of its own
	}
	const streams = 100
	for _, tc := range []struct {
		state string
		limit int64
	}{
		{heldIdle, h2HeldStreamLimit},
		{heldBuffered, h2HeldBufferedLimit},
		{heldStreaming, h2HeldStreamLimit},
	} {
		t.Run(tc.state, func(t *testing.T) {
			hs := startHeldStreamServer(t, "native", tc.state, streams)
			hs.round(t, streams) // warm pools and workers
			// The least of three rounds: a GC cycle or a goroutine of
			// another test may add to one.
			least := int64(-1)
			for range 3 {
				if g := hs.round(t, streams); least < 0 || g < least {
					least = g
				}
			}
			per := least / streams
			t.Logf("native %s: %d B of live heap per held stream", tc.state, per)
			if per > tc.limit {
				t.Errorf("native %s: %d B of live heap per held stream, want at most %d", tc.state, per, tc.limit)
			}
		})
	}
}

// TestH2StreamHeadGrows sends request heads larger than a stream conn's
// read buffer (made to the size of the first head), between small ones,
// on one connection: each reaches the native handler whole.
func TestH2StreamHeadGrows(t *testing.T) {
	t.Parallel()
	srv := &riptide.Server{HTTP2: &riptide.HTTP2Config{H2C: true}, Handler: riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.Write(c.Path())
		c.WriteString(" ")
		c.Write(c.Header("X-A"))
		c.WriteString(" ")
		c.Write(c.Header("X-B"))
	})}
	in := &h2Instance{addr: riptide.ServeTest(t, srv, riptide.TestServeOptions{}).Addr}
	cl := h2Client(t, in)
	for i, n := range []int{10, 3000, 0, 6000, 200, 3000} {
		a, b := strings.Repeat("a", n), strings.Repeat("b", n/2)
		req, _ := http.NewRequest("GET", in.url(fmt.Sprintf("/r%d", i)), nil)
		req.Header.Set("X-A", a)
		req.Header.Set("X-B", b)
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := fmt.Sprintf("/r%d %s %s", i, a, b); err != nil || resp.ProtoMajor != 2 || string(got) != want {
			t.Fatalf("request %d (%d-byte field): HTTP/%d %d bytes %q..., %v; want %d bytes", i, n, resp.ProtoMajor, len(got), got[:min(len(got), 40)], err, len(want))
		}
	}
}

// BenchmarkH2HeldStream measures the live heap one in-flight HTTP/2 stream
// holds, its handler blocked, for each door (issue 23, item 12) and each
// state the handler waits in (issue 24: idle, body buffered, streaming):
// 100 streams are opened on one h2c connection and held while the heap is
// measured. Run it with -benchtime=1x; the figure is the heap-B/stream
// metric.
func BenchmarkH2HeldStream(b *testing.B) {
	const streams = 100
	for _, door := range []string{"native", "compat"} {
		for _, state := range []string{heldIdle, heldBuffered, heldStreaming} {
			b.Run(door+"/"+state, func(b *testing.B) {
				hs := startHeldStreamServer(b, door, state, streams)
				hs.round(b, streams) // warm pools and workers
				b.ResetTimer()
				var total int64
				for i := 0; i < b.N; i++ {
					total += hs.round(b, streams)
				}
				b.ReportMetric(float64(total)/float64(b.N)/streams, "heap-B/stream")
			})
		}
	}
}
