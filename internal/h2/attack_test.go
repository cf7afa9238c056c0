package h2

// Known HTTP/2 attacks, played by a hostile client (attacker) against
// every target in h2c and TLS mode. Each test checks that the engine
// limits or closes the abusive connection, never lets a handler see more
// than the configured limits, and still serves a fresh connection
// afterwards. Every attack is bounded in frames sent and in time.

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/h2test"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// TestRapidResetBoundsHandlersToStreamLimit plays CVE-2023-44487: a stream
// of HEADERS each followed at once by RST_STREAM, to slow handlers. The
// engine must never run more handlers at once than its stream limit (reset
// streams included: their handlers still run), must stop the flood by
// closing the connection or limiting it, and must clean up and keep
// serving.
func TestRapidResetBoundsHandlersToStreamLimit(t *testing.T) {
	t.Parallel()
	forEachTarget(t, func(t *testing.T, in *instance) {
		pairs := 20000
		// InlineHandlers run each handler on the connection's reader, one
		// at a time: the reset that follows a HEADERS is read only once its
		// handler has returned, so every handler runs, in turn, never more
		// than one at once. That is a client's serial requests, not the
		// attack's amplification; the concurrency bound below is what the
		// test holds it to. 500 pairs of 5 ms handlers take 2.5 s, where
		// 20,000 waited out the attack bound (60 s) on each transport.
		inline := in.name == "inline"
		if inline {
			pairs = 500
		}
		a := newAttacker(t, in, 0)
		a.RapidReset("/slow", pairs, &in.app.slow, testMaxStreams, inline)
		assertServes(t, in)
	})
}

// TestContinuationFloodEndsConnection plays the CONTINUATION flood
// (CVE-2024-27316 and kin): a HEADERS frame without END_HEADERS followed
// by CONTINUATION frames that never end, full of valid HPACK. The engine
// must end the connection long before the client runs out of frames, and
// no handler may run.
func TestContinuationFloodEndsConnection(t *testing.T) {
	t.Parallel()
	const frames = 4096 // 64 MiB of header block at 16 KiB per frame
	forEachTarget(t, func(t *testing.T, in *instance) {
		a := newAttacker(t, in, 0)
		seenCh := a.Drain()
		sent, fragLen, err := a.ContinuationFlood("/bomb", frames)
		s := a.Wait(seenCh)
		t.Logf("sent %d CONTINUATION frames (%d KiB); write error: %v; server: %v", sent, sent*fragLen>>10, err, s)
		if !s.Ended {
			t.Errorf("the server kept the connection open through %d CONTINUATION frames (%d MiB of headers)", sent, sent*fragLen>>20)
		}
		if n := in.app.bombCalls.Load(); n != 0 {
			t.Errorf("a handler ran for the flooded stream (%d times)", n)
		}
		assertServes(t, in)
	})
}

// TestHPACKBombRefusedWithinHeaderLimit sends header blocks that are small
// on the wire but decode to a huge header list: one 4000-byte field put in
// the HPACK dynamic table, then thousands of one-byte references to it
// (about 48 MB decoded per request). The engine must refuse each request
// (flag it over the limit, which is answered 431, or RST_STREAM or
// GOAWAY), no handler may see more than the header limit, and it must
// keep serving.
func TestHPACKBombRefusedWithinHeaderLimit(t *testing.T) {
	t.Parallel()
	const requests = 8
	forEachTarget(t, func(t *testing.T, in *instance) {
		a := newAttacker(t, in, 0)
		seenCh := a.Drain()
		// The first block indexes the big field (dynamic index 62); every
		// block then references it over and over.
		var first bytes.Buffer
		enc := hpack.NewEncoder(&first)
		_ = enc.WriteField(hpack.HeaderField{Name: "x-bomb", Value: strings.Repeat("b", 4000)})
		refs := bytes.Repeat([]byte{0x80 | 62}, 12000)
		var err error
		sent := 0
		for ; err == nil && sent < requests; sent++ {
			block := append(a.RequestBlock("/bomb"), refs...)
			if sent == 0 {
				block = append(append(a.RequestBlock("/bomb"), first.Bytes()...), refs...)
			}
			err = a.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(2*sent + 1), BlockFragment: block, EndStream: true, EndHeaders: true})
		}
		_ = a.Fr.WriteGoAway(0, http2.ErrCodeNo, nil)
		s := a.Wait(seenCh)
		t.Logf("sent %d bomb requests (%d MB decoded each); write error: %v; server: %v",
			sent, (4000+len("x-bomb"))*12000/1e6, err, s)
		if n := in.app.bombMaxHdr.Load(); n > testMaxHeaderBytes {
			t.Errorf("a handler received a %d-byte header list, over the %d-byte limit", n, testMaxHeaderBytes)
		}
		if n := s.Statuses["200"]; n > 0 {
			t.Errorf("%d bomb requests were answered 200", n)
		}
		if s.Statuses["431"]+s.RSTs == 0 && !s.GoAway {
			t.Errorf("the server neither refused the bomb requests (431 or RST_STREAM) nor sent GOAWAY")
		}
		assertServes(t, in)
	})
}

// TestSettingsFloodHeapBounded and TestPingFloodHeapBounded send control
// frames that each demand an answer (a SETTINGS ACK, a PING ACK) while
// never reading, with a tiny receive buffer, so that the answers pile up
// in the server. The engine must keep what it holds for the connection
// bounded: it closes the connection or stops reading it. Since the kernel
// may buffer tens of MiB of the flood either way, the test checks the
// live heap rather than the socket: a server that queued one answer per
// frame would hold ~100 MB for the million frames sent. They measure the
// process's heap, so they run alone (not parallel).
func TestSettingsFloodHeapBounded(t *testing.T) {
	controlFlood(t, func(fr *http2.Framer) error {
		return fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0})
	})
}

func TestPingFloodHeapBounded(t *testing.T) {
	controlFlood(t, func(fr *http2.Framer) error {
		return fr.WritePing(false, [8]byte{1, 2, 3, 4, 5, 6, 7, 8})
	})
}

// stallWait is how long a blocked write must last for the flood tests to
// take it as the server no longer reading. A slow server mistaken for one
// applying backpressure still passes the other checks.
const stallWait = 2 * time.Second

// floodHeapLimit bounds the live heap growth a control flood may cause.
const floodHeapLimit = 32 << 20

func controlFlood(t *testing.T, write func(*http2.Framer) error) {
	const frames = 1_000_000
	forEachTarget(t, func(t *testing.T, in *instance) {
		before := h2test.LiveHeap()
		a := newAttacker(t, in, 4096)
		sent, err := a.FloodWithoutReading(frames, stallWait, write)
		grown := h2test.LiveHeap() - before
		how := "the server stopped reading (backpressure)"
		if ne := net.Error(nil); err == nil {
			how = "every frame was written (into kernel buffers, at least)"
		} else if !errors.As(err, &ne) || !ne.Timeout() {
			how = "the server closed the connection: " + err.Error()
		}
		t.Logf("sent %d frames without reading; %s; live heap grew %d KiB", sent, how, grown>>10)
		if grown > floodHeapLimit {
			t.Errorf("the server's live heap grew by %d MiB during the flood (limit %d MiB): answers are piling up",
				grown>>20, floodHeapLimit>>20)
		}
		h2test.CloseRaw(a.Conn)
		assertServes(t, in)
	})
}
