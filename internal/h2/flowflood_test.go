package h2

// Flow-control floods: DATA beyond the windows the engine granted and
// WINDOW_UPDATE floods, valid and then overflowing, from a client that
// never reads while it floods; h2c and TLS. They measure the live heap, so
// they run alone (not parallel).

import (
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/h2test"
)

// The receive windows the flow-flood servers grant: the connection's is
// four streams' worth, so that a stream's window can be exceeded while the
// connection's is not, and the other way round.
const (
	floodStreamWindow = 64 << 10
	floodConnWindow   = 4 * floodStreamWindow
)

// dataFloodBytes is how much DATA a flood sends at most (16 KiB frames).
const dataFloodBytes = 16 << 20

// windowUpdateFloodFrames is how many valid WINDOW_UPDATE frames
// TestWindowUpdateFloodBoundedOverflowRefused sends.
const windowUpdateFloodFrames = 200_000

// flowFloodHeapLimit bounds the live heap growth of a flow-control flood:
// the server may hold at most its connection window of request body.
const flowFloodHeapLimit = 8 << 20

// forEachFlowFlood runs flood against the engine on its workers granting
// the windows above, over h2c and TLS: on a fresh attacker whose windows
// it checked first; the engine must serve a fresh connection after.
// Requests for h2test.HoldPath run a handler that holds its stream open,
// reading no body, until the subtest ends; every other path answers
// helloBody (what assertServes asks for).
func forEachFlowFlood(t *testing.T, flood func(a *attacker)) {
	for _, useTLS := range []bool{false, true} {
		release := make(chan struct{})
		h := handlerFunc(func(st *Stream) {
			if st.Path() == h2test.HoldPath {
				select {
				case <-release:
				case <-time.After(attackBound):
				}
				return
			}
			respond(st, 200, helloBody)
		})
		in := startTarget(t, targets[0], useTLS, h, func(c *Config) {
			c.MaxReceiveBufferPerStream, c.MaxReceiveBufferPerConnection = floodStreamWindow, floodConnWindow
		})
		t.Run(in.mode(), func(t *testing.T) {
			defer close(release)
			a := newAttacker(t, in, 4096)
			a.CheckWindows(floodStreamWindow, floodConnWindow)
			flood(a)
			h2test.CloseRaw(a.Conn)
			assertServes(t, in)
		})
	}
}

// TestDataBeyondStreamWindowRefusedFloodBounded sends DATA on one stream
// up to the stream window the server granted, then one frame beyond it and
// a PING, then keeps sending DATA on the stream (16 MiB at most), never
// reading (h2test.Attacker.DataBeyondStreamWindow). RFC 9113 §6.9.1: a
// frame beyond the window is a flow-control error; the server must refuse
// it, with RST_STREAM(FLOW_CONTROL_ERROR) on that stream or
// GOAWAY(FLOW_CONTROL_ERROR), before it acknowledges the PING (it must not
// take the frame and refuse only later), must not hold the flood, and
// must keep serving.
func TestDataBeyondStreamWindowRefusedFloodBounded(t *testing.T) {
	forEachFlowFlood(t, func(a *attacker) {
		a.DataBeyondStreamWindow(floodStreamWindow, dataFloodBytes, stallWait, flowFloodHeapLimit)
	})
}

// TestDataBeyondConnWindowGoAwayFloodBounded fills streams each up to the
// stream window until the connection window the server granted is used up
// (the handlers read nothing, so nothing is granted back), then sends one
// frame on a fresh stream, within its stream window but beyond the
// connection's, and a PING, then keeps opening streams and filling them
// (16 MiB at most), never reading (h2test.Attacker.DataBeyondConnWindow).
// RFC 9113 §6.9.1 and §5.4.1: a connection error; the server must send
// GOAWAY(FLOW_CONTROL_ERROR) before it acknowledges the PING, must not
// hold the flood, and must keep serving.
func TestDataBeyondConnWindowGoAwayFloodBounded(t *testing.T) {
	forEachFlowFlood(t, func(a *attacker) {
		a.DataBeyondConnWindow(floodStreamWindow, floodConnWindow, dataFloodBytes, stallWait, flowFloodHeapLimit)
	})
}

// TestWindowUpdateFloodBoundedOverflowRefused opens a stream whose handler
// holds it open, then sends WINDOW_UPDATE frames with increment 1 on the
// connection and on the stream, alternately (200,000 frames, the windows
// never overflow), never reading; then one that overflows the stream's
// send window and a PING, then one that overflows the connection's and
// another PING (h2test.Attacker.WindowUpdateFlood). The valid flood must
// leave the live heap bounded (nothing is answered or queued per frame);
// RFC 9113 §6.9.1 asks for RST_STREAM(FLOW_CONTROL_ERROR) on the stream's
// overflow and GOAWAY(FLOW_CONTROL_ERROR) on the connection's, each before
// the PING that follows it is acknowledged.
func TestWindowUpdateFloodBoundedOverflowRefused(t *testing.T) {
	forEachFlowFlood(t, func(a *attacker) {
		a.WindowUpdateFlood(windowUpdateFloodFrames, stallWait, flowFloodHeapLimit)
	})
}
