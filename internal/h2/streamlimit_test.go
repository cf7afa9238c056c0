package h2

import (
	"encoding/binary"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// The stream limit as the client sees it (RFC 9113 §5.1.2): only streams
// open or half-closed count toward SETTINGS_MAX_CONCURRENT_STREAMS, and the
// handlers the server holds beyond them stay bounded (h2HandlerLimit).

// limitHandler answers "/hold" only once released; any other path at
// once, with END_STREAM, and then it too waits for the release: its
// stream is closed while its handler still runs.
type limitHandler struct {
	release chan struct{}
	started atomic.Int64
}

func (h *limitHandler) ServeStream(st *Stream) {
	h.started.Add(1)
	if st.Path() == "/hold" {
		<-h.release
	}
	_ = st.WriteHead(&Head{Status: 200, ContentLength: 2}, []byte("ok"), true)
	<-h.release
}

// wireFrame is a frame the server sent.
type wireFrame struct {
	typ, flags byte
	id         uint32
	p          []byte
}

// serverFrames reads the server's frames from cli until it fails, and
// then closes the channel.
func serverFrames(cli net.Conn) chan wireFrame {
	frames := make(chan wireFrame, 1024)
	go func() {
		defer close(frames)
		for {
			var fh [9]byte
			if _, err := io.ReadFull(cli, fh[:]); err != nil {
				return
			}
			p := make([]byte, int(fh[0])<<16|int(fh[1])<<8|int(fh[2]))
			if _, err := io.ReadFull(cli, p); err != nil {
				return
			}
			frames <- wireFrame{fh[3], fh[4], binary.BigEndian.Uint32(fh[5:]) & 0x7fffffff, p}
		}
	}()
	return frames
}

// limitClient is a raw client of a served Conn.
type limitClient struct {
	t      *testing.T
	hc     *Conn
	h      *limitHandler
	cli    net.Conn
	frames chan wireFrame
	out    chan []byte
}

// newLimitClient serves a connection with MaxConcurrentStreams max and
// sends the client preface and an empty SETTINGS.
func newLimitClient(t *testing.T, max uint32) *limitClient {
	srv, cli := net.Pipe()
	h := &limitHandler{release: make(chan struct{})}
	hc := NewConn(&Config{Handler: h, MaxConcurrentStreams: max}, srv, nil, nil, nil)
	served := make(chan struct{})
	go func() {
		defer close(served)
		hc.Serve(false, nil)
	}()
	c := &limitClient{t: t, hc: hc, h: h, cli: cli, frames: serverFrames(cli), out: make(chan []byte, 64)}
	go func() {
		for wire := range c.out {
			_, _ = cli.Write(wire) // fails once the connection is closed
		}
	}()
	t.Cleanup(func() {
		close(h.release)
		close(c.out)
		cli.Close()
		<-served
	})
	c.send(rawSeq([]byte(Preface), rawFrame(4, 0, 0)))
	return c
}

// send queues frames for the client's writer, a goroutine of its own that
// writes them in order: net.Pipe's writes wait for the server's reads,
// which may wait for the server's writes.
func (c *limitClient) send(wire []byte) { c.out <- wire }

// request opens stream id for path, its request complete.
func (c *limitClient) request(id uint32, path string) {
	c.send(headersFrame(id, true, ":method", "GET", ":scheme", "http", ":path", path, ":authority", "x"))
}

// next returns the server's next frame that match accepts, skipping others.
func (c *limitClient) next(what string, match func(wireFrame) bool) wireFrame {
	c.t.Helper()
	deadline := time.After(10 * time.Second) // a bound on a hang, not a timing check
	for {
		select {
		case f, ok := <-c.frames:
			if !ok {
				c.t.Fatalf("connection closed while waiting for %s", what)
			}
			if match(f) {
				return f
			}
		case <-deadline:
			c.t.Fatalf("no %s from the server within 10 s", what)
		}
	}
}

// outcome waits for stream id's END_STREAM or RST_STREAM, or a GOAWAY, and
// says which: "end", "RST code", "GOAWAY code".
func (c *limitClient) outcome(id uint32) string {
	c.t.Helper()
	f := c.next("stream's end", func(f wireFrame) bool {
		return f.id == id && (f.typ == 3 || (f.typ == 0 || f.typ == 1) && f.flags&1 != 0) || f.typ == 7
	})
	switch f.typ {
	case 3:
		return "RST " + ErrCode(binary.BigEndian.Uint32(f.p)).String()
	case 7:
		return "GOAWAY " + ErrCode(binary.BigEndian.Uint32(f.p[4:])).String()
	}
	return "end"
}

// accepted sends a PING after stream id's HEADERS and reports whether the
// PING's ACK came with no RST_STREAM for id before it: the server
// processes frames in order and queues a refusal as it reads the HEADERS.
func (c *limitClient) accepted(id uint32) (bool, string) {
	c.t.Helper()
	c.send(rawFrame(6, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8))
	f := c.next("the PING's ACK", func(f wireFrame) bool {
		return f.typ == 6 && f.flags&1 != 0 || f.typ == 3 && f.id == id || f.typ == 7
	})
	switch f.typ {
	case 3:
		return false, "RST " + ErrCode(binary.BigEndian.Uint32(f.p)).String()
	case 7:
		return false, "GOAWAY " + ErrCode(binary.BigEndian.Uint32(f.p[4:])).String()
	}
	return true, ""
}

// TestStreamAfterEndStreamNotRefused: a client at exactly
// MaxConcurrentStreams (two streams open, one whose response came with
// END_STREAM while its handler still runs) opens another at once, as RFC
// 9113 §5.1.2 lets it: the closed stream no longer counts, so the new one
// is served, not refused with REFUSED_STREAM. Streams still open keep
// counting: with three open, a fourth is refused.
func TestStreamAfterEndStreamNotRefused(t *testing.T) {
	const max = 3
	c := newLimitClient(t, max)
	c.request(1, "/hold")
	c.request(3, "/hold")
	c.request(5, "/done")
	if got := c.outcome(5); got != "end" {
		t.Fatalf("stream 5: %s, want its response", got)
	}
	// Streams 1 and 3 are open, 5 is closed: the client may open 7.
	c.request(7, "/done")
	if got := c.outcome(7); got != "end" {
		t.Fatalf("stream 7, opened after END_STREAM of stream 5 with %d streams open (limit %d): %s, want its response", max-1, max, got)
	}
	// Streams 1, 3 open: 9 is the third, 11 one too many.
	c.request(9, "/hold")
	if ok, got := c.accepted(9); !ok {
		t.Fatalf("stream 9, the third open of %d allowed: %s", max, got)
	}
	c.request(11, "/hold")
	if got := c.outcome(11); got != "RST REFUSED_STREAM" {
		t.Fatalf("stream 11, a fourth open stream over the limit of %d: %s, want RST REFUSED_STREAM", max, got)
	}
}

// TestClosedStreamHandlersBounded: handlers that never return after their
// stream closed cannot make the server hold more than h2HandlerLimit times
// MaxConcurrentStreams of them. A client that opens each stream once the
// previous one ended gets that many served; then each new stream is
// refused with REFUSED_STREAM (no handler starts), and after
// h2RefusedLimit times MaxConcurrentStreams refusals the connection is
// closed with GOAWAY(ENHANCE_YOUR_CALM).
func TestClosedStreamHandlersBounded(t *testing.T) {
	const max = 4
	bound := h2HandlerLimit * max
	refusals := h2RefusedLimit * max
	c := newLimitClient(t, max)
	id := uint32(1)
	for i := 0; i < bound; i, id = i+1, id+2 {
		c.request(id, "/done")
		if got := c.outcome(id); got != "end" {
			t.Fatalf("stream %d, with %d handlers of closed streams running (bound %d): %s, want its response", id, i, bound, got)
		}
	}
	for i := 0; i < refusals; i, id = i+1, id+2 {
		c.request(id, "/done")
		if got := c.outcome(id); got != "RST REFUSED_STREAM" {
			t.Fatalf("stream %d, with %d handlers of closed streams running (bound %d): %s, want RST REFUSED_STREAM", id, bound, bound, got)
		}
		c.hc.mu.Lock()
		running, held := c.hc.running, len(c.hc.streams)
		c.hc.mu.Unlock()
		if running > bound || held > bound {
			t.Fatalf("after stream %d: %d handlers running, %d streams held; bound %d", id, running, held, bound)
		}
	}
	c.request(id, "/done")
	if got := c.outcome(id); got != "GOAWAY ENHANCE_YOUR_CALM" {
		t.Fatalf("stream %d, after %d refusals: %s, want GOAWAY ENHANCE_YOUR_CALM", id, refusals, got)
	}
	if n := c.h.started.Load(); n != int64(bound) {
		t.Errorf("%d handlers started, want %d (h2HandlerLimit × MaxConcurrentStreams)", n, bound)
	}
}
