package h2test

// The attacks that make a server answer with RST_STREAM, shared by
// internal/h2's tests (the engine alone) and the root package's (a
// riptide.Server, each attack starting on a parked connection): rapid
// reset (CVE-2023-44487) and the reset floods (CVE-2019-9514).

import (
	"errors"
	"math"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// Handlers counts the handlers of a route: how many started, how many run
// now, and the most that ever ran at once.
type Handlers struct {
	Started, Running, MaxRunning atomic.Int64
}

// Enter counts a handler in; Leave counts it out.
func (h *Handlers) Enter() {
	h.Started.Add(1)
	n := h.Running.Add(1)
	for m := h.MaxRunning.Load(); n > m && !h.MaxRunning.CompareAndSwap(m, n); m = h.MaxRunning.Load() {
	}
}

// Leave counts a handler out (see Enter).
func (h *Handlers) Leave() { h.Running.Add(-1) }

// WaitIdle waits, at most AttackBound, until no handler runs, and fails t
// if some still do.
func (h *Handlers) WaitIdle(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(AttackBound)
	for h.Running.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d handlers still running long after the attack", h.Running.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// RapidReset plays CVE-2023-44487 against the server's slow route path
// (each request counted by h): up to pairs HEADERS (GET path, streams 1,
// 3, 5...) each followed at once by RST_STREAM(CANCEL), reading what the
// server sends meanwhile; if every pair went in it ends politely (GOAWAY)
// so that the connection ends. It fails a.T if more handlers than
// maxStreams ran at once, or if the server ran a handler for every one
// of the pairs without pushing back (unless serial: a server that runs
// handlers one at a time on the connection's reader, which reads the
// reset only once its handler returned, serves the client's requests in
// turn, not the attack's amplification), and waits for the handlers to
// return.
func (a *Attacker) RapidReset(path string, pairs int, h *Handlers, maxStreams int64, serial bool) {
	t := a.T
	t.Helper()
	seenCh := a.Drain()
	block := a.RequestBlock(path)
	sent := 0
	for ; sent < pairs; sent++ {
		id := uint32(2*sent + 1)
		err := a.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndStream: true, EndHeaders: true})
		if err == nil {
			err = a.Fr.WriteRSTStream(id, http2.ErrCodeCancel)
		}
		if err != nil {
			break
		}
	}
	if sent == pairs {
		// The server took every pair without closing: end politely so
		// that the connection ends; the checks below still apply.
		_ = a.Fr.WriteGoAway(0, http2.ErrCodeNo, nil)
	}
	s := a.Wait(seenCh)
	t.Logf("sent %d HEADERS+RST_STREAM pairs; server: %v; %s handlers started %d, at most %d at once",
		sent, s, path, h.Started.Load(), h.MaxRunning.Load())
	if m := h.MaxRunning.Load(); m > maxStreams {
		t.Errorf("%d handlers ran at once, more than the %d concurrent streams allowed", m, maxStreams)
	}
	if !serial && sent == pairs && h.Started.Load() == int64(pairs) {
		t.Errorf("the server ran a handler for each of the %d reset streams and never pushed back", pairs)
	}
	h.WaitIdle(t)
}

// The reset floods' frames: each makes a server answer RST_STREAM. i
// counts the frames of a flood.
var (
	// SelfDependentPriority is PRIORITY making stream 1 depend on itself.
	SelfDependentPriority = func(b []byte, _ int) []byte {
		return appendFrame(b, http2.FramePriority, 0, 1, 0, 0, 0, 1, 15)
	}
	// ZeroWindowUpdate is WINDOW_UPDATE with increment 0 on stream 1,
	// which must be open (OpenStream1): on an idle stream the first such
	// frame is already a connection error (RFC 9113 §5.1).
	ZeroWindowUpdate = func(b []byte, _ int) []byte {
		return appendFrame(b, http2.FrameWindowUpdate, 0, 1, 0, 0, 0, 0)
	}
	// EmptyDataOnStream1 is an empty DATA frame on stream 1, opened by
	// OpenStream1 and closed once its answer is sent.
	EmptyDataOnStream1 = func(b []byte, _ int) []byte {
		return appendFrame(b, http2.FrameData, 0, 1)
	}
	// HeadersWithoutPath is HEADERS on stream 2i+1 with :method GET and
	// :scheme http from the static table, and no :path.
	HeadersWithoutPath = func(b []byte, i int) []byte {
		return appendFrame(b, http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, uint32(2*i+1), 0x82, 0x86)
	}
)

// appendFrame appends a frame of type typ with the payload.
func appendFrame(b []byte, typ http2.FrameType, flags http2.Flags, id uint32, payload ...byte) []byte {
	n := len(payload)
	b = append(b, byte(n>>16), byte(n>>8), byte(n), byte(typ), byte(flags), byte(id>>24)&0x7f, byte(id>>16), byte(id>>8), byte(id))
	return append(b, payload...)
}

// OpenStream1 opens stream 1 with a whole GET /, answered and closed while
// a flood that follows runs.
func (a *Attacker) OpenStream1() {
	a.T.Helper()
	err := a.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: a.RequestBlock("/"), EndStream: true, EndHeaders: true})
	if err != nil {
		a.T.Fatal(err)
	}
}

// ResetFlood writes frames frames made by frame, in batches of batch,
// without reading, then probes the connection with a PING, and reads what
// the server sent up to the PING's answer or the end of the connection.
// It fails a.T if the live heap grew by more than heapLimit over before
// (measured when a write has made no progress for stall, the server
// holding what it holds then, and when the writes end; the larger
// counts), if the server answered the probe (it took the whole flood), if
// it did not end the connection, or if it ended it with a GOAWAY other
// than ENHANCE_YOUR_CALM.
func (a *Attacker) ResetFlood(before, heapLimit int64, frames, batch int, stall time.Duration, frame func(b []byte, i int) []byte) {
	t := a.T
	t.Helper()
	// The client writes the flood and never reads until the writes end:
	// all sent, or an error (the server closed the connection, or one
	// write made no progress for AttackBound). A client that read as soon
	// as a write stalled would empty the server's output, and a server
	// only slow to read (-race on a loaded machine) would then answer the
	// rest of the flood to a reading client, as it should, instead of
	// ending it.
	var err error
	var sent atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		var b []byte
		for err == nil && sent.Load() < int64(frames) {
			b = b[:0]
			for i := range batch {
				b = frame(b, int(sent.Load())+i)
			}
			// The bound is on a write that makes no progress, not on the
			// flood: a server reading slowly (-race, TLS, a loaded
			// machine) may take longer than AttackBound in all.
			_ = a.Conn.SetWriteDeadline(time.Now().Add(AttackBound))
			if _, err = a.Conn.Write(b); err == nil {
				sent.Add(int64(batch))
			}
		}
	}()
	grown := int64(math.MinInt64)
	for last, stalled := sent.Load(), false; ; {
		select {
		case <-done:
		case <-time.After(stall):
			if n := sent.Load(); n != last {
				last, stalled = n, false
			} else if !stalled {
				stalled = true
				grown = max(grown, LiveHeap()-before)
			}
			continue
		}
		break
	}
	grown = max(grown, LiveHeap()-before)
	if grown > heapLimit {
		t.Errorf("the server's live heap grew by %d MiB during the flood (limit %d MiB): answers are piling up",
			grown>>20, heapLimit>>20)
	}
	if err == nil {
		// Every frame went in: ask whether the server is still there.
		err = a.Fr.WritePing(false, [8]byte{'p', 'r', 'o', 'b', 'e'})
	}
	_ = a.Conn.SetDeadline(time.Now().Add(AttackBound))
	var rsts int
	var probed bool
	var goAway *http2.GoAwayFrame
	var rerr error
	for !probed && rerr == nil {
		var f http2.Frame
		f, rerr = a.Fr.ReadFrame()
		switch f := f.(type) {
		case *http2.RSTStreamFrame:
			rsts++
		case *http2.PingFrame:
			probed = f.IsAck() && string(f.Data[:5]) == "probe"
		case *http2.GoAwayFrame:
			goAway = &http2.GoAwayFrame{ErrCode: f.ErrCode}
		}
	}
	t.Logf("sent %d frames without reading (write error: %v); live heap grew %d KiB; then read %d RST_STREAM, GOAWAY %v, probe answered %v, end %v",
		sent.Load(), err, grown>>10, rsts, goAway != nil, probed, rerr)
	if probed {
		t.Errorf("the server took all %d frames and answered the PING after them: it never ended the flood", sent.Load())
	}
	var ne net.Error
	if errors.As(rerr, &ne) && ne.Timeout() {
		t.Errorf("the server did not end the connection")
	}
	if goAway != nil && goAway.ErrCode != http2.ErrCodeEnhanceYourCalm {
		t.Errorf("GOAWAY(%v), want ENHANCE_YOUR_CALM", goAway.ErrCode)
	}
}
