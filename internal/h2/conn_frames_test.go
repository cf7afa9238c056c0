package h2

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"
)

// This file builds frames from raw bytes and numbers only, so that it
// also runs against the engine before it read frames itself.

// rawFrame returns one frame: its header (RFC 9113 §4.1) and payload.
func rawFrame(typ, flags byte, id uint32, payload ...byte) []byte {
	n := len(payload)
	b := []byte{byte(n >> 16), byte(n >> 8), byte(n), typ, flags, byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id)}
	return append(b, payload...)
}

// rawFrameN returns a frame whose payload is n zero bytes.
func rawFrameN(typ, flags byte, id uint32, n int) []byte {
	return rawFrame(typ, flags, id, make([]byte, n)...)
}

// rawSeq joins frames.
func rawSeq(frames ...[]byte) []byte { return bytes.Join(frames, nil) }

// nopHandler serves a stream by returning: the stream is reset.
type nopHandler struct{}

func (nopHandler) ServeStream(*Stream) {}

// connResult is what a client saw from the server.
type connResult struct {
	goAway  int64    // GOAWAY's error code; -1: none
	last    uint32   // GOAWAY's last stream ID
	resets  []uint64 // RST_STREAMs, as id<<32 | code
	pingAck []byte   // the payload of a PING ACK, if any
}

// serveRaw runs a connection that is sent the client preface, an empty
// SETTINGS, then frames, then a GOAWAY (so that a connection still going
// ends), and returns what the server sent until it closed.
func serveRaw(t *testing.T, frames []byte) connResult {
	t.Helper()
	srv, cli := net.Pipe()
	hc := NewConn(&Config{Handler: nopHandler{}}, srv, nil, nil, nil)
	served := make(chan struct{})
	go func() {
		defer close(served)
		hc.Serve(false, nil)
	}()
	go func() {
		wire := rawSeq([]byte(Preface), rawFrame(4, 0, 0), frames, rawFrameN(7, 0, 0, 8))
		_, _ = cli.Write(wire) // fails once the server hangs up
	}()
	_ = cli.SetReadDeadline(time.Now().Add(10 * time.Second))
	res := connResult{goAway: -1}
	for {
		var h [9]byte
		if _, err := io.ReadFull(cli, h[:]); err != nil {
			break
		}
		p := make([]byte, int(h[0])<<16|int(h[1])<<8|int(h[2]))
		if _, err := io.ReadFull(cli, p); err != nil {
			t.Fatalf("reading a frame's payload: %v", err)
		}
		id := uint64(h[5]&0x7f)<<24 | uint64(h[6])<<16 | uint64(h[7])<<8 | uint64(h[8])
		switch h[3] {
		case 7: // GOAWAY
			if res.goAway < 0 {
				res.goAway = int64(p[4])<<24 | int64(p[5])<<16 | int64(p[6])<<8 | int64(p[7])
				res.last = uint32(p[0]&0x7f)<<24 | uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3])
			}
		case 3: // RST_STREAM
			res.resets = append(res.resets, id<<32|uint64(p[0])<<24|uint64(p[1])<<16|uint64(p[2])<<8|uint64(p[3]))
		case 6: // PING
			if h[4]&1 != 0 {
				res.pingAck = p
			}
		}
	}
	cli.Close()
	<-served
	return res
}

// TestConnFrameErrors sends the server malformed frames, one kind per
// row, and checks its answer by RFC 9113 section: GOAWAY with the
// connection error's code, or RST_STREAM with the stream error's and the
// connection going on (its GOAWAY, after the client's, says NO_ERROR).
func TestConnFrameErrors(t *testing.T) {
	const (
		noError     = 0x0
		protocol    = 0x1
		flowControl = 0x3
		frameSize   = 0x6
	)
	// HEADERS of a GET / on stream 1 (HPACK static indexes), without
	// END_HEADERS.
	get := []byte{0x82, 0x86, 0x84, 0x41, 0x01, 'x'}
	for _, tc := range []struct {
		name   string
		frames []byte
		goAway int64    // the first GOAWAY's code
		resets []uint64 // id<<32 | code
	}{
		{"§4.2 frame over SETTINGS_MAX_FRAME_SIZE", rawFrameN(0, 0, 1, 16<<10+1), frameSize, nil},
		{"§5.5 unknown frame type ignored", rawFrameN(0xfa, 0xff, 3, 10), noError, nil},
		{"§6.1 DATA on stream 0", rawFrameN(0, 0, 0, 4), protocol, nil},
		{"§6.1 DATA padding as long as the payload", rawFrame(0, 0x8, 1, 3, 0, 0), protocol, nil},
		{"§6.1 §4.2 PADDED DATA without Pad Length", rawFrame(0, 0x8, 1), frameSize, nil},
		{"§6.2 HEADERS on stream 0", rawFrame(1, 0x4, 0, get...), protocol, nil},
		{"§6.2 HEADERS padding past the payload", rawFrame(1, 0x4|0x8, 1, append([]byte{7}, get...)...), protocol, nil},
		{"§6.2 §4.2 HEADERS too short for its priority", rawFrame(1, 0x4|0x20, 1, 0, 0, 0), frameSize, nil},
		{"§6.3 PRIORITY on stream 0", rawFrame(2, 0, 0, 0, 0, 0, 1, 16), protocol, nil},
		{"§6.3 PRIORITY of 4 bytes", rawFrame(2, 0, 3, 0, 0, 0, 1), frameSize, nil},
		{"§5.3.1 PRIORITY: a stream depending on itself", rawFrame(2, 0, 3, 0, 0, 0, 3, 16), noError, []uint64{3<<32 | protocol}},
		{"§6.4 RST_STREAM of 3 bytes", rawFrame(3, 0, 1, 0, 0, 8), frameSize, nil},
		{"§6.4 RST_STREAM on stream 0", rawFrame(3, 0, 0, 0, 0, 0, 8), protocol, nil},
		{"§6.4 RST_STREAM on an idle stream", rawFrame(3, 0, 5, 0, 0, 0, 8), protocol, nil},
		{"§6.5 SETTINGS ACK with a payload", rawFrame(4, 0x1, 0, 0, 3, 0, 0, 0, 1), frameSize, nil},
		{"§6.5 SETTINGS on a stream", rawFrame(4, 0, 1, 0, 3, 0, 0, 0, 1), protocol, nil},
		{"§6.5 SETTINGS of 5 bytes", rawFrame(4, 0, 0, 0, 3, 0, 0, 1), frameSize, nil},
		{"§6.5.2 SETTINGS_INITIAL_WINDOW_SIZE over 2^31-1", rawFrame(4, 0, 0, 0, 4, 0x80, 0, 0, 0), flowControl, nil},
		{"§6.5.2 SETTINGS_MAX_FRAME_SIZE under 16 KiB", rawFrame(4, 0, 0, 0, 5, 0, 0, 0x3f, 0xff), protocol, nil},
		{"§6.5.2 SETTINGS_ENABLE_PUSH of 2", rawFrame(4, 0, 0, 0, 2, 0, 0, 0, 2), protocol, nil},
		{"§6.5.2 the first SETTINGS_INITIAL_WINDOW_SIZE is checked first", rawFrame(4, 0, 0, 0, 2, 0, 0, 0, 2, 0, 4, 0x80, 0, 0, 0), flowControl, nil},
		{"§6.5.2 a later SETTINGS_INITIAL_WINDOW_SIZE over 2^31-1", rawFrame(4, 0, 0, 0, 4, 0, 0, 0, 1, 0, 4, 0x80, 0, 0, 0), flowControl, nil},
		{"RFC 8441 §3 SETTINGS_ENABLE_CONNECT_PROTOCOL of 2", rawFrame(4, 0, 0, 0, 8, 0, 0, 0, 2), protocol, nil},
		{"RFC 9218 §2.1 SETTINGS_NO_RFC7540_PRIORITIES of 2", rawFrame(4, 0, 0, 0, 9, 0, 0, 0, 2), protocol, nil},
		{"RFC 9218 §2.1 SETTINGS_NO_RFC7540_PRIORITIES of 1", rawFrame(4, 0, 0, 0, 9, 0, 0, 0, 1), noError, nil},
		{"§6.5.3 SETTINGS ACK", rawFrame(4, 0x1, 0), noError, nil},
		{"§8.4 PUSH_PROMISE from a client", rawFrame(5, 0x4, 1, 0, 0, 0, 2), protocol, nil},
		{"§6.7 PING of 7 bytes", rawFrameN(6, 0, 0, 7), frameSize, nil},
		{"§6.7 PING on a stream", rawFrameN(6, 0, 1, 8), protocol, nil},
		{"§6.8 GOAWAY on a stream", rawFrameN(7, 0, 1, 8), protocol, nil},
		{"§6.8 GOAWAY of 7 bytes", rawFrameN(7, 0, 0, 7), frameSize, nil},
		{"§6.9 WINDOW_UPDATE of 3 bytes", rawFrame(8, 0, 0, 0, 0, 1), frameSize, nil},
		{"§6.9 WINDOW_UPDATE of 0 on the connection", rawFrame(8, 0, 0, 0, 0, 0, 0), protocol, nil},
		// Stream 1 is idle here: the stream error of §6.9 is the
		// connection error of §5.1, as §6.4 forbids RST_STREAM on it.
		{"§5.1 §6.9 WINDOW_UPDATE of 0 on an idle stream", rawFrame(8, 0, 1, 0, 0, 0, 0), protocol, nil},
		{"§6.9.1 WINDOW_UPDATE past 2^31-1 on the connection", rawFrame(8, 0, 0, 0x7f, 0xff, 0xff, 0xff), flowControl, nil},
		{"§6.10 CONTINUATION without HEADERS", rawFrame(9, 0x4, 1, get...), protocol, nil},
		{"§6.10 a PING inside a header block", rawSeq(rawFrame(1, 0, 1, get...), rawFrameN(6, 0, 0, 8)), protocol, nil},
		{"§6.10 CONTINUATION of another stream", rawSeq(rawFrame(1, 0, 1, get...), rawFrame(9, 0x4, 3)), protocol, nil},
		{"§6.10 CONTINUATION on stream 0", rawSeq(rawFrame(1, 0, 1, get...), rawFrame(9, 0x4, 0)), protocol, nil},
		{"RFC 9218 §7.1 PRIORITY_UPDATE on a stream", rawFrame(0x10, 0, 1, 0, 0, 0, 1, 'u', '=', '1'), protocol, nil},
		{"RFC 9218 §7.1 PRIORITY_UPDATE of 3 bytes", rawFrame(0x10, 0, 0, 0, 0, 1), frameSize, nil},
		{"RFC 9218 §7.1 PRIORITY_UPDATE for stream 0", rawFrame(0x10, 0, 0, 0, 0, 0, 0, 'u', '=', '1'), protocol, nil},
		{"RFC 9218 §7.1 PRIORITY_UPDATE ignored", rawFrame(0x10, 0, 0, 0, 0, 0, 9, 'u', '=', '1'), noError, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := serveRaw(t, tc.frames)
			if res.goAway != tc.goAway {
				t.Errorf("GOAWAY code %d, want %d", res.goAway, tc.goAway)
			}
			if len(res.resets) != len(tc.resets) || len(tc.resets) > 0 && res.resets[0] != tc.resets[0] {
				t.Errorf("RST_STREAM %x, want %x", res.resets, tc.resets)
			}
		})
	}

	// §6.7: a PING is answered with an ACK carrying its data.
	res := serveRaw(t, rawFrame(6, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8))
	if !bytes.Equal(res.pingAck, []byte{1, 2, 3, 4, 5, 6, 7, 8}) || res.goAway != noError {
		t.Errorf("PING: ACK %v and GOAWAY %d, want ACK 1..8 and GOAWAY 0", res.pingAck, res.goAway)
	}
}
