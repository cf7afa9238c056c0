package riptide_test

import (
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"golang.org/x/net/http2"
)

// h2StallBody is what each stalled handler tries to send.
var h2StallBody = strings.Repeat("z", 1<<20)

// TestH2ZeroWindowStall opens MaxConcurrentStreams streams whose responses
// are 1 MiB each after setting the stream window to 0 and never granting
// more: the handlers block on flow control. While stalled, the server's
// live heap and goroutines must stay bounded (nothing is queued past the
// windows); once the client goes, every handler must return and the server
// must keep serving. Both doors, h2c and TLS.
func TestH2ZeroWindowStall(t *testing.T) {
	var running atomic.Int64
	native := riptide.HandlerFunc(func(c *riptide.Ctx) {
		if string(c.Path()) != "/big" {
			c.WriteString(h2HelloBody)
			return
		}
		running.Add(1)
		defer running.Add(-1)
		c.WriteString(h2StallBody)
	})
	compat := riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/big" {
			io.WriteString(w, h2HelloBody)
			return
		}
		running.Add(1)
		defer running.Add(-1)
		io.WriteString(w, h2StallBody)
	}))
	for name, h := range map[string]riptide.Handler{"native": native, "compat": compat} {
		for _, useTLS := range []bool{false, true} {
			in := startRiptideTarget(t, name, h, useTLS)
			t.Run(name+"/"+in.mode(), func(t *testing.T) {
				heap0, g0 := liveHeap(), runtime.NumGoroutine()
				a := newH2Attacker(t, in, 0)
				if err := a.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}); err != nil {
					t.Fatal(err)
				}
				seen := a.drain()
				block := a.requestBlock("/big")
				for i := range h2TestMaxStreams {
					if err := a.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(2*i + 1), BlockFragment: block, EndStream: true, EndHeaders: true}); err != nil {
						t.Fatal(err)
					}
				}
				deadline := time.Now().Add(h2AttackBound)
				for running.Load() < h2TestMaxStreams && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				if n := running.Load(); n != h2TestMaxStreams {
					t.Fatalf("%d handlers running, want %d", n, h2TestMaxStreams)
				}
				grown, g := liveHeap()-heap0, runtime.NumGoroutine()
				t.Logf("stalled: %d handlers, live heap +%d KiB, goroutines %d -> %d", running.Load(), grown>>10, g0, g)
				if grown > 16<<20 {
					t.Errorf("live heap grew %d MiB with every response stalled at a zero window", grown>>20)
				}
				if g > g0+h2TestMaxStreams+16 {
					t.Errorf("%d goroutines for %d stalled streams (from %d)", g, h2TestMaxStreams, g0)
				}
				closeRaw(a.conn)
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
}

// TestH2StuckIdleConnection floods PINGs at a server while never reading,
// until the server stops reading too (its answers fill the socket), then
// waits: with no stream open, IdleTimeout must still end the connection
// (ConnState reports it closed), although the server's reader is blocked
// on its full output and the client never reads.
func TestH2StuckIdleConnection(t *testing.T) {
	t.Parallel()
	closed := make(chan struct{}, 1)
	in, _ := startRiptideH2(t, riptide.HandlerFunc(func(*riptide.Ctx) {}), func(s *riptide.Server) {
		// Long enough for the flood to fill both directions first.
		s.IdleTimeout = 1500 * time.Millisecond
		s.ConnState = func(_ net.Conn, st riptide.ConnState) {
			if st == riptide.StateClosed {
				closed <- struct{}{}
			}
		}
	})
	a := newH2Attacker(t, in, 4096)
	go func() {
		var err error
		for sent := 0; err == nil && sent < 1_000_000; sent++ {
			err = a.fr.WritePing(false, [8]byte{})
		}
	}()
	select {
	case <-closed:
	case <-time.After(h2AttackBound):
		t.Fatal("the stuck idle connection was never closed")
	}
}

// TestH2ZeroWindowWriteTimeout checks that WriteTimeout bounds a response
// write stalled at a zero window: the handler's write fails and the handler
// returns while the client keeps the connection open.
func TestH2ZeroWindowWriteTimeout(t *testing.T) {
	t.Parallel()
	werr := make(chan error, 1)
	in, _ := startRiptideH2(t, riptide.HandlerFunc(func(c *riptide.Ctx) {
		c.SetContentLength(int64(len(h2StallBody)))
		_, err := c.WriteString(h2StallBody)
		werr <- err
	}), func(s *riptide.Server) { s.WriteTimeout = 200 * time.Millisecond })
	a := newH2Attacker(t, in, 0)
	if err := a.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}); err != nil {
		t.Fatal(err)
	}
	seen := a.drain()
	if err := a.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: a.requestBlock("/"), EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-werr:
		if err == nil {
			t.Fatal("a 1 MiB write at a zero window succeeded")
		}
	case <-time.After(h2AttackBound):
		t.Fatal("the stalled write never timed out")
	}
	closeRaw(a.conn)
	<-seen
}
