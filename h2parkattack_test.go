package riptide_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/riptide-http/riptide/internal/h2test"
)

// The frame-level HTTP/2 reproducers run against internal/h2 alone
// (internal/h2/attack_test.go, flood_test.go). Parking an idle connection
// on the event loop is the server's (h2park_linux.go, h2tlspark_linux.go),
// so these tests run the floods against Server with every attack starting
// on a parked connection: h2c on the event loop, and TLS when the event
// loop serves it (the default; not with RIPTIDE_TLS_ENGINE=goroutine).
// The first frame of the attack resumes the connection; what the engine
// holds for it must stay bounded, as on a connection that never parked.

// forEachParkedH2 runs f for every riptide target and mode whose idle
// connections park here, and skips the others with the reason.
func forEachParkedH2(t *testing.T, f func(t *testing.T, in *h2Instance)) {
	forEachH2(t, func(t *testing.T, in *h2Instance) {
		if !in.parks {
			t.Skipf("%s over %s does not park its idle connections here (net/http, the goroutine engine, or TLS off the event loop)", in.name, in.mode())
		}
		f(t, in)
	})
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
