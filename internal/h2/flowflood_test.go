package h2

// Flow-control floods: DATA beyond the windows the engine granted and
// WINDOW_UPDATE floods, valid and then overflowing, from a client that
// never reads while it floods; h2c and TLS. They measure the live heap, so
// they run alone (not parallel).

import (
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/h2test"
	"golang.org/x/net/http2"
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

// flowFloodHeapLimit bounds the live heap growth of a flow-control flood:
// the server may hold at most its connection window of request body.
const flowFloodHeapLimit = 8 << 20

// forEachFlowFlood runs f against the engine on its workers granting the
// windows above, over h2c and TLS. Requests for /hold run a handler that
// holds its stream open, reading no body, until the subtest ends; every
// other path answers helloBody (what assertServes asks for).
func forEachFlowFlood(t *testing.T, f func(t *testing.T, in *instance)) {
	for _, useTLS := range []bool{false, true} {
		release := make(chan struct{})
		h := handlerFunc(func(st *Stream) {
			if st.Path() == "/hold" {
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
			f(t, in)
		})
	}
}

// windows reads the server's preface up to the acknowledgement of the
// client's SETTINGS and returns the receive windows it granted: the
// stream window (SETTINGS_INITIAL_WINDOW_SIZE) and the connection window
// (the initial 65,535 plus its WINDOW_UPDATEs).
func (a *attacker) windows() (stream, conn int64) {
	a.T.Helper()
	stream, conn = 65535, 65535
	for {
		f, err := a.Fr.ReadFrame()
		if err != nil {
			a.T.Fatalf("reading the server's preface: %v", err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if f.IsAck() {
				return stream, conn
			}
			if v, ok := f.Value(http2.SettingInitialWindowSize); ok {
				stream = int64(v)
			}
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 {
				conn += int64(f.Increment)
			}
		}
	}
}

// refusal is the first RST_STREAM or GOAWAY a server sent.
type refusal struct {
	frame  string // "RST_STREAM", "GOAWAY", or "" for none
	stream uint32 // RST_STREAM's stream
	code   http2.ErrCode
	acked  bool  // the PING was acknowledged (after the refusal, if any)
	endErr error // the read error that ended the connection, if it ended
}

func (r refusal) String() string {
	s := "no RST_STREAM or GOAWAY"
	if r.frame != "" {
		s = fmt.Sprintf("%s(stream %d, %v)", r.frame, r.stream, r.code)
	}
	if r.acked {
		s += ", then the PING ACK"
	}
	if r.endErr != nil {
		s += ", then the end: " + r.endErr.Error()
	}
	return s
}

// refusalBefore reads frames until the server acknowledges the PING with
// data ping (or the connection ends) and returns the first refusal seen
// before it. The server handles frames in order, so a refusal of a frame
// sent before that PING comes before its ACK.
func (a *attacker) refusalBefore(ping [8]byte) refusal {
	_ = a.Conn.SetReadDeadline(time.Now().Add(attackBound))
	var r refusal
	for {
		f, err := a.Fr.ReadFrame()
		if err != nil {
			r.endErr = err
			return r
		}
		switch f := f.(type) {
		case *http2.RSTStreamFrame:
			if r.frame == "" {
				r.frame, r.stream, r.code = "RST_STREAM", f.StreamID, f.ErrCode
			}
		case *http2.GoAwayFrame:
			if r.frame == "" {
				r.frame, r.code = "GOAWAY", f.ErrCode
			}
		case *http2.PingFrame:
			if f.IsAck() && f.Data == ping {
				r.acked = true
				return r
			}
		}
	}
}

// floodWrite runs write until it fails, total bytes are sent, or one call
// stays blocked for stallWait (the server stopped reading), and says how
// the flood ended.
func (a *attacker) floodWrite(total int, frameBytes int, write func() error) (sent int, how string) {
	var err error
	for sent < total {
		_ = a.Conn.SetWriteDeadline(time.Now().Add(stallWait))
		if err = write(); err != nil {
			break
		}
		sent += frameBytes
	}
	var ne net.Error
	switch {
	case err == nil:
		how = "every frame was written (into kernel buffers, at least)"
	case errors.As(err, &ne) && ne.Timeout():
		how = "the server stopped reading (backpressure)"
	default:
		how = "the server closed the connection: " + err.Error()
	}
	_ = a.Conn.SetWriteDeadline(time.Now().Add(attackBound))
	return sent, how
}

// overflowWindow sends a WINDOW_UPDATE with the largest increment on stream
// id (0: the connection), which overflows any send window but a zero one,
// and a PING, and returns the refusal seen before the PING's ACK.
func (a *attacker) overflowWindow(id uint32, ping [8]byte) refusal {
	a.T.Helper()
	err := a.Fr.WriteWindowUpdate(id, 1<<31-1)
	if err == nil {
		err = a.Fr.WritePing(false, ping)
	}
	if err != nil {
		a.T.Fatal(err)
	}
	return a.refusalBefore(ping)
}

// checkWindows fails the test unless the server granted the configured
// windows, which the floods below rely on.
func checkWindows(t *testing.T, a *attacker) {
	t.Helper()
	if s, c := a.windows(); s != floodStreamWindow || c != floodConnWindow {
		t.Fatalf("server granted stream window %d and connection window %d, want %d and %d",
			s, c, floodStreamWindow, floodConnWindow)
	}
}

// checkFloodHeap fails the test if the live heap grew past the limit.
func checkFloodHeap(t *testing.T, grown int64) {
	t.Helper()
	if grown > flowFloodHeapLimit {
		t.Errorf("the server's live heap grew by %d KiB during the flood (limit %d KiB)", grown>>10, flowFloodHeapLimit>>10)
	}
}

// TestDataBeyondStreamWindowRefusedFloodBounded sends DATA on one stream up to the
// stream window the server granted, then one frame beyond it and a PING,
// then keeps sending DATA on the stream (16 MiB at most), never reading.
// RFC 9113 §6.9.1: a frame beyond the window is a flow-control error; the
// server must refuse it, with RST_STREAM(FLOW_CONTROL_ERROR) on that stream
// or GOAWAY(FLOW_CONTROL_ERROR), before it acknowledges the PING (it must
// not take the frame and refuse only later), must not hold the flood, and
// must keep serving.
func TestDataBeyondStreamWindowRefusedFloodBounded(t *testing.T) {
	forEachFlowFlood(t, func(t *testing.T, in *instance) {
		a := newAttacker(t, in, 4096)
		checkWindows(t, a)
		heap0 := h2test.LiveHeap()
		frame := make([]byte, 16<<10)
		ping := [8]byte{'s', 't', 'r', 'e', 'a', 'm'}
		err := a.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: a.RequestBlock("/hold"), EndHeaders: true})
		for sent := 0; err == nil && sent < floodStreamWindow; sent += len(frame) {
			err = a.Fr.WriteData(1, false, frame)
		}
		if err == nil {
			err = a.Fr.WriteData(1, false, frame) // beyond the stream window
		}
		if err == nil {
			err = a.Fr.WritePing(false, ping)
		}
		if err != nil {
			t.Fatalf("writing up to the window: %v", err)
		}
		sent, how := a.floodWrite(dataFloodBytes, len(frame), func() error { return a.Fr.WriteData(1, false, frame) })
		grown := h2test.LiveHeap() - heap0
		r := a.refusalBefore(ping)
		t.Logf("window %d KiB, then %d KiB more DATA on the stream without reading; %s; server: %v; live heap grew %d KiB",
			floodStreamWindow>>10, sent>>10, how, r, grown>>10)
		if r.code != http2.ErrCodeFlowControl || r.frame == "RST_STREAM" && r.stream != 1 {
			t.Errorf("DATA beyond the stream window: server sent %v, want RST_STREAM(stream 1, FLOW_CONTROL_ERROR) or GOAWAY(FLOW_CONTROL_ERROR) before the PING ACK", r)
		}
		checkFloodHeap(t, grown)
		h2test.CloseRaw(a.Conn)
		assertServes(t, in)
	})
}

// TestDataBeyondConnWindowGoAwayFloodBounded fills streams each up to the stream
// window until the connection window the server granted is used up (the
// handlers read nothing, so nothing is granted back), then sends one frame
// on a fresh stream, within its stream window but beyond the connection's,
// and a PING, then keeps opening streams and filling them (16 MiB at most),
// never reading. RFC 9113 §6.9.1 and §5.4.1: a connection error; the
// server must send GOAWAY(FLOW_CONTROL_ERROR) before it acknowledges the
// PING, must not hold the flood, and must keep serving.
func TestDataBeyondConnWindowGoAwayFloodBounded(t *testing.T) {
	forEachFlowFlood(t, func(t *testing.T, in *instance) {
		a := newAttacker(t, in, 4096)
		checkWindows(t, a)
		heap0 := h2test.LiveHeap()
		frame := make([]byte, 16<<10)
		ping := [8]byte{'c', 'o', 'n', 'n'}
		block := a.RequestBlock("/hold")
		id := uint32(1)
		// fill opens stream id and sends up to n bytes of DATA on it.
		fill := func(n int) error {
			err := a.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndHeaders: true})
			for sent := 0; err == nil && sent < n; sent += len(frame) {
				err = a.Fr.WriteData(id, false, frame)
			}
			id += 2
			return err
		}
		var err error
		for range floodConnWindow / floodStreamWindow {
			if err = fill(floodStreamWindow); err != nil {
				t.Fatalf("writing up to the window: %v", err)
			}
		}
		if err = fill(len(frame)); err == nil { // beyond the connection window
			err = a.Fr.WritePing(false, ping)
		}
		if err != nil {
			t.Fatalf("writing beyond the window: %v", err)
		}
		sent, how := a.floodWrite(dataFloodBytes, floodStreamWindow, func() error { return fill(floodStreamWindow) })
		grown := h2test.LiveHeap() - heap0
		r := a.refusalBefore(ping)
		t.Logf("window %d KiB, then %d KiB more DATA on fresh streams without reading; %s; server: %v; live heap grew %d KiB",
			floodConnWindow>>10, sent>>10, how, r, grown>>10)
		if r.frame != "GOAWAY" || r.code != http2.ErrCodeFlowControl {
			t.Errorf("DATA beyond the connection window: server sent %v, want GOAWAY(FLOW_CONTROL_ERROR) before the PING ACK", r)
		}
		checkFloodHeap(t, grown)
		h2test.CloseRaw(a.Conn)
		assertServes(t, in)
	})
}

// TestWindowUpdateFloodBoundedOverflowRefused opens a stream whose handler holds it open, then
// sends WINDOW_UPDATE frames with increment 1 on the connection and on the
// stream, alternately (200,000 frames, the windows never overflow), never
// reading; then one that overflows the stream's send window and a PING,
// then one that overflows the connection's and another PING. The valid
// flood must leave the live heap bounded (nothing is answered or queued
// per frame); RFC 9113 §6.9.1 asks for RST_STREAM(FLOW_CONTROL_ERROR) on
// the stream's overflow and GOAWAY(FLOW_CONTROL_ERROR) on the connection's,
// each before the PING that follows it is acknowledged.
func TestWindowUpdateFloodBoundedOverflowRefused(t *testing.T) {
	const frames = 200_000
	forEachFlowFlood(t, func(t *testing.T, in *instance) {
		a := newAttacker(t, in, 4096)
		checkWindows(t, a)
		heap0 := h2test.LiveHeap()
		if err := a.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: a.RequestBlock("/hold"), EndStream: true, EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
		n := 0
		sent, how := a.floodWrite(frames, 1, func() error {
			n++
			return a.Fr.WriteWindowUpdate(uint32(n&1), 1) // stream 0 and stream 1 in turn
		})
		if sent != frames {
			t.Fatalf("the server refused valid WINDOW_UPDATEs after %d frames: %s", sent, how)
		}
		// Once this PING is answered, the server has handled the flood.
		validPing, streamPing, connPing := [8]byte{'w', 'v'}, [8]byte{'w', 's'}, [8]byte{'w', 'c'}
		if err := a.Fr.WritePing(false, validPing); err != nil {
			t.Fatal(err)
		}
		r := a.refusalBefore(validPing)
		grown := h2test.LiveHeap() - heap0
		t.Logf("sent %d WINDOW_UPDATE(+1) frames without reading; %s; server: %v; live heap grew %d KiB", sent, how, r, grown>>10)
		if r.frame != "" || !r.acked {
			t.Fatalf("valid WINDOW_UPDATEs: server sent %v, want only the PING ACK", r)
		}
		checkFloodHeap(t, grown)

		r = a.overflowWindow(1, streamPing)
		t.Logf("stream window overflow: %v", r)
		if r.frame != "RST_STREAM" || r.stream != 1 || r.code != http2.ErrCodeFlowControl || !r.acked {
			t.Errorf("WINDOW_UPDATE overflowing the stream window: server sent %v, want RST_STREAM(stream 1, FLOW_CONTROL_ERROR), then the PING ACK", r)
		}
		r = a.overflowWindow(0, connPing)
		t.Logf("connection window overflow: %v", r)
		if r.frame != "GOAWAY" || r.code != http2.ErrCodeFlowControl {
			t.Errorf("WINDOW_UPDATE overflowing the connection window: server sent %v, want GOAWAY(FLOW_CONTROL_ERROR) before the PING ACK", r)
		}
		h2test.CloseRaw(a.Conn)
		assertServes(t, in)
	})
}
