package h3srv

import (
	"bytes"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide/h1"
	"github.com/riptide-http/riptide/h3"
	"github.com/riptide-http/riptide/internal/quicxtest"
)

func hdr(name, value string) h1.Header { return h1.Header{Name: []byte(name), Value: []byte(value)} }

// echo answers with the request's method, path and x-test header, then
// the body it read, and the request's trailers as response trailers.
var echo = HandlerFunc(func(s *Stream) {
	req := s.Request()
	body, err := io.ReadAll(s)
	if err != nil {
		return
	}
	s.WriteHeaders(200, []h1.Header{
		hdr("Content-Type", "text/plain"),
		hdr("X-Method", string(req.Method)),
		hdr("X-Path", string(req.Target)),
		hdr("X-Host", string(req.Host)),
		hdr("X-Test", string(req.Get("x-test"))),
		hdr("Connection", "close"), // dropped: connection-specific
	})
	if len(body) > 0 {
		s.WriteData(body)
	}
	if tr := s.Trailers(); len(tr) > 0 {
		var out []h1.Header
		for _, f := range tr {
			out = append(out, h1.Header{Name: f.Name, Value: f.Value})
		}
		s.WriteTrailers(out)
	}
})

func TestGet(t *testing.T) {
	base := takeBaseline()
	p := start(t, quicxtest.Options{}, nil, echo, false)
	s := p.open(reqHead("GET", "/hello?x=1", "x-test", "yes"), true)
	r := readResponse(t, s)
	if r.err != nil || r.status != 200 || r.fields["x-method"] != "GET" || r.fields["x-path"] != "/hello?x=1" ||
		r.fields["x-host"] != "example.com" || r.fields["x-test"] != "yes" || r.fields["content-type"] != "text/plain" || len(r.body) != 0 {
		t.Fatalf("response %+v", r)
	}
	if _, ok := r.fields["connection"]; ok {
		t.Error("connection-specific field sent")
	}
	// RFC 9114 §6.2.1: our control stream opens with SETTINGS advertising
	// the field section limit (and QPACK capacity 0 by omission).
	us, err := p.cli.AcceptUniStream(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := us.Read(buf)
	want := append(h3.AppendVarint(nil, 0), h3.AppendSettings(nil, &h3.Settings{MaxFieldSectionSize: DefaultMaxHeaderBytes, HasMaxFieldSectionSize: true})...)
	if !bytes.Equal(buf[:n], want) {
		t.Errorf("control stream % x, want % x", buf[:n], want)
	}
	// The engine releases the credit once the response's FIN is written,
	// so the client may read the FIN first: wait, bounded.
	select {
	case <-s.Released():
	case <-time.After(10 * time.Second):
		t.Error("stream credit not released after the handler")
	}
	p.closeAndCheck(base)
}

func TestPostEcho(t *testing.T) {
	p := start(t, quicxtest.Options{}, nil, echo, false)
	body := bytes.Repeat([]byte("0123456789abcdef"), 200_000/16)
	s := p.open(reqHead("POST", "/echo", "content-length", strconv.Itoa(len(body))), false)
	go func() {
		// Several DATA frames, with an unknown (grease) frame between.
		s.Write(data(body[:70_000]))
		s.Write([]byte{0x21, 3, 'a', 'b', 'c'})
		s.Write(data(body[70_000:]))
		s.Close()
	}()
	r := readResponse(t, s)
	if r.err != nil || r.status != 200 || r.fields["x-method"] != "POST" || !bytes.Equal(r.body, body) {
		t.Fatalf("status %d err %v, body %d bytes equal %v", r.status, r.err, len(r.body), bytes.Equal(r.body, body))
	}
}

func TestTrailers(t *testing.T) {
	p := start(t, quicxtest.Options{}, nil, echo, false)
	b := append(reqHead("POST", "/t", "te", "trailers"), data([]byte("body"))...)
	b = append(b, headers("x-checksum", "abc", "x-more", "1")...)
	r := readResponse(t, p.open(b, true))
	if r.status != 200 || string(r.body) != "body" || r.trailers["x-checksum"] != "abc" || r.trailers["x-more"] != "1" {
		t.Fatalf("response %+v", r)
	}
}

func TestInterimResponse(t *testing.T) {
	p := start(t, quicxtest.Options{}, nil, HandlerFunc(func(s *Stream) {
		if err := s.WriteHeaders(103, []h1.Header{hdr("link", "</a.css>; rel=preload")}); err != nil {
			t.Error(err)
		}
		if err := s.WriteHeaders(101, nil); err == nil {
			t.Error("101 accepted on HTTP/3")
		}
		s.WriteHeaders(204, nil)
		if err := s.WriteHeaders(200, nil); err == nil {
			t.Error("second final head accepted")
		}
	}), false)
	r := readResponse(t, p.open(reqHead("GET", "/"), true))
	if len(r.interim) != 1 || r.interim[0] != 103 || r.status != 204 {
		t.Fatalf("response %+v", r)
	}
}

func TestConcurrentStreams(t *testing.T) {
	p := start(t, quicxtest.Options{MaxStreams: 50}, nil, echo, false)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := "/s/" + strconv.Itoa(i)
			body := bytes.Repeat([]byte{byte(i)}, 1000*i)
			b := append(reqHead("POST", path), data(body)...)
			r := readResponse(t, p.open(b, true))
			if r.status != 200 || r.fields["x-path"] != path || !bytes.Equal(r.body, body) {
				t.Errorf("stream %d: status %d path %q body %d", i, r.status, r.fields["x-path"], len(r.body))
			}
		}()
	}
	wg.Wait()
}

// TestStreamErrors: the request stream rules answered per stream.
func TestStreamErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		b       []byte
		status  int    // response sent, 0: none
		code    uint64 // STOP_SENDING or RESET_STREAM code
		handler bool   // the handler runs (the error is in the body)
	}{
		{"RFC 9114 §4.1.2: FIN before HEADERS is H3_REQUEST_INCOMPLETE", nil, 0, uint64(h3.CodeRequestIncomplete), false},
		{"RFC 9114 §4.1.2: FIN inside HEADERS is H3_REQUEST_INCOMPLETE", reqHead("GET", "/")[:5], 0, uint64(h3.CodeRequestIncomplete), false},
		{"RFC 9114 §4.1.2: FIN inside DATA is H3_REQUEST_INCOMPLETE", append(reqHead("POST", "/"), data([]byte("abc"))[:3]...), 0, uint64(h3.CodeRequestIncomplete), true},
		{"RFC 9114 §4.1.2: content-length longer than the body", append(reqHead("POST", "/", "content-length", "10"), data([]byte("abc"))...), 400, uint64(h3.CodeMessageError), true},
		{"RFC 9114 §4.1.2: body longer than content-length", append(reqHead("POST", "/", "content-length", "2"), data([]byte("abc"))...), 400, uint64(h3.CodeMessageError), true},
		{"RFC 9114 §4.2: connection-specific field", reqHead("GET", "/", "connection", "close"), 400, uint64(h3.CodeMessageError), false},
		{"RFC 9114 §4.3.1: missing :path", headers(":method", "GET", ":scheme", "https", ":authority", "a"), 400, uint64(h3.CodeMessageError), false},
		{"RFC 9114 §4.3: pseudo-header in trailers", append(reqHead("POST", "/"), headers(":path", "/x")...), 400, uint64(h3.CodeMessageError), true},
		{"RFC 9114 §4.2.2: HEADERS over MaxHeaderBytes answered 431 before reading", append(h3.AppendFrameHeader(nil, h3.FrameHeaders, 1<<20), 0, 0), 431, uint64(h3.CodeExcessiveLoad), false},
		{"RFC 9114 §4.2.2: decoded fields over MaxHeaderBytes answered 431", reqHead("GET", "/", "x-big", strings.Repeat("a", 70<<10)), 431, uint64(h3.CodeExcessiveLoad), false},
		{"RFC 9220: extended CONNECT not enabled", headers(":method", "CONNECT", ":protocol", "websocket", ":scheme", "https", ":authority", "a", ":path", "/"), 400, uint64(h3.CodeMessageError), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran atomic.Bool
			p := start(t, quicxtest.Options{}, nil, HandlerFunc(func(s *Stream) {
				ran.Store(true)
				io.ReadAll(s)
			}), false)
			s := p.open(tc.b, true)
			r := readResponse(t, s)
			if r.status != tc.status {
				t.Errorf("status %d, want %d (%+v)", r.status, tc.status, r)
			}
			reset, stop, hasReset, hasStop := waitStopped(t, s)
			if !(hasStop && stop == tc.code) && !(hasReset && reset == tc.code) {
				t.Errorf("reset %v %#x, stop %v %#x; want code %#x", hasReset, reset, hasStop, stop, tc.code)
			}
			if p.cli.CloseCode() != nil {
				t.Errorf("connection closed: %v", p.cli.CloseCode())
			}
			if ran.Load() != tc.handler {
				t.Errorf("handler ran %v, want %v", ran.Load(), tc.handler)
			}
		})
	}
}

// TestConnectionErrors: errors that close the connection with their code.
func TestConnectionErrors(t *testing.T) {
	ctrl := func(frames ...[]byte) []byte {
		b := h3.AppendVarint(nil, 0)
		for _, f := range frames {
			b = append(b, f...)
		}
		return b
	}
	settings := h3.AppendSettings(nil, &h3.Settings{})
	big := h3.AppendFrameHeader(nil, h3.FrameSettings, 9<<10)
	big = append(big, make([]byte, 9<<10)...)
	dyn := []byte{0x02, 0x00, 0x80} // Required Insert Count 1: a dynamic table reference
	for _, tc := range []struct {
		name string
		do   func(p *peer)
		code h3.ErrorCode
	}{
		{"RFC 9114 §6.2.1: second control stream", func(p *peer) { p.uni(ctrl(settings), false) }, h3.CodeStreamCreationError},
		{"RFC 9114 §6.2.1: control stream without SETTINGS first", func(p *peer) { p.uni(ctrl(h3.AppendGoaway(nil, 0)), false) }, h3.CodeMissingSettings},
		{"RFC 9114 §7.2.4: second SETTINGS", func(p *peer) { p.uni(ctrl(settings, settings), false) }, h3.CodeFrameUnexpected},
		{"SETTINGS over 8 KiB", func(p *peer) { p.uni(ctrl(big), false) }, h3.CodeExcessiveLoad},
		{"PRIORITY_UPDATE over 1 KiB", func(p *peer) {
			p.uni(ctrl(settings, h3.AppendFrameHeader(nil, h3.FramePriorityUpdateRequest, 2<<10), make([]byte, 2<<10)), false)
		}, h3.CodeExcessiveLoad},
		{"RFC 9114 §6.2.1: control stream closed", func(p *peer) { p.uni(ctrl(settings), true) }, h3.CodeClosedCriticalStream},
		{"RFC 9114 §6.2.1: control stream reset", func(p *peer) {
			s := p.uni(ctrl(settings), false)
			for s.Unread() > 0 { // reset once read: before its type, it would be ignored
				time.Sleep(time.Millisecond)
			}
			s.CancelWrite(uint64(h3.CodeNoError))
		}, h3.CodeClosedCriticalStream},
		{"RFC 9204 §4.2: QPACK decoder stream closed", func(p *peer) { p.uni(ctrl(settings), false); p.uni([]byte{3}, true) }, h3.CodeClosedCriticalStream},
		{"RFC 9114 §6.2.2: push stream from a client", func(p *peer) { p.uni(ctrl(settings), false); p.uni([]byte{1}, false) }, h3.CodeStreamCreationError},
		{"RFC 9204 §4.3: encoder stream inserting", func(p *peer) { p.uni(ctrl(settings), false); p.uni([]byte{2, 0xc0 | 17}, false) }, h3.CodeQPACKEncoderStreamError},
		{"RFC 9204 §2.2.3: dynamic table reference", func(p *peer) {
			p.uni(ctrl(settings), false)
			p.open(append(h3.AppendFrameHeader(nil, h3.FrameHeaders, uint64(len(dyn))), dyn...), true)
		}, h3.CodeQPACKDecompressionFailed},
		{"RFC 9114 §4.1: DATA before HEADERS", func(p *peer) {
			p.uni(ctrl(settings), false)
			p.open(append(data([]byte("x")), reqHead("GET", "/")...), true)
		}, h3.CodeFrameUnexpected},
		{"RFC 9114 §7.2.8: reserved HTTP/2 frame on a request stream", func(p *peer) {
			p.uni(ctrl(settings), false)
			p.open(append(reqHead("GET", "/"), 0x06, 0), true)
		}, h3.CodeFrameUnexpected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := takeBaseline()
			p := start(t, quicxtest.Options{}, nil, HandlerFunc(func(s *Stream) { io.ReadAll(s) }), true)
			if tc.name == "RFC 9114 §6.2.1: second control stream" {
				p.uni(ctrl(settings), false)
			}
			tc.do(p)
			if code := p.waitClosed(); code != tc.code {
				t.Errorf("closed with %v, want %v", code, tc.code)
			}
			p.closeAndCheck(base)
		})
	}
}

// TestOneWrite: a response's HEADERS and its first DATA leave in one write.
func TestOneWrite(t *testing.T) {
	p := start(t, quicxtest.Options{}, nil, HandlerFunc(func(s *Stream) {
		s.WriteHeaders(200, []h1.Header{hdr("content-type", "text/plain")})
		s.WriteData([]byte("Hello, World!"))
	}), false)
	s := p.open(reqHead("GET", "/"), true)
	if r := readResponse(t, s); r.status != 200 || string(r.body) != "Hello, World!" {
		t.Fatalf("response %+v", r)
	}
	if n := s.PeerWrites(); n != 1 {
		t.Errorf("response written in %d writes, want 1", n)
	}
}

// TestLargeFields: fields decoded beyond the pooled buffer (a 20 KiB
// cookie, 10 KiB trailers) are served whole, and a 20 KiB response head is
// sent whole.
func TestLargeFields(t *testing.T) {
	p := start(t, quicxtest.Options{}, nil, echo, false)
	big := strings.Repeat("c", 20<<10)
	b := append(reqHead("POST", "/", "x-test", big), data([]byte("x"))...)
	b = append(b, headers("x-trailer", strings.Repeat("t", 10<<10))...)
	r := readResponse(t, p.open(b, true))
	if r.status != 200 || r.fields["x-test"] != big || len(r.trailers["x-trailer"]) != 10<<10 {
		t.Fatalf("status %d, x-test %d bytes, trailer %d bytes", r.status, len(r.fields["x-test"]), len(r.trailers["x-trailer"]))
	}
}

// TestReadHeaderTimeout: a stream whose HEADERS do not complete in time is
// reset with H3_REQUEST_INCOMPLETE and its budget returned.
func TestReadHeaderTimeout(t *testing.T) {
	p := start(t, quicxtest.Options{}, &Config{ReadHeaderTimeout: 20 * time.Millisecond}, echo, false)
	s := p.open(reqHead("GET", "/")[:6], false)
	if reset := waitReset(t, s); reset != uint64(h3.CodeRequestIncomplete) {
		t.Errorf("reset %#x, want H3_REQUEST_INCOMPLETE", reset)
	}
	for p.engine.activeStreams() > 0 {
		time.Sleep(time.Millisecond)
	}
	if got := p.engine.budget.Load(); got != DefaultHeaderBudget {
		t.Errorf("header budget %d after the stream, want %d", got, DefaultHeaderBudget)
	}
	// A complete request on the same connection is served.
	if r := readResponse(t, p.open(reqHead("GET", "/after"), true)); r.status != 200 {
		t.Errorf("next request: %+v", r)
	}
}

// TestIdleGoroutines: an idle connection, its workers retired and the
// client's control and QPACK streams quiet, holds two goroutines: the
// accept loops of request and unidirectional streams. No reader stays on
// the client's critical streams (they are parked until they end or the
// next request stream comes), nor a worker.
func TestIdleGoroutines(t *testing.T) {
	defer func(w, r time.Duration) { workerLinger, readerLinger = w, r }(workerLinger, readerLinger)
	workerLinger, readerLinger = 20*time.Millisecond, 20*time.Millisecond
	base := takeBaseline()
	p := start(t, quicxtest.Options{}, nil, echo, false)
	p.uni([]byte{byte(h3.StreamQPACKEncoder)}, false)
	p.uni([]byte{byte(h3.StreamQPACKDecoder)}, false)
	for range 3 {
		if r := readResponse(t, p.open(reqHead("GET", "/"), true)); r.status != 200 {
			t.Fatalf("response %+v", r)
		}
	}
	// The last stream's worker goes idle after the response ends and
	// exits after workerLinger, the readers after readerLinger: wait for
	// them, bounded generously (a loaded -race run took over 0.5 s), so
	// that only goroutines that stay fail the test.
	var g int
	for deadline := time.Now().Add(10 * time.Second); ; {
		if g = runtime.NumGoroutine() - base.goroutines; g <= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if g > 2 {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines for an idle connection, want at most 2\n%s", g, buf[:runtime.Stack(buf, true)])
	}
	// A request after the workers retired starts one again.
	if r := readResponse(t, p.open(reqHead("GET", "/again"), true)); r.status != 200 {
		t.Fatalf("response after the linger %+v", r)
	}
	p.closeAndCheck(base)
}

// TestParkedCriticalStreams: the client's control and QPACK streams keep
// their protocol duties once parked. Their end or reset closes the
// connection with H3_CLOSED_CRITICAL_STREAM at once, with no request
// (RFC 9114 §6.2.1, RFC 9204 §4.2); a frame or instruction sent on them
// while parked is read and checked when the next request stream comes,
// or when the stream ends.
func TestParkedCriticalStreams(t *testing.T) {
	defer func(r time.Duration) { readerLinger = r }(readerLinger)
	readerLinger = 20 * time.Millisecond
	settings := append(h3.AppendVarint(nil, uint64(h3.StreamControl)), h3.AppendSettings(nil, &h3.Settings{})...)
	second := h3.AppendSettings(nil, &h3.Settings{})
	insert := []byte{0xc0 | 17} // Insert With Name Reference: the table has capacity 0
	for _, tc := range []struct {
		name    string
		do      func(p *peer, ctrl, enc, dec *quicxtest.Stream)
		request bool // the error shows once a request stream comes
		code    h3.ErrorCode
	}{
		{"control stream closed", func(p *peer, ctrl, enc, dec *quicxtest.Stream) { ctrl.Close() }, false, h3.CodeClosedCriticalStream},
		{"control stream reset", func(p *peer, ctrl, enc, dec *quicxtest.Stream) { ctrl.CancelWrite(uint64(h3.CodeNoError)) }, false, h3.CodeClosedCriticalStream},
		{"QPACK encoder stream closed", func(p *peer, ctrl, enc, dec *quicxtest.Stream) { enc.Close() }, false, h3.CodeClosedCriticalStream},
		{"QPACK decoder stream reset", func(p *peer, ctrl, enc, dec *quicxtest.Stream) { dec.CancelWrite(uint64(h3.CodeNoError)) }, false, h3.CodeClosedCriticalStream},
		{"second SETTINGS, then FIN", func(p *peer, ctrl, enc, dec *quicxtest.Stream) { ctrl.Write(second); ctrl.Close() }, false, h3.CodeFrameUnexpected},
		{"second SETTINGS, then a request", func(p *peer, ctrl, enc, dec *quicxtest.Stream) { ctrl.Write(second) }, true, h3.CodeFrameUnexpected},
		{"encoder stream inserting, then a request", func(p *peer, ctrl, enc, dec *quicxtest.Stream) { enc.Write(insert) }, true, h3.CodeQPACKEncoderStreamError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := takeBaseline()
			p := start(t, quicxtest.Options{}, nil, echo, true)
			ctrl := p.uni(settings, false)
			enc := p.uni([]byte{byte(h3.StreamQPACKEncoder)}, false)
			dec := p.uni([]byte{byte(h3.StreamQPACKDecoder)}, false)
			for deadline := time.Now().Add(10 * time.Second); p.engine.nparked.Load() < 3; {
				if time.Now().After(deadline) {
					t.Fatalf("%d critical streams parked, want 3", p.engine.nparked.Load())
				}
				time.Sleep(time.Millisecond)
			}
			tc.do(p, ctrl, enc, dec)
			if tc.request {
				// Nothing reads the parked stream until a request
				// stream comes.
				time.Sleep(50 * time.Millisecond)
				select {
				case <-p.cli.Context().Done():
					t.Fatalf("closed (%v) before a request stream came", p.cli.CloseCode())
				default:
				}
				// Opening it is enough: the engine closes the
				// connection as it accepts the stream, and a write could
				// fail.
				p.open(nil, false)
			}
			if code := p.waitClosed(); code != tc.code {
				t.Errorf("closed with %v, want %v", code, tc.code)
			}
			p.closeAndCheck(base)
		})
	}
}

// TestSlowHandlerHoldsNoStream: streams queued behind a handler that does
// not return are served by other workers (a worker takes the next queued
// stream itself only once its own is done).
func TestSlowHandlerHoldsNoStream(t *testing.T) {
	release := make(chan struct{})
	h := HandlerFunc(func(s *Stream) {
		if string(s.Request().Target) == "/slow" {
			<-release
		}
		s.WriteHeaders(204, nil)
	})
	p := start(t, quicxtest.Options{MaxStreams: 20}, nil, h, false)
	// Registered after start's cleanup, so it runs first: a failure before
	// the release below ends the test instead of leaving the cleanup
	// waiting for the slow handlers.
	unblock := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unblock)
	slow := []*quicxtest.Stream{p.open(reqHead("GET", "/slow"), true), p.open(reqHead("GET", "/slow"), true)}
	var fast []*quicxtest.Stream
	for range 10 {
		fast = append(fast, p.open(reqHead("GET", "/fast"), true))
	}
	for i, s := range fast {
		if r := readResponse(t, s); r.status != 204 {
			t.Errorf("fast stream %d: status %d err %v, want 204 while the slow handlers run", i, r.status, r.err)
		}
	}
	unblock()
	for i, s := range slow {
		if r := readResponse(t, s); r.status != 204 {
			t.Errorf("slow stream %d: status %d err %v, want 204", i, r.status, r.err)
		}
	}
}
