package http3

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/h3"
)

// The attacks of the in-memory engine tests (internal/h3srv: TestUniStreamFlood,
// TestConnectionErrors, TestStreamErrors) through Serve over loopback QUIC:
// a quic-go client connection writing raw HTTP/3 bytes, the server's answer
// read from quic-go (*quic.ApplicationError for a connection closed,
// *quic.StreamError for a stream stopped), and after each the process's
// goroutines back to their level before the connection.

// bodyRead is what a handler got reading a request body.
type bodyRead struct {
	path string
	n    int
	err  error
}

// bodyServer is a Server whose handler, through door d, reads the request
// body to its end, reports what it got on reads and answers "ok".
func bodyServer(d door, reads chan<- bodyRead) *riptide.Server {
	srv := &riptide.Server{}
	if d == doorCompat {
		srv.Handler = riptide.FromHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(r.Body)
			reads <- bodyRead{r.URL.Path, len(b), err}
			io.WriteString(w, "ok")
		}))
	} else {
		srv.Handler = riptide.HandlerFunc(func(x *riptide.Ctx) {
			b, err := io.ReadAll(x.Body())
			reads <- bodyRead{string(x.Path()), len(b), err}
			x.WriteString("ok")
		})
	}
	return srv
}

// attackServer serves srv with opts and returns its address and the
// process's goroutine count once the server is idle after one connection
// served a request and closed: the level each attack must come back to.
func attackServer(t *testing.T, srv *riptide.Server, opts *Options) (addr string, base int) {
	t.Helper()
	before := runtime.NumGoroutine()
	addr, _ = startServe(t, srv, opts)
	c := dialRaw(t, addr)
	if st := statusOf(t, c.do(t)); st != "200" {
		t.Fatalf("warm-up request: status %s", st)
	}
	c.qc.CloseWithError(0, "")
	// Serve's own goroutines stay (its accept loop, quic-go's transport);
	// the connection's leave: the level is taken once it is within
	// serveGoroutines of the one before Serve and has not moved for 10
	// samples.
	for same, i := 0, 0; same < 10; i++ {
		if i == 1000 {
			t.Fatalf("goroutines did not settle after the warm-up connection: %d, %d before Serve", runtime.NumGoroutine(), before)
		}
		time.Sleep(10 * time.Millisecond)
		g := runtime.NumGoroutine()
		if g > before+serveGoroutines || g != base {
			base, same = g, 0
			continue
		}
		same++
	}
	return addr, base
}

// serveGoroutines bounds the goroutines an idle Serve keeps: its accept
// loop, the listener closer, quic-go's transport (read loop, listener
// accept) and riptide's shared clock.
const serveGoroutines = 8

// waitGoroutines waits (bounded) for the process's goroutines to come back
// to base, as attackServer measured it in the test whose subtest t is (the
// subtest's own goroutine counts one more), and fails the test with their
// stacks if they do not.
func waitGoroutines(t *testing.T, base int) {
	max := base + 1
	t.Helper()
	var g int
	for range 1000 {
		if g = runtime.NumGoroutine(); g <= max {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	t.Fatalf("%d goroutines, want at most %d (the level before the connection)\n%s", g, max, buf[:runtime.Stack(buf, true)])
}

// dialH3 dials addr as an HTTP/3 client; unless bare, it opens its control
// stream with an empty SETTINGS first.
func dialH3(t *testing.T, addr string, bare bool) *quic.Conn {
	t.Helper()
	qc, err := quic.DialAddr(t.Context(), addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h3"}}, &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qc.CloseWithError(0, "") })
	if !bare {
		uni(t, qc, controlStream(h3.AppendSettings(nil, &h3.Settings{})))
	}
	return qc
}

// controlStream is a control stream's type and then frames.
func controlStream(frames ...[]byte) []byte {
	b := h3.AppendVarint(nil, uint64(h3.StreamControl))
	for _, f := range frames {
		b = append(b, f...)
	}
	return b
}

// uni opens a unidirectional stream on qc (waiting for credit) and writes
// b. A write the server's CONNECTION_CLOSE ends is no failure: the caller
// checks the close.
func uni(t *testing.T, qc *quic.Conn, b []byte) *quic.SendStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	s, err := qc.OpenUniStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ae *quic.ApplicationError
	if _, err := s.Write(b); err != nil && !(errors.As(err, &ae) && ae.Remote) {
		t.Fatal(err)
	}
	return s
}

// closedWith waits (bounded) for the server to close qc and returns the
// HTTP/3 error code of its CONNECTION_CLOSE.
func closedWith(t *testing.T, qc *quic.Conn) h3.ErrorCode {
	t.Helper()
	select {
	case <-qc.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatal("connection not closed")
	}
	var ae *quic.ApplicationError
	if err := context.Cause(qc.Context()); !errors.As(err, &ae) || !ae.Remote {
		t.Fatalf("connection ended by %v, not the server's CONNECTION_CLOSE", err)
	}
	return h3.ErrorCode(ae.ErrorCode)
}

// stoppedWith returns the code of the server's STOP_SENDING on s, from
// the error of a write on it.
func stoppedWith(err error) (h3.ErrorCode, bool) {
	var se *quic.StreamError
	if !errors.As(err, &se) || !se.Remote {
		return 0, false
	}
	return h3.ErrorCode(se.ErrorCode), true
}

// get makes a GET /hello on qc and returns the response's status: the
// connection still serves requests.
func get(t *testing.T, qc *quic.Conn) string {
	t.Helper()
	c := &rawClient{qc: qc, req: dialRawRequest(), buf: make([]byte, 4096)}
	return statusOf(t, c.do(t))
}

// TestUniFloodServe: through Serve, a client's floods of unidirectional
// streams. Streams of unknown and reserved (grease) types are stopped with
// H3_STREAM_CREATION_ERROR whatever they carry, and the connection keeps
// serving, up to MaxUniStreams of them; one more closes it with
// H3_EXCESSIVE_LOAD. Push streams (a client never opens one) and a second
// QPACK encoder stream close it with H3_STREAM_CREATION_ERROR. Streams
// that never send their type hold the QUIC credit: at most MaxUniStreams
// are open. After each, the goroutines come back to their level before
// the connection, and the live heap grows by no more than what quic-go
// may buffer for the connection (its receive window) while the flood
// runs.
func TestUniFloodServe(t *testing.T) {
	const maxUni = 8
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) { x.WriteString("Hello") })}
	addr, base := attackServer(t, srv, &Options{MaxUniStreams: maxUni})
	connWindow := quicConnWindow(t, srv)
	heap0 := liveHeap()
	// heapSlack is what the live heap may differ by between two
	// measurements with nothing held (as in internal/h3srv's baseline).
	const heapSlack = 1 << 20

	t.Run("unknown types", func(t *testing.T) {
		qc := dialH3(t, addr, false)
		if st := get(t, qc); st != "200" {
			t.Fatalf("status %s", st)
		}
		// Each stream sends its type and then 2 MiB, more than the
		// connection's window: a server that kept what it read of them
		// would hold 14 MiB after the first wave, the credit left beside
		// the control stream. The second is the last stream of unknown
		// type the server accepts.
		payload := make([]byte, 2<<20)
		errs := make([]error, maxUni)
		h0 := liveHeap()
		flood := func(from, to int) {
			var wg sync.WaitGroup
			for i := from; i < to; i++ {
				typ := uint64(0x21 + 0x1f*i) // reserved (RFC 9114 §6.2.3)
				if i%2 == 1 {
					typ = 0x54 + uint64(i) // unknown
				}
				s := uni(t, qc, h3.AppendVarint(nil, typ))
				wg.Go(func() {
					s.SetWriteDeadline(time.Now().Add(20 * time.Second))
					_, errs[i] = s.Write(payload)
				})
			}
			wg.Wait()
		}
		flood(0, maxUni-1)
		grown := int64(liveHeap()) - int64(h0)
		t.Logf("%d unknown streams of 2 MiB each: live heap %+d KiB", maxUni-1, grown>>10)
		if limit := connWindow + heapSlack; grown > limit {
			t.Errorf("live heap grew %d KiB, want at most %d KiB (connection window + %d KiB)", grown>>10, limit>>10, heapSlack>>10)
		}
		flood(maxUni-1, maxUni)
		for i, err := range errs {
			if code, ok := stoppedWith(err); !ok || code != h3.CodeStreamCreationError {
				t.Errorf("unknown stream %d: write ended with %v, want STOP_SENDING H3_STREAM_CREATION_ERROR", i, err)
			}
		}
		if st := get(t, qc); st != "200" {
			t.Errorf("after %d unknown streams: status %s", maxUni, st)
		}
		uni(t, qc, h3.AppendVarint(nil, 0x21))
		if code := closedWith(t, qc); code != h3.CodeExcessiveLoad {
			t.Errorf("unknown stream %d: connection closed with %v, want H3_EXCESSIVE_LOAD", maxUni+1, code)
		}
		waitGoroutines(t, base)
	})

	// A flood of streams of one critical or forbidden type: the
	// connection is closed with code, after at most a credit's worth.
	for _, tc := range []struct {
		name string
		typ  h3.StreamType
		code h3.ErrorCode
	}{
		{"RFC 9114 §6.2.2: push streams", h3.StreamPush, h3.CodeStreamCreationError},
		{"RFC 9204 §4.2: QPACK encoder streams", h3.StreamQPACKEncoder, h3.CodeStreamCreationError},
		{"RFC 9204 §4.2: QPACK decoder streams", h3.StreamQPACKDecoder, h3.CodeStreamCreationError},
		{"RFC 9114 §6.2.1: control streams", h3.StreamControl, h3.CodeStreamCreationError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			qc := dialH3(t, addr, false)
			b := h3.AppendVarint(nil, uint64(tc.typ))
			if tc.typ == h3.StreamControl {
				b = controlStream(h3.AppendSettings(nil, &h3.Settings{}))
			}
			opened := 0
			for ; opened < 100; opened++ {
				s, err := qc.OpenUniStream()
				if err != nil {
					break // no credit, or closed
				}
				if _, err := s.Write(b); err != nil {
					break
				}
			}
			if code := closedWith(t, qc); code != tc.code {
				t.Errorf("closed with %v after %d streams, want %v", code, opened, tc.code)
			}
			if opened >= maxUni {
				t.Errorf("%d streams opened, credit for %d", opened, maxUni-1)
			}
			waitGoroutines(t, base)
		})
	}

	t.Run("streams without a type", func(t *testing.T) {
		qc := dialH3(t, addr, false)
		// One byte of a two-byte varint: the server waits for the rest.
		opened := 1 // the control stream
		for ; opened < 100; opened++ {
			s, err := qc.OpenUniStream()
			if err != nil {
				break
			}
			s.Write([]byte{0x40})
		}
		if opened != maxUni {
			t.Errorf("%d unidirectional streams open at once, want %d", opened, maxUni)
		}
		if st := get(t, qc); st != "200" {
			t.Errorf("with %d streams without a type: status %s", opened, st)
		}
		qc.CloseWithError(0, "")
		waitGoroutines(t, base)
	})

	if grown := int64(liveHeap()) - int64(heap0); grown > heapSlack {
		t.Errorf("live heap %+d KiB after the floods, want back within %d KiB", grown>>10, heapSlack>>10)
	}
}

// TestControlStreamServe: through Serve, a client's control stream that
// breaks RFC 9114 §6.2.1 / §7.2.4 closes the connection with the RFC's
// code (SETTINGS over the server's bound: H3_EXCESSIVE_LOAD, RFC 9114
// §10.5), and the goroutines come back to their level before it.
func TestControlStreamServe(t *testing.T) {
	// A small stream window, so that a client's write of more than it
	// completes only once the server read the stream (the reset case).
	const window = 16 << 10
	srv := &riptide.Server{
		Handler: riptide.HandlerFunc(func(x *riptide.Ctx) { x.WriteString("Hello") }),
		HTTP2:   &riptide.HTTP2Config{MaxReceiveBufferPerStream: window},
	}
	addr, base := attackServer(t, srv, nil)
	settings := h3.AppendSettings(nil, &h3.Settings{})
	maxSettings := h3.DefaultLimits.MaxSettingsBytes
	big := append(h3.AppendFrameHeader(nil, h3.FrameSettings, maxSettings+1), make([]byte, maxSettings+1)...)
	for _, tc := range []struct {
		name string
		do   func(t *testing.T, qc *quic.Conn)
		code h3.ErrorCode
	}{
		{"RFC 9114 §6.2.1: second control stream", func(t *testing.T, qc *quic.Conn) {
			uni(t, qc, controlStream(settings))
			uni(t, qc, controlStream(settings))
		}, h3.CodeStreamCreationError},
		{"RFC 9114 §6.2.1: first frame not SETTINGS", func(t *testing.T, qc *quic.Conn) {
			uni(t, qc, controlStream(h3.AppendGoaway(nil, 0)))
		}, h3.CodeMissingSettings},
		{"RFC 9114 §7.2.4: second SETTINGS", func(t *testing.T, qc *quic.Conn) {
			uni(t, qc, controlStream(settings, settings))
		}, h3.CodeFrameUnexpected},
		{"SETTINGS over the server's bound", func(t *testing.T, qc *quic.Conn) {
			uni(t, qc, controlStream(big))
		}, h3.CodeExcessiveLoad},
		{"RFC 9114 §6.2.1: control stream closed", func(t *testing.T, qc *quic.Conn) {
			uni(t, qc, controlStream(settings)).Close()
		}, h3.CodeClosedCriticalStream},
		{"RFC 9114 §6.2.1: control stream reset", func(t *testing.T, qc *quic.Conn) {
			// SETTINGS, then an unknown frame of 3 windows (within the
			// skipped-bytes budget): the write returns only once the
			// server read past the stream's type, so the reset cannot
			// overtake it (a stream reset before its type is ignored).
			pad := 3 * window
			s := uni(t, qc, controlStream(settings, h3.AppendFrameHeader(nil, 0x21, uint64(pad)), make([]byte, pad)))
			s.CancelWrite(quic.StreamErrorCode(h3.CodeNoError))
		}, h3.CodeClosedCriticalStream},
		{"RFC 9204 §4.2: QPACK encoder stream closed", func(t *testing.T, qc *quic.Conn) {
			uni(t, qc, controlStream(settings))
			uni(t, qc, h3.AppendVarint(nil, uint64(h3.StreamQPACKEncoder))).Close()
		}, h3.CodeClosedCriticalStream},
		{"RFC 9204 §4.3: QPACK encoder stream inserting", func(t *testing.T, qc *quic.Conn) {
			uni(t, qc, controlStream(settings))
			uni(t, qc, []byte{byte(h3.StreamQPACKEncoder), 0xc0 | 17})
		}, h3.CodeQPACKEncoderStreamError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			qc := dialH3(t, addr, true)
			tc.do(t, qc)
			if code := closedWith(t, qc); code != tc.code {
				t.Errorf("closed with %v, want %v", code, tc.code)
			}
			waitGoroutines(t, base)
		})
	}
}

// TestRequestStreamAttackServe: through Serve, for each door, request streams
// that break RFC 9114 §4.1 / RFC 9204: a dynamic-table reference and DATA
// before HEADERS close the connection without running the handler; a
// reserved HTTP/2 frame type closes it and fails the handler's body read;
// a body shorter or longer than its content-length is answered 400, its
// stream stopped with H3_MESSAGE_ERROR, and the handler's read fails: it
// never takes a short body as complete. Then the goroutines come back to
// their level before the connection.
func TestRequestStreamAttackServe(t *testing.T) {
	forDoors(t, func(t *testing.T, d door) {
		reads := make(chan bodyRead, 16)
		addr, base := attackServer(t, bodyServer(d, reads), nil)
		<-reads // the warm-up request's
		head := func(extra ...[2]string) []byte {
			sec := h3.AppendFieldSectionPrefix(nil)
			for _, f := range append([][2]string{{":method", "POST"}, {":scheme", "https"}, {":authority", "localhost"}, {":path", "/upload"}}, extra...) {
				sec = h3.AppendField(sec, f[0], f[1], false)
			}
			return append(h3.AppendFrameHeader(nil, h3.FrameHeaders, uint64(len(sec))), sec...)
		}
		data := func(p string) []byte {
			return append(h3.AppendFrameHeader(nil, h3.FrameData, uint64(len(p))), p...)
		}
		dyn := []byte{0x02, 0x00, 0x80} // Required Insert Count 1, then an indexed dynamic field
		cat := func(bs ...[]byte) []byte {
			var b []byte
			for _, x := range bs {
				b = append(b, x...)
			}
			return b
		}
		for _, tc := range []struct {
			name   string
			req    []byte
			fin    bool
			conn   h3.ErrorCode // the connection closed with it, 0: it stays
			stop   h3.ErrorCode // the stream's STOP_SENDING, 0: none looked for
			status string       // the response's status, "": none looked for
			runs   int          // the handler's runs: 0 or 1, -1 either (its read must fail)
		}{
			{"RFC 9204 §2.2.3: dynamic table reference", cat(h3.AppendFrameHeader(nil, h3.FrameHeaders, uint64(len(dyn))), dyn), true, h3.CodeQPACKDecompressionFailed, 0, "", 0},
			{"RFC 9114 §4.1: DATA before HEADERS", cat(data("x"), head()), true, h3.CodeFrameUnexpected, 0, "", 0},
			{"RFC 9114 §7.2.8: reserved HTTP/2 frame type", cat(head(), []byte{0x06, 0x00}), false, h3.CodeFrameUnexpected, 0, "", -1},
			{"RFC 9114 §4.1.2: body shorter than content-length", cat(head([2]string{"content-length", "10"}), data("abc")), true, 0, 0, "400", 1},
			{"RFC 9114 §4.1.2: body longer than content-length", cat(head([2]string{"content-length", "2"}), data("abc")), false, 0, h3.CodeMessageError, "400", 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				qc := dialH3(t, addr, false)
				s, err := qc.OpenStreamSync(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				var ae *quic.ApplicationError
				if _, err := s.Write(tc.req); err != nil && !(errors.As(err, &ae) && ae.Remote) {
					t.Fatal(err)
				}
				if tc.fin {
					s.Close()
				}
				if tc.conn != 0 {
					if code := closedWith(t, qc); code != tc.conn {
						t.Errorf("closed with %v, want %v", code, tc.conn)
					}
				} else {
					s.SetReadDeadline(time.Now().Add(10 * time.Second))
					resp, err := io.ReadAll(s)
					if err != nil {
						t.Fatalf("response: %v", err)
					}
					if st := statusOf(t, resp); st != tc.status {
						t.Errorf("status %s, want %s", st, tc.status)
					}
					if tc.stop != 0 {
						select {
						case <-s.Context().Done():
						case <-time.After(10 * time.Second):
							t.Fatal("stream not stopped")
						}
						if code, ok := stoppedWith(context.Cause(s.Context())); !ok || code != tc.stop {
							t.Errorf("stream ended with %v, want STOP_SENDING %v", context.Cause(s.Context()), tc.stop)
						}
					}
					if st := get(t, qc); st != "200" {
						t.Errorf("next request: status %s", st)
					}
					qc.CloseWithError(0, "")
				}
				waitGoroutines(t, base)
				var got []bodyRead
				for len(reads) > 0 {
					if r := <-reads; r.path == "/upload" { // not the GET /hello after
						got = append(got, r)
					}
				}
				for _, r := range got {
					if r.err == nil {
						t.Errorf("handler read a %d-byte body as complete", r.n)
					}
				}
				if tc.runs >= 0 && len(got) != tc.runs {
					t.Errorf("handler ran %d times, want %d", len(got), tc.runs)
				}
			})
		}
	})
}
