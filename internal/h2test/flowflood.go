package h2test

// The flow-control floods, shared by internal/h2's tests (the engine
// alone) and the root package's (a riptide.Server, each flood starting on
// a parked connection): DATA beyond the windows the server granted, and
// WINDOW_UPDATE floods, valid and then overflowing, from a client that
// never reads while it floods. The server must grant the windows the
// caller names, and hold requests for HoldPath open (reading no body)
// until the test is done with them.

import (
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// HoldPath is the route whose handler holds its stream open, reading no
// body, while a flow-control flood runs.
const HoldPath = "/hold"

// A Refusal is the first RST_STREAM or GOAWAY a server sent.
type Refusal struct {
	Frame  string // "RST_STREAM", "GOAWAY", or "" for none
	Stream uint32 // RST_STREAM's stream
	Code   http2.ErrCode
	Acked  bool  // the PING was acknowledged (after the refusal, if any)
	EndErr error // the read error that ended the connection, if it ended
}

func (r Refusal) String() string {
	s := "no RST_STREAM or GOAWAY"
	if r.Frame != "" {
		s = fmt.Sprintf("%s(stream %d, %v)", r.Frame, r.Stream, r.Code)
	}
	if r.Acked {
		s += ", then the PING ACK"
	}
	if r.EndErr != nil {
		s += ", then the end: " + r.EndErr.Error()
	}
	return s
}

// CheckWindows reads the server's preface up to the acknowledgement of
// the client's SETTINGS and fails a.T unless the server granted the
// stream window (SETTINGS_INITIAL_WINDOW_SIZE) and the connection window
// (the initial 65,535 plus its WINDOW_UPDATEs) given, which the floods
// below rely on.
func (a *Attacker) CheckWindows(stream, conn int64) {
	a.T.Helper()
	s, c := int64(65535), int64(65535)
	for acked := false; !acked; {
		f, err := a.Fr.ReadFrame()
		if err != nil {
			a.T.Fatalf("reading the server's preface: %v", err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			acked = f.IsAck()
			if v, ok := f.Value(http2.SettingInitialWindowSize); ok && !acked {
				s = int64(v)
			}
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 {
				c += int64(f.Increment)
			}
		}
	}
	if s != stream || c != conn {
		a.T.Fatalf("server granted stream window %d and connection window %d, want %d and %d", s, c, stream, conn)
	}
}

// RefusalBefore reads frames until the server acknowledges the PING with
// data ping (or the connection ends) and returns the first refusal seen
// before it. A server handles frames in order, so a refusal of a frame
// sent before that PING comes before its ACK.
func (a *Attacker) RefusalBefore(ping [8]byte) Refusal {
	_ = a.Conn.SetReadDeadline(time.Now().Add(AttackBound))
	var r Refusal
	for {
		f, err := a.Fr.ReadFrame()
		if err != nil {
			r.EndErr = err
			return r
		}
		switch f := f.(type) {
		case *http2.RSTStreamFrame:
			if r.Frame == "" {
				r.Frame, r.Stream, r.Code = "RST_STREAM", f.StreamID, f.ErrCode
			}
		case *http2.GoAwayFrame:
			if r.Frame == "" {
				r.Frame, r.Code = "GOAWAY", f.ErrCode
			}
		case *http2.PingFrame:
			if f.IsAck() && f.Data == ping {
				r.Acked = true
				return r
			}
		}
	}
}

// floodWrite runs write until it fails, total bytes are sent, or one call
// stays blocked for stall (the server stopped reading), and says how the
// flood ended.
func (a *Attacker) floodWrite(total, frameBytes int, stall time.Duration, write func() error) (sent int, how string) {
	var err error
	for sent < total {
		_ = a.Conn.SetWriteDeadline(time.Now().Add(stall))
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
	_ = a.Conn.SetWriteDeadline(time.Now().Add(AttackBound))
	return sent, how
}

// checkHeap fails t if the live heap grew past limit.
func checkHeap(t testing.TB, grown, limit int64) {
	t.Helper()
	if grown > limit {
		t.Errorf("the server's live heap grew by %d KiB during the flood (limit %d KiB)", grown>>10, limit>>10)
	}
}

// DataBeyondStreamWindow sends DATA on a HoldPath stream up to the stream
// window the server granted, then one frame beyond it and a PING, then
// keeps sending DATA on the stream (total bytes at most), never reading,
// until a write fails or stalls for stall. RFC 9113 §6.9.1: a frame
// beyond the window is a flow-control error. It fails a.T unless the
// server refused it, with RST_STREAM(FLOW_CONTROL_ERROR) on that stream
// or GOAWAY(FLOW_CONTROL_ERROR), before it acknowledged the PING (it must
// not take the frame and refuse only later), or if the live heap grew by
// more than heapLimit during the flood.
func (a *Attacker) DataBeyondStreamWindow(window, total int, stall time.Duration, heapLimit int64) {
	t := a.T
	t.Helper()
	heap0 := LiveHeap()
	frame := make([]byte, 16<<10)
	ping := [8]byte{'s', 't', 'r', 'e', 'a', 'm'}
	err := a.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: a.RequestBlock(HoldPath), EndHeaders: true})
	for sent := 0; err == nil && sent < window; sent += len(frame) {
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
	sent, how := a.floodWrite(total, len(frame), stall, func() error { return a.Fr.WriteData(1, false, frame) })
	grown := LiveHeap() - heap0
	r := a.RefusalBefore(ping)
	t.Logf("window %d KiB, then %d KiB more DATA on the stream without reading; %s; server: %v; live heap grew %d KiB",
		window>>10, sent>>10, how, r, grown>>10)
	if r.Code != http2.ErrCodeFlowControl || r.Frame == "RST_STREAM" && r.Stream != 1 {
		t.Errorf("DATA beyond the stream window: server sent %v, want RST_STREAM(stream 1, FLOW_CONTROL_ERROR) or GOAWAY(FLOW_CONTROL_ERROR) before the PING ACK", r)
	}
	checkHeap(t, grown, heapLimit)
}

// DataBeyondConnWindow fills HoldPath streams each up to the stream window
// until the connection window the server granted is used up (the
// handlers read nothing, so nothing is granted back), then sends one
// frame on a fresh stream, within its stream window but beyond the
// connection's, and a PING, then keeps opening streams and filling them
// (total bytes at most), never reading. RFC 9113 §6.9.1 and §5.4.1: a
// connection error. It fails a.T unless the server sent
// GOAWAY(FLOW_CONTROL_ERROR) before it acknowledged the PING, or if the
// live heap grew by more than heapLimit during the flood.
func (a *Attacker) DataBeyondConnWindow(streamWindow, connWindow, total int, stall time.Duration, heapLimit int64) {
	t := a.T
	t.Helper()
	heap0 := LiveHeap()
	frame := make([]byte, 16<<10)
	ping := [8]byte{'c', 'o', 'n', 'n'}
	block := a.RequestBlock(HoldPath)
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
	for range connWindow / streamWindow {
		if err := fill(streamWindow); err != nil {
			t.Fatalf("writing up to the window: %v", err)
		}
	}
	err := fill(len(frame)) // beyond the connection window
	if err == nil {
		err = a.Fr.WritePing(false, ping)
	}
	if err != nil {
		t.Fatalf("writing beyond the window: %v", err)
	}
	sent, how := a.floodWrite(total, streamWindow, stall, func() error { return fill(streamWindow) })
	grown := LiveHeap() - heap0
	r := a.RefusalBefore(ping)
	t.Logf("window %d KiB, then %d KiB more DATA on fresh streams without reading; %s; server: %v; live heap grew %d KiB",
		connWindow>>10, sent>>10, how, r, grown>>10)
	if r.Frame != "GOAWAY" || r.Code != http2.ErrCodeFlowControl {
		t.Errorf("DATA beyond the connection window: server sent %v, want GOAWAY(FLOW_CONTROL_ERROR) before the PING ACK", r)
	}
	checkHeap(t, grown, heapLimit)
}

// WindowUpdateFlood opens a HoldPath stream, then sends WINDOW_UPDATE
// frames with increment 1 on the connection and on the stream,
// alternately (frames of them, the windows never overflow), never
// reading; then one that overflows the stream's send window and a PING,
// then one that overflows the connection's and another PING. It fails
// a.T if the valid flood was refused or grew the live heap by more than
// heapLimit (nothing is answered or queued per frame), and unless the
// server answered, as RFC 9113 §6.9.1 asks, RST_STREAM(FLOW_CONTROL_ERROR)
// to the stream's overflow and GOAWAY(FLOW_CONTROL_ERROR) to the
// connection's, each before the PING that follows it is acknowledged.
func (a *Attacker) WindowUpdateFlood(frames int, stall time.Duration, heapLimit int64) {
	t := a.T
	t.Helper()
	heap0 := LiveHeap()
	if err := a.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: a.RequestBlock(HoldPath), EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	n := 0
	sent, how := a.floodWrite(frames, 1, stall, func() error {
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
	r := a.RefusalBefore(validPing)
	grown := LiveHeap() - heap0
	t.Logf("sent %d WINDOW_UPDATE(+1) frames without reading; %s; server: %v; live heap grew %d KiB", sent, how, r, grown>>10)
	if r.Frame != "" || !r.Acked {
		t.Fatalf("valid WINDOW_UPDATEs: server sent %v, want only the PING ACK", r)
	}
	checkHeap(t, grown, heapLimit)

	r = a.overflowWindow(1, streamPing)
	t.Logf("stream window overflow: %v", r)
	if r.Frame != "RST_STREAM" || r.Stream != 1 || r.Code != http2.ErrCodeFlowControl || !r.Acked {
		t.Errorf("WINDOW_UPDATE overflowing the stream window: server sent %v, want RST_STREAM(stream 1, FLOW_CONTROL_ERROR), then the PING ACK", r)
	}
	r = a.overflowWindow(0, connPing)
	t.Logf("connection window overflow: %v", r)
	if r.Frame != "GOAWAY" || r.Code != http2.ErrCodeFlowControl {
		t.Errorf("WINDOW_UPDATE overflowing the connection window: server sent %v, want GOAWAY(FLOW_CONTROL_ERROR) before the PING ACK", r)
	}
}

// overflowWindow sends a WINDOW_UPDATE with the largest increment on
// stream id (0: the connection), which overflows any send window but a
// zero one, and a PING, and returns the refusal seen before the PING's
// ACK.
func (a *Attacker) overflowWindow(id uint32, ping [8]byte) Refusal {
	a.T.Helper()
	err := a.Fr.WriteWindowUpdate(id, 1<<31-1)
	if err == nil {
		err = a.Fr.WritePing(false, ping)
	}
	if err != nil {
		a.T.Fatal(err)
	}
	return a.RefusalBefore(ping)
}
