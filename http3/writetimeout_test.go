package http3

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/h3"
)

// stallRequest is the HEADERS frame of a GET /stall.
var stallRequest = func() []byte {
	sec := h3.AppendFieldSectionPrefix(nil)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "localhost"}, {":path", "/stall"}} {
		sec = h3.AppendField(sec, f[0], f[1], false)
	}
	return append(h3.AppendFrameHeader(nil, h3.FrameHeaders, uint64(len(sec))), sec...)
}()

// TestWriteTimeoutServe: Server.WriteTimeout bounds an HTTP/3 response
// write as it bounds an HTTP/2 one. A client that sends requests and never
// reads the responses (its flow-control windows are never extended; quic-go
// still acknowledges) stalls each handler's write; with WriteTimeout set,
// every such handler's write fails, the handler ends, and the client finds
// its stream reset with H3_INTERNAL_ERROR while its connection stays open.
// Then the goroutines come back to their level before the connection and
// the live heap to within heapSlack of it. Before, the handlers wrote on
// until the client went away. (No timing is asserted: only that every
// handler ends within a bound far above the timeout.)
func TestWriteTimeoutServe(t *testing.T) {
	const streams = 20
	const heapSlack = 1 << 20
	forDoors(t, func(t *testing.T, d door) {
		ended := make(chan error, streams+1)
		chunk := make([]byte, 16<<10)
		srv := &riptide.Server{WriteTimeout: 300 * time.Millisecond}
		if d == doorCompat {
			srv.Handler = riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/hello" {
					io.WriteString(w, "ok")
					return
				}
				var err error
				for err == nil {
					_, err = w.Write(chunk)
				}
				ended <- err
			}))
		} else {
			srv.Handler = riptide.HandlerFunc(func(x *riptide.Ctx) {
				if string(x.Path()) == "/hello" {
					x.WriteString("ok")
					return
				}
				var err error
				for err == nil {
					_, err = x.Write(chunk)
				}
				ended <- err
			})
		}
		addr, base := attackServer(t, srv, nil)
		heap0 := liveHeap()
		qc, err := quic.DialAddr(t.Context(), addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h3"}}, &quic.Config{
			InitialStreamReceiveWindow:     16 << 10,
			MaxStreamReceiveWindow:         16 << 10,
			InitialConnectionReceiveWindow: 256 << 10,
			MaxConnectionReceiveWindow:     256 << 10,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer qc.CloseWithError(0, "")
		var ss []*quic.Stream
		for range streams {
			s, err := qc.OpenStreamSync(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Write(stallRequest); err != nil {
				t.Fatal(err)
			}
			s.Close()
			ss = append(ss, s)
		}
		bound := time.After(30 * time.Second)
		for i := range streams {
			select {
			case err := <-ended:
				if err == nil {
					t.Fatalf("handler %d ended without a write error", i)
				}
			case <-bound:
				t.Fatalf("%d of %d handlers still writing to a client that reads nothing, with WriteTimeout 300ms", streams-i, streams)
			}
		}
		for i, s := range ss {
			s.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, err := io.Copy(io.Discard, s)
			var se *quic.StreamError
			if !errors.As(err, &se) || !se.Remote || h3.ErrorCode(se.ErrorCode) != h3.CodeInternalError {
				t.Errorf("stream %d: read ended with %v, want the server's reset H3_INTERNAL_ERROR", i, err)
			}
		}
		if qc.Context().Err() != nil {
			t.Fatalf("the connection closed: %v", context.Cause(qc.Context()))
		}
		if st := get(t, qc); st != "200" {
			t.Errorf("after the resets: status %s, want 200", st)
		}
		qc.CloseWithError(0, "")
		waitGoroutines(t, base)
		if grown := int64(liveHeap()) - int64(heap0); grown > heapSlack {
			t.Errorf("live heap %+d KiB after the stalled handlers ended, want back within %d KiB", grown>>10, heapSlack>>10)
		}
	})
}
