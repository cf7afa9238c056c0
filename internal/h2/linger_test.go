package h2

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2/hpack"
)

// lingerHandler answers with a whole response (END_STREAM) and then
// returns only when released.
type lingerHandler struct{ release chan struct{} }

func (h lingerHandler) ServeStream(st *Stream) {
	_ = st.WriteHead(&Head{Status: 200, ContentLength: 2}, []byte("ok"), true)
	<-h.release
}

// TestWindowUsedBeforeHandlerDone: a client that, having seen the whole
// response, sends a full stream window of body before the handler has
// returned gets the stream reset with NO_ERROR when the handler returns
// (RFC 9113 §8.1), as it does when the body comes after the handler
// returned; the stream is not left half-closed with no window for the
// client to end it with. The PING after the body makes sure the server
// has taken the body in before the handler is released.
func TestWindowUsedBeforeHandlerDone(t *testing.T) {
	window := 65535 // the stream window until the server's SETTINGS says otherwise
	srv, cli := net.Pipe()
	h := lingerHandler{release: make(chan struct{})}
	hc := NewConn(&Config{Handler: h}, srv, nil, nil, nil)
	served := make(chan struct{})
	go func() {
		defer close(served)
		hc.Serve(false, nil)
	}()
	released := false
	defer func() {
		if !released {
			close(h.release)
		}
		cli.Close()
		<-served
	}()

	frames := serverFrames(cli)
	next := func(what string, match func(wireFrame) bool) wireFrame {
		t.Helper()
		deadline := time.After(10 * time.Second) // a bound on a hang, not a timing check
		for {
			select {
			case f, ok := <-frames:
				if !ok {
					t.Fatalf("connection closed while waiting for %s", what)
				}
				if match(f) {
					return f
				}
				if f.typ == 4 && f.flags&1 == 0 { // the server's SETTINGS
					for p := f.p; len(p) >= 6; p = p[6:] {
						if binary.BigEndian.Uint16(p) == 4 { // INITIAL_WINDOW_SIZE
							window = int(binary.BigEndian.Uint32(p[2:]))
						}
					}
				}
			case <-deadline:
				t.Fatalf("no %s from the server within 10 s", what)
			}
		}
	}

	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range []hpack.HeaderField{{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "http"}, {Name: ":path", Value: "/"}, {Name: ":authority", Value: "x"}} {
		_ = enc.WriteField(f)
	}
	go func() {
		_, _ = cli.Write(rawSeq([]byte(Preface), rawFrame(4, 0, 0), rawFrame(1, 4, 1, block.Bytes()...)))
	}()
	next("the response's END_STREAM", func(f wireFrame) bool { return f.id == 1 && f.flags&1 != 0 && (f.typ == 0 || f.typ == 1) })

	// A stream window of body, then a PING, while the handler still runs.
	var wire []byte
	for sent := 0; sent < window; {
		n := min(16384, window-sent)
		wire = append(wire, rawFrameN(0, 0, 1, n)...)
		sent += n
	}
	wire = append(wire, rawFrame(6, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8)...)
	go func() { _, _ = cli.Write(wire) }()
	next("the PING's ACK", func(f wireFrame) bool { return f.typ == 6 && f.flags&1 != 0 })

	close(h.release)
	released = true
	rst := next("RST_STREAM on stream 1", func(f wireFrame) bool { return f.typ == 3 && f.id == 1 })
	if code := binary.BigEndian.Uint32(rst.p); code != 0 {
		t.Errorf("stream 1 reset with code %#x, want NO_ERROR", code)
	}
}
