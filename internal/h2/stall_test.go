package h2

import (
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/riptide-http/riptide/internal/h2test"
	"golang.org/x/net/http2"
)

// stallBody is what each stalled handler tries to send.
var stallBody = strings.Repeat("z", 1<<20)

// TestZeroWindowStallBoundedAndReleased opens MaxConcurrentStreams
// streams whose responses are 1 MiB each after setting the stream window
// to 0 and never granting more: the handlers block on flow control. While
// stalled, the live heap and goroutines must stay bounded (nothing is
// queued past the windows); once the client goes, every handler must
// return and the engine must keep serving. h2c and TLS. It measures the
// live heap, so it runs alone (not parallel).
func TestZeroWindowStallBoundedAndReleased(t *testing.T) {
	var running atomic.Int64
	h := handlerFunc(func(st *Stream) {
		if st.Path() != "/big" {
			respond(st, 200, helloBody)
			return
		}
		running.Add(1)
		defer running.Add(-1)
		_ = st.WriteHead(&Head{Status: 200, ContentLength: -1}, []byte(stallBody), true)
	})
	for _, useTLS := range []bool{false, true} {
		in := startTarget(t, targets[0], useTLS, h, nil)
		t.Run(in.mode(), func(t *testing.T) {
			heap0, g0 := h2test.LiveHeap(), runtime.NumGoroutine()
			a := newAttacker(t, in, 0)
			if err := a.Fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}); err != nil {
				t.Fatal(err)
			}
			seen := a.Drain()
			block := a.RequestBlock("/big")
			for i := range testMaxStreams {
				if err := a.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(2*i + 1), BlockFragment: block, EndStream: true, EndHeaders: true}); err != nil {
					t.Fatal(err)
				}
			}
			deadline := time.Now().Add(attackBound)
			for running.Load() < testMaxStreams && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if n := running.Load(); n != testMaxStreams {
				t.Fatalf("%d handlers running, want %d", n, testMaxStreams)
			}
			grown, g := h2test.LiveHeap()-heap0, runtime.NumGoroutine()
			t.Logf("stalled: %d handlers, live heap +%d KiB, goroutines %d -> %d", running.Load(), grown>>10, g0, g)
			if grown > 16<<20 {
				t.Errorf("live heap grew %d MiB with every response stalled at a zero window", grown>>20)
			}
			if g > g0+testMaxStreams+16 {
				t.Errorf("%d goroutines for %d stalled streams (from %d)", g, testMaxStreams, g0)
			}
			h2test.CloseRaw(a.Conn)
			<-seen
			for running.Load() != 0 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if n := running.Load(); n != 0 {
				t.Fatalf("%d handlers still blocked after the client left", n)
			}
			assertServes(t, in)
		})
	}
}

// TestClientThatNeverReadsIsClosed: a client that never reads has its
// connection closed, whether or not its frames keep coming, although the
// engine's writer is blocked on the client (net.Pipe holds nothing, so
// not even the server's SETTINGS goes out) and no stream is open.
//   - A flood of a million PINGs: once the acknowledgements queued
//     exceed the control budget (h2MaxControlBytes) the connection ends
//     at once (GOAWAY(ENHANCE_YOUR_CALM)), and closes when the final
//     write has had its h2CloseLinger.
//   - 1,000 PINGs, under the budget, then silence: IdleTimeout ends it,
//     and it closes h2CloseLinger later.
//
// The connection's clock is synctest's, so each close is checked to the
// nanosecond.
func TestClientThatNeverReadsIsClosed(t *testing.T) {
	t.Parallel()
	const idle = 1500 * time.Millisecond
	for _, tc := range []struct {
		name   string
		pings  int
		flood  bool // the engine must stop taking PINGs before the last
		closed time.Duration
	}{
		{"PING flood past the control budget", 1_000_000, true, h2CloseLinger},
		{"PINGs under the budget, then IdleTimeout", 1000, false, idle + h2CloseLinger},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				cli, served := serveBubblePipe(t, &Config{Handler: nopHandler{}, IdleTimeout: idle})
				start := time.Now()
				flooded := make(chan int, 1)
				go func() {
					_, err := cli.Write(rawSeq([]byte(Preface), rawFrame(4, 0, 0)))
					ping := rawFrameN(6, 0, 0, 8)
					sent := 0
					for ; err == nil && sent < tc.pings; sent++ {
						_, err = cli.Write(ping)
					}
					flooded <- sent
				}()
				select {
				case <-served:
				case <-time.After(attackBound):
					t.Fatal("the connection of a client that never reads was never closed")
				}
				closed := time.Since(start)
				sent := <-flooded
				t.Logf("%d PINGs went in; closed after %v", sent, closed)
				if tc.flood && sent == tc.pings {
					t.Errorf("the engine read all %d PINGs while its answers could not go out: its output is not bounded", sent)
				}
				if closed != tc.closed {
					t.Errorf("closed after %v, want %v", closed, tc.closed)
				}
			})
		})
	}
}

// TestWriteTimeoutEndsWriteStalledAtZeroWindow checks that WriteTimeout
// bounds a response write stalled at a zero window: the handler's write
// fails, WriteTimeout after it began, and the handler returns while the
// client keeps the connection open.
func TestWriteTimeoutEndsWriteStalledAtZeroWindow(t *testing.T) {
	t.Parallel()
	const timeout = 200 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		type result struct {
			err  error
			took time.Duration
		}
		werr := make(chan result, 1)
		h := handlerFunc(func(st *Stream) {
			start := time.Now()
			err := st.WriteHead(&Head{Status: 200, ContentLength: int64(len(stallBody))}, []byte(stallBody), true)
			werr <- result{err, time.Since(start)}
		})
		cli, _ := serveBubblePipe(t, &Config{Handler: h, WriteTimeout: timeout})
		// A SETTINGS_INITIAL_WINDOW_SIZE of 0, then GET / on stream 1
		// (HPACK static indexes) with END_HEADERS and END_STREAM.
		go func() {
			_, _ = cli.Write(rawSeq([]byte(Preface), rawFrame(4, 0, 0, 0, 4, 0, 0, 0, 0),
				rawFrame(1, 0x4|0x1, 1, 0x82, 0x86, 0x84, 0x41, 0x01, 'x')))
		}()
		go func() { _, _ = io.Copy(io.Discard, cli) }() // the client reads all it gets
		select {
		case r := <-werr:
			if r.err == nil {
				t.Fatal("a 1 MiB write at a zero window succeeded")
			}
			if r.took != timeout {
				t.Errorf("the stalled write failed after %v, want %v (WriteTimeout)", r.took, timeout)
			}
		case <-time.After(attackBound):
			t.Fatal("the stalled write never timed out")
		}
	})
}
