package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/h2"
	"golang.org/x/net/http2/hpack"
)

// h2Raw is a scripted HTTP/2 server on raw sockets, for the tests of how
// the client meets a server that misbehaves: each connection's preface is
// read, an empty SETTINGS sent, and the rest left to serve.
type h2Raw struct {
	ln      net.Listener
	addr    string
	accepts atomic.Int32
	wg      sync.WaitGroup
}

// h2RawConn is one connection of h2Raw.
type h2RawConn struct {
	t   *testing.T
	nc  net.Conn
	fr  *h2.FrameReader
	enc *hpack.Encoder
	hb  bytes.Buffer
	wmu sync.Mutex
}

func newH2Raw(t *testing.T, serve func(sc *h2RawConn)) *h2Raw {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &h2Raw{ln: ln, addr: ln.Addr().String()}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepts.Add(1)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer nc.Close()
				pre := make([]byte, len(h2.ClientPreface))
				if _, err := io.ReadFull(nc, pre); err != nil || string(pre) != h2.ClientPreface {
					return
				}
				sc := &h2RawConn{t: t, nc: nc, fr: h2.NewFrameReader(nc, 1<<20)}
				sc.enc = hpack.NewEncoder(&sc.hb)
				sc.write(h2.AppendSettings(nil, nil))
				serve(sc)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

// client returns a client speaking h2c to s.
func (s *h2Raw) client() *Client { return &Client{H2CHosts: []string{s.addr}} }

func (s *h2Raw) url(path string) string { return "http://" + s.addr + path }

func (sc *h2RawConn) write(b []byte) error {
	sc.wmu.Lock()
	defer sc.wmu.Unlock()
	_, err := sc.nc.Write(b)
	return err
}

// next reads frames, acknowledging SETTINGS, until one of the types
// given; its data is copied.
func (sc *h2RawConn) next(types ...h2.FrameType) (h2.Frame, error) {
	for {
		var f h2.Frame
		if err := sc.fr.ReadFrame(&f); err != nil {
			return f, err
		}
		f.Data = bytes.Clone(f.Data)
		if f.Type == h2.FrameSettings && !f.Ack {
			sc.write(h2.AppendSettingsAck(nil))
		}
		for _, t := range types {
			if f.Type == t {
				return f, nil
			}
		}
	}
}

// request reads up to the next request's HEADERS and returns its stream.
func (sc *h2RawConn) request() uint32 {
	f, err := sc.next(h2.FrameHeaders)
	if err != nil {
		return 0
	}
	return f.StreamID
}

// head returns a HEADERS frame with the fields given as name, value pairs.
func (sc *h2RawConn) head(id uint32, end bool, kv ...string) []byte {
	sc.hb.Reset()
	for i := 0; i < len(kv); i += 2 {
		sc.enc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return h2.AppendHeaders(nil, id, sc.hb.Bytes(), end, 1<<14)
}

// ok answers stream id with 200 and body.
func (sc *h2RawConn) ok(id uint32, body string) {
	b := sc.head(id, false, ":status", "200")
	sc.write(h2.AppendData(b, id, []byte(body), true))
}

// closeWrite ends the server's side of the connection and reads until the
// client closes its own (closing with unread bytes would reset it, and the
// client would see the reset, not the end).
func (sc *h2RawConn) closeWrite() {
	sc.nc.(*net.TCPConn).CloseWrite()
	io.Copy(io.Discard, sc.nc)
}

// waitClosed reads until the client closes the connection and returns the
// code of the GOAWAY it sent, if any.
func (sc *h2RawConn) waitClosed() (code h2.ErrCode, sawGoAway bool) {
	for {
		f, err := sc.next(h2.FrameGoAway)
		if err != nil {
			return code, sawGoAway
		}
		code, sawGoAway = f.Code, true
	}
}

func h2get(t *testing.T, c *Client, url string) error {
	t.Helper()
	var req Request
	var resp Response
	req.SetURL(url)
	return c.Do(context.Background(), &req, &resp)
}

func wantH2Err(t *testing.T, err error, code h2.ErrCode, goAway bool) {
	t.Helper()
	var he *HTTP2Error
	if !errors.As(err, &he) || he.Code != uint32(code) || he.GoAway != goAway {
		t.Fatalf("error %v, want HTTP2Error %v (GoAway %v)", err, code, goAway)
	}
}

// TestH2GoAwayRetry: a request the server's GOAWAY names unprocessed is
// sent again on a new connection, a POST included; one the server
// processed before going away fails with a clear error, and is not sent
// again.
func TestH2GoAwayRetry(t *testing.T) {
	var n atomic.Int32
	s := newH2Raw(t, func(sc *h2RawConn) {
		id := sc.request()
		switch n.Add(1) {
		case 1: // unprocessed: last stream 0
			sc.write(h2.AppendGoAway(nil, 0, h2.ErrCodeNo))
			sc.closeWrite()
		case 2:
			sc.ok(id, "second")
			sc.waitClosed()
		case 3: // processed, then gone
			sc.write(h2.AppendGoAway(nil, id, h2.ErrCodeNo))
			sc.closeWrite()
		}
	})
	c := s.client()
	var req Request
	var resp Response
	req.SetURL(s.url("/"))
	req.SetMethod("POST")
	req.SetBodyString("x")
	if err := c.Do(context.Background(), &req, &resp); err != nil || string(resp.Body()) != "second" {
		t.Fatalf("POST after GOAWAY(last 0): %v %q", err, resp.Body())
	}
	if got := s.accepts.Load(); got != 2 {
		t.Fatalf("%d connections, want 2 (one retry)", got)
	}
	c.CloseIdleConnections()
	err := c.Do(context.Background(), &req, &resp)
	if err == nil || !strings.Contains(err.Error(), "server closed") {
		t.Fatalf("POST processed before GOAWAY: %v, want the server-closed error", err)
	}
	if got := s.accepts.Load(); got != 3 {
		t.Fatalf("%d connections, want 3 (no retry of a processed POST)", got)
	}
}

// TestH2ResetAndCancel: RST_STREAM from the server fails only its request
// (HTTP2Error), a cancelled request resets only its stream, and the
// connection carries the next requests.
func TestH2ResetAndCancel(t *testing.T) {
	rst := make(chan h2.Frame, 1)
	s := newH2Raw(t, func(sc *h2RawConn) {
		id := sc.request()
		sc.write(h2.AppendRSTStream(nil, id, h2.ErrCodeInternal))
		// The next request is left unanswered until the client resets it.
		sc.request()
		f, err := sc.next(h2.FrameRSTStream)
		if err == nil {
			rst <- f
		}
		id = sc.request()
		sc.ok(id, "after")
		sc.waitClosed()
	})
	c := s.client()
	defer c.CloseIdleConnections()
	wantH2Err(t, h2get(t, c, s.url("/reset")), h2.ErrCodeInternal, false)
	ctx, cancel := context.WithCancel(context.Background())
	var req Request
	var resp Response
	req.SetURL(s.url("/slow"))
	done := make(chan error)
	go func() { done <- c.Do(ctx, &req, &resp) }()
	for c.h2Active(s.addr) != 1 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Do: %v", err)
	}
	if f := <-rst; f.Code != h2.ErrCodeCancel || f.StreamID != 3 {
		t.Fatalf("server got RST_STREAM %v on stream %d, want CANCEL on 3", f.Code, f.StreamID)
	}
	if err := h2get(t, c, s.url("/after")); err != nil {
		t.Fatal(err)
	}
	if got := s.accepts.Load(); got != 1 {
		t.Fatalf("%d connections, want 1", got)
	}
}

// h2Active returns the streams in use on the origin's HTTP/2 connections.
func (c *Client) h2Active(addr string) int {
	c.mu.RLock()
	p := c.pools["http://"+addr]
	c.mu.RUnlock()
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, hc := range p.h2s {
		hc.mu.Lock()
		n += hc.active
		hc.mu.Unlock()
	}
	return n
}

// TestH2HardenedHeaders: a response header list over 64 KiB fails its
// request (ErrHTTP2HeaderListTooLarge) and the connection goes on; a
// header block that keeps growing in CONTINUATION frames, and a dynamic
// table size update past the 4 KiB the client allows, end the connection
// with GOAWAY, having held at most 128 KiB of block.
func TestH2HardenedHeaders(t *testing.T) {
	var n atomic.Int32
	codes := make(chan h2.ErrCode, 2)
	s := newH2Raw(t, func(sc *h2RawConn) {
		switch n.Add(1) {
		case 1:
			id := sc.request()
			b := sc.head(id, true, ":status", "200", "x-big", strings.Repeat("v", 70<<10))
			sc.write(b)
			id = sc.request()
			sc.ok(id, "after")
			sc.waitClosed()
		case 2:
			id := sc.request()
			b := sc.head(id, false, ":status", "200")
			b[4] &^= byte(h2.FlagEndHeaders)
			sc.write(b)
			frag := make([]byte, 16<<10)
			for {
				if sc.write(h2.AppendFrameHeader(nil, len(frag), h2.FrameContinuation, 0, id)) != nil || sc.write(frag) != nil {
					break
				}
			}
			code, _ := sc.waitClosed()
			codes <- code
		case 3:
			id := sc.request()
			// Dynamic table size update to 1 MiB (RFC 7541 §6.3).
			block := []byte{0x3f, 0xe1, 0xff, 0x3f, 0x88}
			sc.write(h2.AppendHeaders(nil, id, block, true, 1<<14))
			code, _ := sc.waitClosed()
			codes <- code
		}
	})
	c := s.client()
	defer c.CloseIdleConnections()
	if err := h2get(t, c, s.url("/big")); !errors.Is(err, ErrHTTP2HeaderListTooLarge) {
		t.Fatalf("70 KiB header: %v, want ErrHTTP2HeaderListTooLarge", err)
	}
	if err := h2get(t, c, s.url("/after")); err != nil {
		t.Fatalf("next request on the connection: %v", err)
	}
	c.CloseIdleConnections()
	wantH2Err(t, h2get(t, c, s.url("/continuation")), h2.ErrCodeEnhanceYourCalm, true)
	if code := <-codes; code != h2.ErrCodeEnhanceYourCalm {
		t.Fatalf("CONTINUATION flood: server got GOAWAY %v", code)
	}
	wantH2Err(t, h2get(t, c, s.url("/table")), h2.ErrCodeCompression, true)
	if code := <-codes; code != h2.ErrCodeCompression {
		t.Fatalf("table size update: server got GOAWAY %v", code)
	}
}

// TestH2HardenedFloods: a server that sends SETTINGS or PING frames
// without reading the acknowledgements makes the client queue at most
// h2MaxControl bytes of them, then end the connection with
// GOAWAY(ENHANCE_YOUR_CALM).
func TestH2HardenedFloods(t *testing.T) {
	for _, kind := range []string{"settings", "ping"} {
		t.Run(kind, func(t *testing.T) {
			var conn atomic.Pointer[h2Conn]
			ready := make(chan struct{})
			s := newH2Raw(t, func(sc *h2RawConn) {
				sc.request()
				<-ready // the test holds the client's connection
				var frame []byte
				for range 1024 {
					if kind == "settings" {
						frame = h2.AppendSettings(frame, nil)
					} else {
						frame = h2.AppendPing(frame, false, [8]byte{1})
					}
				}
				// Never read again: the client's answers pile up.
				for sc.write(frame) == nil {
				}
			})
			c := s.client()
			done := make(chan error)
			go func() { done <- h2get(t, c, s.url("/")) }()
			for {
				if hc := c.anyH2(s.addr); hc != nil {
					conn.Store(hc)
					break
				}
				time.Sleep(time.Millisecond)
			}
			close(ready)
			err := <-done
			wantH2Err(t, err, h2.ErrCodeEnhanceYourCalm, true)
			hc := conn.Load()
			hc.mu.Lock()
			queued := len(hc.out)
			hc.mu.Unlock()
			if queued > h2MaxOutput+h2MaxControl {
				t.Fatalf("%d bytes queued for the server, over %d", queued, h2MaxOutput+h2MaxControl)
			}
		})
	}
}

// anyH2 returns one of the origin's HTTP/2 connections.
func (c *Client) anyH2(addr string) *h2Conn {
	c.mu.RLock()
	p := c.pools["http://"+addr]
	c.mu.RUnlock()
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.h2s) == 0 {
		return nil
	}
	return p.h2s[0]
}

// TestH2HardenedFlow: a WINDOW_UPDATE past 2^31-1 ends the connection
// (FLOW_CONTROL_ERROR); DATA past the window the client granted ends it
// too, with at most one stream window (256 KiB) buffered for a body
// nobody reads; a body over MaxResponseBodySize fails its request and
// resets only its stream.
func TestH2HardenedFlow(t *testing.T) {
	var n atomic.Int32
	rst := make(chan h2.Frame, 1)
	s := newH2Raw(t, func(sc *h2RawConn) {
		switch n.Add(1) {
		case 1:
			sc.request()
			sc.write(h2.AppendWindowUpdate(nil, 0, 1<<31-1))
			sc.waitClosed()
		case 2:
			id := sc.request()
			sc.write(sc.head(id, false, ":status", "200"))
			chunk := make([]byte, 16<<10)
			for sc.write(h2.AppendData(nil, id, chunk, false)) == nil {
			}
		case 3:
			// 160 KiB: within the windows the client grants before its
			// first request (256 KiB per stream, 1 MiB on the
			// connection), over MaxResponseBodySize; never END_STREAM.
			id := sc.request()
			sc.write(sc.head(id, false, ":status", "200"))
			chunk := make([]byte, 16<<10)
			for range 10 {
				if sc.write(h2.AppendData(nil, id, chunk, false)) != nil {
					return
				}
			}
			f, err := sc.next(h2.FrameRSTStream)
			if err == nil {
				rst <- f
			}
			sc.waitClosed()
		}
	})
	c := s.client()
	defer c.CloseIdleConnections()
	wantH2Err(t, h2get(t, c, s.url("/window")), h2.ErrCodeFlowControl, true)

	var req Request
	var resp Response
	req.SetURL(s.url("/data"))
	if err := c.DoStream(context.Background(), &req, &resp); err != nil {
		t.Fatal(err)
	}
	st := resp.br.h2
	for {
		st.c.mu.Lock()
		err, buffered := st.err, cap(st.buf)
		st.c.mu.Unlock()
		if buffered > 2*h2StreamWindow {
			t.Fatalf("%d bytes buffered for an unread stream, over %d", buffered, 2*h2StreamWindow)
		}
		if err != nil {
			wantH2Err(t, err, h2.ErrCodeFlowControl, true)
			break
		}
		time.Sleep(time.Millisecond)
	}
	resp.Reset()

	c.MaxResponseBodySize = 100 << 10
	req.SetURL(s.url("/endless"))
	if err := c.Do(context.Background(), &req, &resp); !errors.Is(err, ErrBodyTooLarge) {
		t.Fatalf("endless body: %v, want ErrBodyTooLarge", err)
	}
	if f := <-rst; f.Code != h2.ErrCodeCancel {
		t.Fatalf("body over the limit: server got RST_STREAM %v, want CANCEL", f.Code)
	}
	if a := c.h2Active(s.addr); a != 0 {
		t.Fatalf("%d streams still held", a)
	}
}

// TestH2NeverEnds: a response that never ends is bounded by the client's
// Timeout; its stream is reset and its slot freed, and the connection goes
// on.
func TestH2NeverEnds(t *testing.T) {
	s := newH2Raw(t, func(sc *h2RawConn) {
		id := sc.request()
		sc.write(sc.head(id, false, ":status", "200"))
		sc.write(h2.AppendData(nil, id, []byte("partial"), false))
		if f, err := sc.next(h2.FrameRSTStream); err != nil || f.StreamID != id {
			return
		}
		id = sc.request()
		sc.ok(id, "next")
		sc.waitClosed()
	})
	c := s.client()
	defer c.CloseIdleConnections()
	c.Timeout = 200 * time.Millisecond
	if err := h2get(t, c, s.url("/hang")); !errors.Is(err, ErrRequestTimeout) {
		t.Fatalf("never-ending body: %v, want ErrRequestTimeout", err)
	}
	if a := c.h2Active(s.addr); a != 0 {
		t.Fatalf("%d streams still held", a)
	}
	c.Timeout = 0
	if err := h2get(t, c, s.url("/next")); err != nil {
		t.Fatal(err)
	}
	if got := s.accepts.Load(); got != 1 {
		t.Fatalf("%d connections, want 1", got)
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	n atomic.Int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	r.n.Add(int64(len(p)))
	return len(p), nil
}

// TestH2BodyBackpressure: a request body stream is read only as fast as
// the server's windows open: against a server that grants nothing beyond
// the initial 65,535 bytes, the client reads at most that and one 16 KiB
// chunk of the body, and the request ends with its context.
func TestH2BodyBackpressure(t *testing.T) {
	s := newH2Raw(t, func(sc *h2RawConn) {
		sc.request()
		sc.waitClosed() // reads, never grants window
	})
	c := s.client()
	defer c.CloseIdleConnections()
	body := &countingReader{}
	var req Request
	var resp Response
	req.SetURL(s.url("/upload"))
	req.SetMethod("PUT")
	req.SetBodyStream(body, 10<<20)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Do(ctx, &req, &resp) }()
	// Wait until the client has used the window and blocks on it.
	for {
		if hc := c.anyH2(s.addr); hc != nil {
			hc.mu.Lock()
			win := hc.sendWin
			hc.mu.Unlock()
			if win == 0 {
				break
			}
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Do: %v", err)
	}
	if n := body.n.Load(); n > 65535+16<<10 {
		t.Fatalf("read %d bytes of the body with a 65,535-byte window", n)
	}
}

// TestH2PingTimeout: with HTTP2ReadIdleTimeout set, a connection whose
// server stops answering is sent a PING, and closed when no frame comes
// back within HTTP2PingTimeout; its request fails with ErrHTTP2PingTimeout
// (after its retries on new connections, as a GET).
func TestH2PingTimeout(t *testing.T) {
	pinged := make(chan bool, 1)
	s := newH2Raw(t, func(sc *h2RawConn) {
		sc.request()
		f, err := sc.next(h2.FramePing)
		select {
		case pinged <- err == nil && !f.Ack:
		default: // a retry's connection
		}
		sc.waitClosed()
	})
	c := s.client()
	c.HTTP2ReadIdleTimeout = 50 * time.Millisecond
	c.HTTP2PingTimeout = 50 * time.Millisecond
	if err := h2get(t, c, s.url("/silent")); !errors.Is(err, ErrHTTP2PingTimeout) {
		t.Fatalf("Do: %v, want ErrHTTP2PingTimeout", err)
	}
	if !<-pinged {
		t.Fatal("the server got no PING")
	}
}
