package riptide_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/h2test"
)

// The frame-level HTTP/2 reproducers run against internal/h2 alone
// (internal/h2/attack_test.go, flood_test.go, flowflood_test.go), each
// attack written once in internal/h2test's Attacker. Parking an idle connection
// on the event loop is the server's (h2park_linux.go, h2tlspark_linux.go),
// so these tests run the floods against Server with every attack starting
// on a parked connection: h2c on the event loop, and TLS when the event
// loop serves it (the default; not with RIPTIDE_TLS_ENGINE=goroutine).
// The first frame of the attack resumes the connection; what the engine
// holds for it must stay bounded, as on a connection that never parked.

// forEachParkedH2 runs f for every riptide target and mode whose idle
// connections park here, and skips the others with the reason.
func forEachParkedH2(t *testing.T, f func(t *testing.T, in *h2Instance)) {
	forEachParkedH2Config(t, nil, f)
}

// parkedFloodHeapLimit bounds the live heap growth a flood may cause.
const parkedFloodHeapLimit = 32 << 20

// TestH2ControlFloodFromParkedBounded: a million SETTINGS or PING frames,
// never reading the answers, sent to a connection that was parked. The
// server closes the connection or stops reading it, its live heap stays
// within parkedFloodHeapLimit, and it serves a fresh connection after.
func TestH2ControlFloodFromParkedBounded(t *testing.T) {
	floods := []struct {
		name  string
		write func(*http2.Framer) error
	}{
		{"settings", func(fr *http2.Framer) error {
			return fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0})
		}},
		{"ping", func(fr *http2.Framer) error { return fr.WritePing(false, [8]byte{1, 2, 3, 4, 5, 6, 7, 8}) }},
	}
	for _, fl := range floods {
		t.Run(fl.name, func(t *testing.T) {
			forEachParkedH2(t, func(t *testing.T, in *h2Instance) {
				const frames = 1_000_000
				before := h2test.LiveHeap()
				a := newH2Attacker(t, in, 4096) // returns once the connection parked
				sent, err := a.FloodWithoutReading(frames, 2*time.Second, fl.write)
				grown := h2test.LiveHeap() - before
				how := "every frame was written (into kernel buffers, at least)"
				var ne net.Error
				if err != nil && errors.As(err, &ne) && ne.Timeout() {
					how = "the server stopped reading (backpressure)"
				} else if err != nil {
					how = "the server closed the connection: " + err.Error()
				}
				t.Logf("sent %d frames to a parked connection without reading; %s; live heap grew %d KiB", sent, how, grown>>10)
				if grown > parkedFloodHeapLimit {
					t.Errorf("the live heap grew by %d MiB during the flood (limit %d MiB)", grown>>20, parkedFloodHeapLimit>>20)
				}
				h2test.CloseRaw(a.Conn)
				assertServes(t, in)
			})
		})
	}
}

// TestH2ContinuationFloodFromParkedEnds: a HEADERS frame without
// END_HEADERS followed by up to 64 MiB of CONTINUATION frames, sent to a
// parked connection. The server ends the connection, and serves a fresh
// one after.
func TestH2ContinuationFloodFromParkedEnds(t *testing.T) {
	forEachParkedH2(t, func(t *testing.T, in *h2Instance) {
		const frames = 4096
		a := newH2Attacker(t, in, 0)
		seen := a.Drain()
		sent, fragLen, err := a.ContinuationFlood("/", frames)
		s := a.Wait(seen)
		t.Logf("sent %d CONTINUATION frames to a parked connection; write error: %v; server: %v", sent, err, s)
		if !s.Ended {
			t.Errorf("the server kept the connection open through %d CONTINUATION frames (%d MiB of headers)", sent, sent*fragLen>>20)
		}
		if s.Statuses["200"] != 0 {
			t.Errorf("the flooded stream was answered: %v", s)
		}
		assertServes(t, in)
	})
}

// forEachParkedH2Config is forEachParkedH2 with each target's HTTP2Config
// changed by h2Config.
func forEachParkedH2Config(t *testing.T, h2Config func(*riptide.HTTP2Config), f func(t *testing.T, in *h2Instance)) {
	forEachH2Config(t, h2Config, func(t *testing.T, in *h2Instance) {
		if !in.parks {
			t.Skipf("%s over %s does not park its idle connections here (net/http, the goroutine engine, or TLS off the event loop)", in.name, in.mode())
		}
		f(t, in)
	})
}

// parkedAttack runs attack, on a connection dialled with the receive
// buffer readBuf (see h2Dial) once it has parked; then the attacker
// leaves, the /hold handlers are released, and the goroutines that serve
// HTTP/2 connections must come back to as many as before (the attacked
// connection's reader, writer and handlers all end), and the server must
// serve a fresh connection.
func parkedAttack(t *testing.T, in *h2Instance, readBuf int, attack func(a *h2test.Attacker)) {
	g0 := h2test.Goroutines(h2test.ConnFrame)
	a := newH2Attacker(t, in, readBuf)
	attack(a.Attacker)
	h2test.CloseRaw(a.Conn)
	in.app.release()
	h2test.WaitGoroutines(t, h2test.ConnFrame, g0)
	assertServes(t, in)
}

// TestH2RapidResetFromParkedBounded plays CVE-2023-44487 starting on a
// parked connection: HEADERS each followed at once by RST_STREAM, to
// handlers that take 5 ms (h2test.Attacker.RapidReset). The server never
// runs more handlers at once than its stream limit (reset streams
// included: their handlers still run), stops the flood by ending the
// connection or refusing streams, and serves a fresh connection after.
func TestH2RapidResetFromParkedBounded(t *testing.T) {
	forEachParkedH2(t, func(t *testing.T, in *h2Instance) {
		// InlineHandlers run each handler on the connection's reader,
		// which reads the reset only once its handler has returned: the
		// client's requests in turn, never more than one at once (as in
		// internal/h2's TestRapidResetBoundsHandlersToStreamLimit).
		pairs, serial := 20000, in.name == "riptide-inline"
		if serial {
			pairs = 500
		}
		parkedAttack(t, in, 0, func(a *h2test.Attacker) {
			a.RapidReset("/slow", pairs, &in.app.slow, h2TestMaxStreams, serial)
		})
	})
}

// TestH2ResetFloodFromParkedEnds sends, to a parked connection and never
// reading, two million frames that each make the server answer
// RST_STREAM: PRIORITY making a stream depend on itself, WINDOW_UPDATE
// with increment 0 on an opened stream, empty DATA on a closed stream,
// HEADERS without :path (h2test.Attacker.ResetFlood). The live heap stays
// within 8 MiB, and the server ends the connection (GOAWAY
// ENHANCE_YOUR_CALM when the client still reads) instead of answering a
// PING sent after the flood; it serves a fresh connection after.
func TestH2ResetFloodFromParkedEnds(t *testing.T) {
	const heapLimit, frames, batch = 8 << 20, 2_000_000, 4096
	floods := []struct {
		name  string
		open  bool // open stream 1 first
		frame func(b []byte, i int) []byte
	}{
		{"self-dependent-priority", false, h2test.SelfDependentPriority},
		{"zero-window-update", true, h2test.ZeroWindowUpdate},
		{"data-on-closed-stream", true, h2test.EmptyDataOnStream1},
		{"headers-without-path", false, h2test.HeadersWithoutPath},
	}
	for _, fl := range floods {
		t.Run(fl.name, func(t *testing.T) {
			forEachParkedH2(t, func(t *testing.T, in *h2Instance) {
				before := h2test.LiveHeap()
				parkedAttack(t, in, 4096, func(a *h2test.Attacker) {
					if fl.open {
						a.OpenStream1()
					}
					a.ResetFlood(before, heapLimit, frames, batch, h2StallWait, fl.frame)
				})
			})
		})
	}
}

// The receive windows the servers of TestH2FlowFloodFromParkedRefused
// grant: the connection's is four streams' worth, so that a stream's
// window can be exceeded while the connection's is not, and the other way
// round.
const (
	parkedFloodStreamWindow = 64 << 10
	parkedFloodConnWindow   = 4 * parkedFloodStreamWindow
)

// TestH2FlowFloodFromParkedRefused runs the flow-control floods on a
// parked connection, never reading while they flood: DATA beyond the
// stream window, then 16 MiB more; DATA filling streams beyond the
// connection window, then 16 MiB more; 200,000 valid WINDOW_UPDATEs, then
// one overflowing the stream's send window and one overflowing the
// connection's (h2test.Attacker's DataBeyondStreamWindow,
// DataBeyondConnWindow and WindowUpdateFlood). The server refuses each
// violation as RFC 9113 §6.9.1 says before it answers the PING after it,
// its live heap grows by at most 8 MiB, and it serves a fresh connection
// after.
func TestH2FlowFloodFromParkedRefused(t *testing.T) {
	const heapLimit, data, updates = 8 << 20, 16 << 20, 200_000
	const sw, cw = parkedFloodStreamWindow, parkedFloodConnWindow
	floods := []struct {
		name string
		// blocksInline: the flood holds a handler of a request without a
		// body, which InlineHandlers run on the connection's reader.
		blocksInline bool
		flood        func(a *h2test.Attacker)
	}{
		{"data-beyond-stream-window", false, func(a *h2test.Attacker) { a.DataBeyondStreamWindow(sw, data, h2StallWait, heapLimit) }},
		{"data-beyond-conn-window", false, func(a *h2test.Attacker) { a.DataBeyondConnWindow(sw, cw, data, h2StallWait, heapLimit) }},
		{"window-update", true, func(a *h2test.Attacker) { a.WindowUpdateFlood(updates, h2StallWait, heapLimit) }},
	}
	windows := func(c *riptide.HTTP2Config) { c.MaxReceiveBufferPerStream, c.MaxReceiveBufferPerConnection = sw, cw }
	for _, fl := range floods {
		t.Run(fl.name, func(t *testing.T) {
			forEachParkedH2Config(t, windows, func(t *testing.T, in *h2Instance) {
				if fl.blocksInline && in.name == "riptide-inline" {
					t.Skip("the flood holds a handler that InlineHandlers would run on the connection's reader")
				}
				parkedAttack(t, in, 4096, func(a *h2test.Attacker) {
					a.CheckWindows(sw, cw)
					fl.flood(a)
				})
			})
		})
	}
}
