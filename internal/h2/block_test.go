package h2

import (
	"bytes"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// TestBlockingHandlerDoesNotHoldUpStreamsQueuedBehind checks the stream
// workers' contract: a handler that blocks does not hold up the other
// streams of its connection, even those that arrived in the same read as
// its own (one burst, which a single worker takes) and queued behind it.
// The streams after the blocked one must all be answered while it still
// blocks; it is answered once released. h2c and TLS.
func TestBlockingHandlerDoesNotHoldUpStreamsQueuedBehind(t *testing.T) {
	t.Parallel()
	const others = 8
	for _, useTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "h2c", true: "tls"}[useTLS], func(t *testing.T) {
			release := make(chan struct{})
			h := handlerFunc(func(st *Stream) {
				if st.Path() == "/block" {
					<-release
				}
				respond(st, 200, "ok")
			})
			in := startTarget(t, targets[0], useTLS, h, nil)
			released := false
			defer func() {
				if !released {
					close(release)
				}
			}()
			c := dial(t, in, 0)
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(30 * time.Second)) // a hang fails the test
			// The preface, SETTINGS and every HEADERS go out in one
			// write, so that the server reads them as one burst.
			var out bytes.Buffer
			out.WriteString(http2.ClientPreface)
			fw := http2.NewFramer(&out, nil)
			fw.WriteSettings()
			var hb bytes.Buffer
			enc := hpack.NewEncoder(&hb)
			scheme := map[bool]string{false: "http", true: "https"}[useTLS]
			for i := 0; i <= others; i++ {
				path := "/ok"
				if i == 0 {
					path = "/block"
				}
				hb.Reset()
				for _, f := range [][2]string{{":method", "GET"}, {":scheme", scheme}, {":authority", in.addr}, {":path", path}} {
					enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
				}
				fw.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(2*i + 1), BlockFragment: hb.Bytes(), EndStream: true, EndHeaders: true})
			}
			if _, err := c.Write(out.Bytes()); err != nil {
				t.Fatal(err)
			}
			fr := http2.NewFramer(c, c)
			ended := map[uint32]bool{}
			for len(ended) < others+1 {
				f, err := fr.ReadFrame()
				if err != nil {
					t.Fatalf("streams ended %v: %v", ended, err)
				}
				switch f := f.(type) {
				case *http2.HeadersFrame:
					if f.StreamEnded() {
						ended[f.StreamID] = true
					}
				case *http2.DataFrame:
					if f.StreamEnded() {
						ended[f.StreamID] = true
					}
				case *http2.RSTStreamFrame:
					t.Fatalf("stream %d reset: %v", f.StreamID, f.ErrCode)
				case *http2.GoAwayFrame:
					t.Fatalf("GOAWAY %v", f.ErrCode)
				}
				if len(ended) == others && !released {
					if ended[1] {
						t.Fatal("the blocked stream ended before it was released")
					}
					released = true
					close(release)
				}
			}
		})
	}
}
