package riptide_test

// Flow-control floods over HTTP/2 (issue 23, "what held"): DATA beyond the
// windows the server granted and WINDOW_UPDATE floods, valid and then
// overflowing, from a client that never reads while it floods. Both doors,
// h2c and TLS.

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/riptide-http/riptide"
	"golang.org/x/net/http2"
)

// The receive windows the flow-flood servers grant: the connection's is
// four streams' worth, so that a stream's window can be exceeded while the
// connection's is not, and the other way round.
const (
	h2FloodStreamWindow = 64 << 10
	h2FloodConnWindow   = 4 * h2FloodStreamWindow
)

// h2DataFloodBytes is how much DATA a flood sends at most (16 KiB frames).
const h2DataFloodBytes = 16 << 20

// h2FlowFloodHeapLimit bounds the live heap growth of a flow-control flood:
// the server may hold at most its connection window of request body.
const h2FlowFloodHeapLimit = 8 << 20

// forEachFlowFlood runs f against a riptide server granting the windows
// above, on both doors, over h2c and TLS. Requests for /hold run a handler
// that holds its stream open, reading no body, until the subtest ends;
// every other path answers h2HelloBody (what assertServes asks for).
func forEachFlowFlood(t *testing.T, f func(t *testing.T, in *h2Instance)) {
	for _, door := range []string{"native", "compat"} {
		for _, useTLS := range []bool{false, true} {
			release := make(chan struct{})
			hold := func() {
				select {
				case <-release:
				case <-time.After(h2AttackBound):
				}
			}
			var h riptide.Handler = riptide.HandlerFunc(func(c *riptide.Ctx) {
				if string(c.Path()) == "/hold" {
					hold()
					return
				}
				c.WriteString(h2HelloBody)
			})
			if door == "compat" {
				h = riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/hold" {
						hold()
						return
					}
					io.WriteString(w, h2HelloBody)
				}))
			}
			in := startH2(t, h2Target{name: door, serve: serveFlowFlood(h)}, useTLS)
			t.Run(door+"/"+in.mode(), func(t *testing.T) {
				defer close(release)
				f(t, in)
			})
		}
	}
}

// serveFlowFlood serves h with the flow-flood windows (an h2Target serve).
func serveFlowFlood(h riptide.Handler) func(testing.TB, *tls.Config, *h2App) string {
	return func(t testing.TB, tlsConf *tls.Config, _ *h2App) string {
		srv := &riptide.Server{
			Handler:   h,
			TLSConfig: tlsConf,
			HTTP2: &riptide.HTTP2Config{H2C: true, MaxConcurrentStreams: h2TestMaxStreams,
				MaxReceiveBufferPerStream: h2FloodStreamWindow, MaxReceiveBufferPerConnection: h2FloodConnWindow},
			Logger: slog.New(slog.DiscardHandler),
		}
		return riptide.ServeTest(t, srv, riptide.TestServeOptions{TLS: tlsConf != nil}).Addr
	}
}

// windows reads the server's preface up to the acknowledgement of the
// client's SETTINGS and returns the receive windows it granted: the
// stream window (SETTINGS_INITIAL_WINDOW_SIZE) and the connection window
// (the initial 65,535 plus its WINDOW_UPDATEs).
func (a *h2Attacker) windows() (stream, conn int64) {
	a.t.Helper()
	stream, conn = 65535, 65535
	for {
		f, err := a.fr.ReadFrame()
		if err != nil {
			a.t.Fatalf("reading the server's preface: %v", err)
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

// h2Refusal is the first RST_STREAM or GOAWAY a server sent.
type h2Refusal struct {
	frame  string // "RST_STREAM", "GOAWAY", or "" for none
	stream uint32 // RST_STREAM's stream
	code   http2.ErrCode
	acked  bool  // the PING was acknowledged (after the refusal, if any)
	endErr error // the read error that ended the connection, if it ended
}

func (r h2Refusal) String() string {
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
func (a *h2Attacker) refusalBefore(ping [8]byte) h2Refusal {
	_ = a.conn.SetReadDeadline(time.Now().Add(h2AttackBound))
	var r h2Refusal
	for {
		f, err := a.fr.ReadFrame()
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
// stays blocked for h2StallWait (the server stopped reading), and says how
// the flood ended.
func (a *h2Attacker) floodWrite(total int, frameBytes int, write func() error) (sent int, how string) {
	var err error
	for sent < total {
		_ = a.conn.SetWriteDeadline(time.Now().Add(h2StallWait))
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
	_ = a.conn.SetWriteDeadline(time.Now().Add(h2AttackBound))
	return sent, how
}

// overflowWindow sends a WINDOW_UPDATE with the largest increment on stream
// id (0: the connection), which overflows any send window but a zero one,
// and a PING, and returns the refusal seen before the PING's ACK.
func (a *h2Attacker) overflowWindow(id uint32, ping [8]byte) h2Refusal {
	a.t.Helper()
	err := a.fr.WriteWindowUpdate(id, 1<<31-1)
	if err == nil {
		err = a.fr.WritePing(false, ping)
	}
	if err != nil {
		a.t.Fatal(err)
	}
	return a.refusalBefore(ping)
}

// checkWindows fails the test unless the server granted the configured
// windows, which the floods below rely on.
func checkWindows(t *testing.T, a *h2Attacker) {
	t.Helper()
	if s, c := a.windows(); s != h2FloodStreamWindow || c != h2FloodConnWindow {
		t.Fatalf("server granted stream window %d and connection window %d, want %d and %d",
			s, c, h2FloodStreamWindow, h2FloodConnWindow)
	}
}

// checkFloodHeap fails the test if the live heap grew past the limit.
func checkFloodHeap(t *testing.T, grown int64) {
	t.Helper()
	if grown > h2FlowFloodHeapLimit {
		t.Errorf("the server's live heap grew by %d KiB during the flood (limit %d KiB)", grown>>10, h2FlowFloodHeapLimit>>10)
	}
}

// TestH2DataFloodBeyondStreamWindow sends DATA on one stream up to the
// stream window the server granted, then one frame beyond it and a PING,
// then keeps sending DATA on the stream (16 MiB at most), never reading.
// RFC 9113 §6.9.1: a frame beyond the window is a flow-control error; the
// server must refuse it, with RST_STREAM(FLOW_CONTROL_ERROR) on that stream
// or GOAWAY(FLOW_CONTROL_ERROR), before it acknowledges the PING (it must
// not take the frame and refuse only later), must not hold the flood, and
// must keep serving.
func TestH2DataFloodBeyondStreamWindow(t *testing.T) {
	if riptide.InOwnProcess(t) {
		return // ran in a process of its own
	}
	forEachFlowFlood(t, func(t *testing.T, in *h2Instance) {
		a := newH2Attacker(t, in, 4096)
		checkWindows(t, a)
		heap0 := liveHeap()
		frame := make([]byte, 16<<10)
		ping := [8]byte{'s', 't', 'r', 'e', 'a', 'm'}
		err := a.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: a.requestBlock("/hold"), EndHeaders: true})
		for sent := 0; err == nil && sent < h2FloodStreamWindow; sent += len(frame) {
			err = a.fr.WriteData(1, false, frame)
		}
		if err == nil {
			err = a.fr.WriteData(1, false, frame) // beyond the stream window
		}
		if err == nil {
			err = a.fr.WritePing(false, ping)
		}
		if err != nil {
			t.Fatalf("writing up to the window: %v", err)
		}
		sent, how := a.floodWrite(h2DataFloodBytes, len(frame), func() error { return a.fr.WriteData(1, false, frame) })
		grown := liveHeap() - heap0
		r := a.refusalBefore(ping)
		t.Logf("window %d KiB, then %d KiB more DATA on the stream without reading; %s; server: %v; live heap grew %d KiB",
			h2FloodStreamWindow>>10, sent>>10, how, r, grown>>10)
		if r.code != http2.ErrCodeFlowControl || r.frame == "RST_STREAM" && r.stream != 1 {
			t.Errorf("DATA beyond the stream window: server sent %v, want RST_STREAM(stream 1, FLOW_CONTROL_ERROR) or GOAWAY(FLOW_CONTROL_ERROR) before the PING ACK", r)
		}
		checkFloodHeap(t, grown)
		closeRaw(a.conn)
		assertServes(t, in)
	})
}

// TestH2DataFloodBeyondConnWindow fills streams each up to the stream
// window until the connection window the server granted is used up (the
// handlers read nothing, so nothing is granted back), then sends one frame
// on a fresh stream, within its stream window but beyond the connection's,
// and a PING, then keeps opening streams and filling them (16 MiB at most),
// never reading. RFC 9113 §6.9.1 and §5.4.1: a connection error; the
// server must send GOAWAY(FLOW_CONTROL_ERROR) before it acknowledges the
// PING, must not hold the flood, and must keep serving.
func TestH2DataFloodBeyondConnWindow(t *testing.T) {
	if riptide.InOwnProcess(t) {
		return // ran in a process of its own
	}
	forEachFlowFlood(t, func(t *testing.T, in *h2Instance) {
		a := newH2Attacker(t, in, 4096)
		checkWindows(t, a)
		heap0 := liveHeap()
		frame := make([]byte, 16<<10)
		ping := [8]byte{'c', 'o', 'n', 'n'}
		block := a.requestBlock("/hold")
		id := uint32(1)
		// fill opens stream id and sends up to n bytes of DATA on it.
		fill := func(n int) error {
			err := a.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndHeaders: true})
			for sent := 0; err == nil && sent < n; sent += len(frame) {
				err = a.fr.WriteData(id, false, frame)
			}
			id += 2
			return err
		}
		var err error
		for range h2FloodConnWindow / h2FloodStreamWindow {
			if err = fill(h2FloodStreamWindow); err != nil {
				t.Fatalf("writing up to the window: %v", err)
			}
		}
		if err = fill(len(frame)); err == nil { // beyond the connection window
			err = a.fr.WritePing(false, ping)
		}
		if err != nil {
			t.Fatalf("writing beyond the window: %v", err)
		}
		sent, how := a.floodWrite(h2DataFloodBytes, h2FloodStreamWindow, func() error { return fill(h2FloodStreamWindow) })
		grown := liveHeap() - heap0
		r := a.refusalBefore(ping)
		t.Logf("window %d KiB, then %d KiB more DATA on fresh streams without reading; %s; server: %v; live heap grew %d KiB",
			h2FloodConnWindow>>10, sent>>10, how, r, grown>>10)
		if r.frame != "GOAWAY" || r.code != http2.ErrCodeFlowControl {
			t.Errorf("DATA beyond the connection window: server sent %v, want GOAWAY(FLOW_CONTROL_ERROR) before the PING ACK", r)
		}
		checkFloodHeap(t, grown)
		closeRaw(a.conn)
		assertServes(t, in)
	})
}

// TestH2WindowUpdateFlood opens a stream whose handler holds it open, then
// sends WINDOW_UPDATE frames with increment 1 on the connection and on the
// stream, alternately (200,000 frames, the windows never overflow), never
// reading; then one that overflows the stream's send window and a PING,
// then one that overflows the connection's and another PING. The valid
// flood must leave the live heap bounded (nothing is answered or queued
// per frame); RFC 9113 §6.9.1 asks for RST_STREAM(FLOW_CONTROL_ERROR) on
// the stream's overflow and GOAWAY(FLOW_CONTROL_ERROR) on the connection's,
// each before the PING that follows it is acknowledged.
func TestH2WindowUpdateFlood(t *testing.T) {
	if riptide.InOwnProcess(t) {
		return // ran in a process of its own
	}
	const frames = 200_000
	forEachFlowFlood(t, func(t *testing.T, in *h2Instance) {
		a := newH2Attacker(t, in, 4096)
		checkWindows(t, a)
		heap0 := liveHeap()
		if err := a.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: a.requestBlock("/hold"), EndStream: true, EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
		n := 0
		sent, how := a.floodWrite(frames, 1, func() error {
			n++
			return a.fr.WriteWindowUpdate(uint32(n&1), 1) // stream 0 and stream 1 in turn
		})
		if sent != frames {
			t.Fatalf("the server refused valid WINDOW_UPDATEs after %d frames: %s", sent, how)
		}
		// Once this PING is answered, the server has handled the flood.
		validPing, streamPing, connPing := [8]byte{'w', 'v'}, [8]byte{'w', 's'}, [8]byte{'w', 'c'}
		if err := a.fr.WritePing(false, validPing); err != nil {
			t.Fatal(err)
		}
		r := a.refusalBefore(validPing)
		grown := liveHeap() - heap0
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
		closeRaw(a.conn)
		assertServes(t, in)
	})
}
