package http3

// The HTTP/3 client against a malicious server: a raw quic-go listener
// whose connections send what each test scripts. Every case checks the
// request's error, a bound on the heap the attack left behind, and that
// the client's connections and goroutines are back after.

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/riptide-http/riptide/client"
	"github.com/riptide-http/riptide/h3"
)

// rawPeer is a scripted HTTP/3 server: each connection gets a control
// stream with SETTINGS (and whatever control adds), then handle for each
// request stream, the request read to its end first.
type rawPeer struct {
	addr    string
	conf    *tls.Config
	control func(qc *quic.Conn, s *quic.SendStream)
	// noSettings leaves the control stream's first frame to control.
	noSettings bool
	handle     func(qc *quic.Conn, s *quic.Stream, n int)
	// raw hands handle the stream with the request unread.
	raw     bool
	quic    *quic.Config
	conns   atomic.Int64
	streams atomic.Int64
}

func startRawPeer(t *testing.T, p *rawPeer) *rawPeer {
	t.Helper()
	pki := newInteropPKI(t)
	qconf := p.quic
	if qconf == nil {
		qconf = &quic.Config{MaxIncomingStreams: 1000, MaxIdleTimeout: 5 * time.Second}
	}
	ln, err := quic.ListenAddr("127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pki.tls}, NextProtos: []string{"h3"}}, qconf)
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.conf = &tls.Config{RootCAs: pki.pool(), ServerName: "localhost"}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); ln.Close() })
	go func() {
		for {
			qc, err := ln.Accept(ctx)
			if err != nil {
				return
			}
			p.conns.Add(1)
			go func() {
				ctrl, err := qc.OpenUniStream()
				if err != nil {
					return
				}
				if p.noSettings {
					ctrl.Write(controlStream())
				} else {
					ctrl.Write(controlStream(h3.AppendSettings(nil, &h3.Settings{})))
				}
				if p.control != nil {
					go p.control(qc, ctrl)
				}
				for {
					s, err := qc.AcceptStream(ctx)
					if err != nil {
						return
					}
					n := int(p.streams.Add(1))
					go func() {
						if !p.raw {
							io.Copy(io.Discard, s)
						}
						p.handle(qc, s, n)
					}()
				}
			}()
		}
	}()
	return p
}

// headers is a HEADERS frame of the given field lines (name, value pairs).
func headers(fields ...string) []byte {
	f := h3.AppendFieldSectionPrefix(nil)
	for i := 0; i < len(fields); i += 2 {
		f = h3.AppendField(f, fields[i], fields[i+1], false)
	}
	return append(h3.AppendFrameHeader(nil, h3.FrameHeaders, uint64(len(f))), f...)
}

func dataFrame(b []byte) []byte {
	return append(h3.AppendFrameHeader(nil, h3.FrameData, uint64(len(b))), b...)
}

// hardClient is an HTTP/3 client for p with the given timeout, its
// goroutine base level measured before its first request.
func hardClient(t *testing.T, p *rawPeer, timeout time.Duration) (*client.Client, *Transport, int) {
	base := runtime.NumGoroutine()
	tr := &Transport{TLSConfig: p.conf}
	c := NewClient(tr)
	c.Timeout = timeout
	return c, tr, base
}

// closeAndCheck closes tr and checks that its connections and the
// goroutines are gone and the heap is within max of before.
func closeAndCheck(t *testing.T, tr *Transport, base int, before int64, max int64) {
	t.Helper()
	if h := settledHeap(); h-before > max {
		t.Errorf("heap grew by %d B during the attack, want at most %d", h-before, max)
	}
	tr.Close()
	if n := tr.Conns(); n != 0 {
		t.Errorf("%d connections left", n)
	}
	waitGoroutines(t, base)
}

// nextOK checks that a request after an attack gets status, and that the
// peer saw conns connections in all.
func nextOK(t *testing.T, c *client.Client, p *rawPeer, status int, conns int64) {
	t.Helper()
	var req client.Request
	var resp client.Response
	req.SetURL(url(p, "/"))
	if err := c.Do(context.Background(), &req, &resp); err != nil || resp.StatusCode() != status {
		t.Fatalf("request after the attack: %v %d, want %d", err, resp.StatusCode(), status)
	}
	if n := p.conns.Load(); n != conns {
		t.Errorf("%d connections, want %d", n, conns)
	}
}

// errCode is the HTTP/3 error code of a request's error: the client's own
// *h3.Error, or the code its connection was closed with.
func errCode(err error) h3.ErrorCode {
	var ae *quic.ApplicationError
	if errors.As(err, &ae) {
		return h3.ErrorCode(ae.ErrorCode)
	}
	return h3.CodeOf(err)
}

func url(p *rawPeer, path string) string { return "https://" + p.addr + path }

// hardCase is a client under attack by a rawPeer: the client and its
// goroutine base level (hardClient), the heap before its first request,
// and the request and response of GET / to the peer.
type hardCase struct {
	t      *testing.T
	p      *rawPeer
	c      *client.Client
	tr     *Transport
	base   int
	before int64
	req    client.Request
	resp   client.Response
}

// newHardCase makes p's client with the given timeout (hardClient), then
// measures the heap.
func newHardCase(t *testing.T, p *rawPeer, timeout time.Duration) *hardCase {
	h := &hardCase{t: t, p: p}
	h.c, h.tr, h.base = hardClient(t, p, timeout)
	h.before = settledHeap()
	return h
}

// do sends GET / and reads the whole response.
func (h *hardCase) do() error {
	h.req.SetURL(url(h.p, "/"))
	return h.c.Do(context.Background(), &h.req, &h.resp)
}

// doStream sends GET /, leaving the response body to stream.
func (h *hardCase) doStream() error {
	h.req.SetURL(url(h.p, "/"))
	return h.c.DoStream(context.Background(), &h.req, &h.resp)
}

// end closes the client and checks that the heap grew by at most max and
// that its connections and goroutines are gone (closeAndCheck).
func (h *hardCase) end(max int64) {
	h.t.Helper()
	closeAndCheck(h.t, h.tr, h.base, h.before, max)
}

// TestClientHardenedFieldSection: response field sections over the
// 64 KiB limit, declared or decoded, fail the request without the client
// reading or holding them; the connection stays for the next request.
func TestClientHardenedFieldSection(t *testing.T) {
	big := strings.Repeat("v", 8<<10)
	p := startRawPeer(t, &rawPeer{handle: func(qc *quic.Conn, s *quic.Stream, n int) {
		switch n {
		case 1: // a HEADERS frame declaring 16 MiB, of which 1 MiB is sent
			s.Write(h3.AppendFrameHeader(nil, h3.FrameHeaders, 16<<20))
			s.Write(make([]byte, 1<<20))
		case 2: // 60 KiB encoded, more than 64 KiB counted (+32 per field)
			fs := []string{":status", "200"}
			for i := range 7 {
				fs = append(fs, "x-big-"+string(rune('a'+i)), big)
			}
			for i := range 400 {
				fs = append(fs, "x-"+string(rune('a'+i%26))+string(rune('a'+i/26)), "v")
			}
			s.Write(headers(fs...))
		case 3: // trailers over the limit
			s.Write(headers(":status", "200"))
			s.Write(dataFrame([]byte("body")))
			fs := []string{}
			for i := range 9 {
				fs = append(fs, "x-t-"+string(rune('a'+i)), big)
			}
			s.Write(headers(fs...))
		default:
			s.Write(headers(":status", "204"))
		}
		s.Close()
	}})
	h := newHardCase(t, p, 10*time.Second)
	for i, want := range []error{h3.ErrFieldSectionTooLarge, h3.ErrFieldSectionTooLarge, h3.ErrFieldSectionTooLarge} {
		if err := h.do(); !errors.Is(err, want) {
			t.Fatalf("request %d: %v, want %v", i+1, err, want)
		}
	}
	nextOK(t, h.c, p, 204, 1) // a field section too large is a stream error
	h.end(512 << 10)
}

// TestClientHardenedQPACK: the dynamic table is advertised with capacity
// 0, so a field section that references it, or an encoder stream that
// inserts, is a connection error; the connection is closed with the QPACK
// code and the next request opens another.
func TestClientHardenedQPACK(t *testing.T) {
	var insert atomic.Bool
	p := startRawPeer(t, &rawPeer{
		control: func(qc *quic.Conn, _ *quic.SendStream) {
			if insert.Load() {
				enc, _ := qc.OpenUniStream()
				// Set Dynamic Table Capacity 4096, then an insert.
				enc.Write([]byte{byte(h3.StreamQPACKEncoder), 0x3f, 0xe1, 0x1f, 0x40 | 0x01, 'a'})
			}
		},
		handle: func(qc *quic.Conn, s *quic.Stream, n int) {
			if n == 1 {
				// Required Insert Count 1, then an indexed dynamic field.
				s.Write(append(h3.AppendFrameHeader(nil, h3.FrameHeaders, 3), 0x02, 0x00, 0x80))
			} else {
				s.Write(headers(":status", "200"))
			}
			s.Close()
		},
	})
	h := newHardCase(t, p, 10*time.Second)
	if err := h.do(); h3.CodeOf(err) != h3.CodeQPACKDecompressionFailed {
		t.Fatalf("dynamic reference: %v, want QPACK_DECOMPRESSION_FAILED", err)
	}
	insert.Store(true)
	// The request races the encoder stream that closes its connection.
	if err := h.do(); err != nil && errCode(err) != h3.CodeQPACKEncoderStreamError {
		t.Fatalf("next request: %v, want success or QPACK_ENCODER_STREAM_ERROR", err)
	}
	// The second connection's encoder stream inserts: it is closed.
	for i := 0; h.tr.Conns() != 0; i++ {
		if i == 500 {
			t.Fatal("the connection whose encoder stream inserted is still open")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := p.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
	h.end(512 << 10)
}

// TestClientHardenedEndlessData: a server sending DATA without end to a
// caller that reads slowly gets only the stream's receive window in:
// QUIC's flow control stops it, and the heap stays bounded.
func TestClientHardenedEndlessData(t *testing.T) {
	var sent atomic.Int64
	p := startRawPeer(t, &rawPeer{handle: func(qc *quic.Conn, s *quic.Stream, n int) {
		s.Write(headers(":status", "200"))
		chunk := dataFrame(make([]byte, 64<<10))
		for {
			k, err := s.Write(chunk)
			sent.Add(int64(k))
			if err != nil {
				return
			}
		}
	}})
	h := newHardCase(t, p, 0)
	if err := h.doStream(); err != nil {
		t.Fatal(err)
	}
	body := h.resp.BodyStream()
	buf := make([]byte, 1024)
	var read int64
	for i := 0; i < 200; i++ {
		k, err := body.Read(buf)
		read += int64(k)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	// The server is blocked on the window: what it wrote is what was read
	// plus at most the window (and quic-go's send buffer on its side).
	s := sent.Load()
	if max := read + DefaultClientStreamReceiveWindow + 1<<20; s > max {
		t.Errorf("server wrote %d B for %d B read, want at most %d (the receive window bounds it)", s, read, max)
	}
	if grown := settledHeap() - h.before; grown > 4<<20 {
		t.Errorf("heap grew by %d B while the server pushed, want at most 4 MiB", grown)
	}
	body.Close()
	h.end(4 << 20)
}

// TestClientHardenedNeverEnds: a response whose stream never ends fails
// at the client's Timeout, its stream reset; the connection serves the
// next request.
func TestClientHardenedNeverEnds(t *testing.T) {
	reset := make(chan uint64, 1)
	p := startRawPeer(t, &rawPeer{handle: func(qc *quic.Conn, s *quic.Stream, n int) {
		if n == 1 {
			s.Write(headers(":status", "200"))
			s.Write(dataFrame([]byte("partial")))
			_, err := s.Write(make([]byte, 0))
			for err == nil {
				_, err = s.Write(dataFrame(nil)) // empty DATA keeps nothing
				time.Sleep(50 * time.Millisecond)
			}
			var se *quic.StreamError
			if errors.As(err, &se) {
				reset <- uint64(se.ErrorCode)
			}
			return
		}
		s.Write(headers(":status", "200"))
		s.Close()
	}})
	h := newHardCase(t, p, 300*time.Millisecond)
	err := h.do()
	var ne interface{ Timeout() bool }
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("never-ending response: %v, want a timeout", err)
	}
	select {
	case code := <-reset:
		if h3.ErrorCode(code) != h3.CodeRequestCancelled {
			t.Errorf("stream stopped with %v, want H3_REQUEST_CANCELLED", h3.ErrorCode(code))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server's stream was not stopped")
	}
	nextOK(t, h.c, p, 200, 1)
	h.end(512 << 10)
}

// TestClientHardenedFrames: oversized and out-of-place frames. Unknown
// frames beyond 64 KiB on a stream, and too many empty DATA frames, fail
// the request; a SETTINGS payload over 8 KiB, a second SETTINGS, an
// HTTP/2 frame type or PUSH_PROMISE close the connection with their codes.
func TestClientHardenedFrames(t *testing.T) {
	unknown := func(n int) []byte {
		return append(h3.AppendFrameHeader(nil, 0x21, uint64(n)), make([]byte, n)...)
	}
	cases := []struct {
		name    string
		control []byte
		first   bool // control replaces the SETTINGS frame
		stream  []byte
		code    h3.ErrorCode
	}{
		{"UnknownFrames", nil, false, append(headers(":status", "200"), unknown(70<<10)...), h3.CodeExcessiveLoad},
		{"EmptyData", nil, false, append(headers(":status", "200"), func() []byte {
			var b []byte
			for range 2000 {
				b = append(b, dataFrame(nil)...)
			}
			return b
		}()...), h3.CodeExcessiveLoad},
		{"HugeSettings", h3.AppendFrameHeader(nil, h3.FrameSettings, 1<<20), true, nil, h3.CodeExcessiveLoad},
		{"SecondSettings", h3.AppendSettings(nil, &h3.Settings{}), false, nil, h3.CodeFrameUnexpected},
		{"HTTP2Frame", nil, false, append(headers(":status", "200"), h3.AppendFrameHeader(nil, 0x06, 0)...), h3.CodeFrameUnexpected},
		{"PushPromise", nil, false, h3.AppendFrameHeader(nil, h3.FramePushPromise, 1), h3.CodeIDError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			closed := make(chan h3.ErrorCode, 1)
			p := startRawPeer(t, &rawPeer{
				noSettings: tc.first,
				control: func(qc *quic.Conn, ctrl *quic.SendStream) {
					if tc.control != nil {
						ctrl.Write(tc.control)
					}
					<-qc.Context().Done()
					var ae *quic.ApplicationError
					if errors.As(context.Cause(qc.Context()), &ae) {
						closed <- h3.ErrorCode(ae.ErrorCode)
					}
				},
				handle: func(qc *quic.Conn, s *quic.Stream, n int) {
					if tc.stream != nil {
						s.Write(tc.stream)
						s.Close()
					}
				},
			})
			h := newHardCase(t, p, 5*time.Second)
			err := h.doStream()
			if err == nil {
				_, err = io.Copy(io.Discard, h.resp.BodyStream())
				h.resp.Reset()
			}
			if tc.stream != nil && h3.CodeOf(err) != tc.code {
				t.Errorf("request: %v, want %v", err, tc.code)
			}
			if tc.control != nil || tc.code == h3.CodeFrameUnexpected || tc.code == h3.CodeIDError {
				select {
				case code := <-closed:
					if code != tc.code {
						t.Errorf("connection closed with %v, want %v", code, tc.code)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("connection not closed")
				}
			}
			h.end(512 << 10)
		})
	}
}

// TestClientHardenedGoaway: a storm of GOAWAY frames costs the client
// nothing but the last identifier; the request in flight completes, and a
// request the GOAWAY left unprocessed (rejected) is retried on a new
// connection.
func TestClientHardenedGoaway(t *testing.T) {
	release := make(chan struct{})
	var stormed atomic.Bool
	p := startRawPeer(t, &rawPeer{
		control: func(qc *quic.Conn, ctrl *quic.SendStream) {
			if stormed.Swap(true) {
				return // the storm hits the first connection only
			}
			var b []byte
			for range 20000 {
				b = h3.AppendGoaway(b[:0], 4) // stream 0 processed, later ones not
				if _, err := ctrl.Write(b); err != nil {
					return
				}
			}
			close(release)
		},
		handle: func(qc *quic.Conn, s *quic.Stream, n int) {
			if s.StreamID() >= 4 && n <= 2 {
				// Not processed: rejected.
				s.CancelWrite(quic.StreamErrorCode(h3.CodeRequestRejected))
				return
			}
			<-release
			s.Write(headers(":status", "200"))
			s.Write(dataFrame([]byte("done")))
			s.Close()
		},
	})
	h := newHardCase(t, p, 10*time.Second)
	if err := h.do(); err != nil || string(h.resp.Body()) != "done" {
		t.Fatalf("request in flight during the storm: %v %q", err, h.resp.Body())
	}
	<-release
	if err := h.do(); err != nil || string(h.resp.Body()) != "done" {
		t.Fatalf("request after GOAWAY: %v %q", err, h.resp.Body())
	}
	if n := p.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (a new one after GOAWAY)", n)
	}
	h.end(512 << 10)
}
