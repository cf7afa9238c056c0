package http3

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
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

// TestClientCancelStream: cancelling a request's context resets only its
// stream (H3_REQUEST_CANCELLED, seen by the server); a request on the
// same connection meanwhile completes, and the connection stays.
func TestClientCancelStream(t *testing.T) {
	got := make(chan struct{}, 2)
	stoppedWith := make(chan h3.ErrorCode, 2)
	p := startRawPeer(t, &rawPeer{handle: func(qc *quic.Conn, s *quic.Stream, n int) {
		if n != 2 {
			s.Write(headers(":status", "200"))
			got <- struct{}{}
			var err error
			for err == nil {
				_, err = s.Write(dataFrame([]byte("x")))
				time.Sleep(10 * time.Millisecond)
			}
			var se *quic.StreamError
			if errors.As(err, &se) {
				stoppedWith <- h3.ErrorCode(se.ErrorCode)
			}
			return
		}
		s.Write(headers(":status", "200"))
		s.Write(dataFrame([]byte("second")))
		s.Close()
	}})
	c, tr, base := hardClient(t, p, 0)
	before := settledHeap()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		var req client.Request
		var resp client.Response
		req.SetURL(url(p, "/slow"))
		errc <- c.Do(ctx, &req, &resp)
	}()
	<-got
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled request: %v, want context.Canceled", err)
	}
	select {
	case code := <-stoppedWith:
		if code != h3.CodeRequestCancelled {
			t.Errorf("server's stream stopped with %v, want H3_REQUEST_CANCELLED", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled stream was not stopped")
	}
	nextOK(t, c, p, 200, 1) // a cancel resets only its stream
	var req client.Request
	var resp client.Response

	// Cancelled while the caller reads the body.
	ctx, cancel = context.WithCancel(context.Background())
	req.SetURL(url(p, "/slow"))
	if err := c.DoStream(ctx, &req, &resp); err != nil {
		t.Fatal(err)
	}
	<-got
	body := resp.BodyStream()
	if _, err := body.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := io.Copy(io.Discard, body); !errors.Is(err, context.Canceled) {
		t.Errorf("body read after cancel: %v, want context.Canceled", err)
	}
	if code := <-stoppedWith; code != h3.CodeRequestCancelled {
		t.Errorf("server's stream stopped with %v, want H3_REQUEST_CANCELLED", code)
	}
	resp.Reset()
	if n := p.conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1: a cancel resets only its stream", n)
	}
	closeAndCheck(t, tr, base, before, 512<<10)
}

// endless is a request body without end that counts what was read.
type endless struct{ n atomic.Int64 }

func (e *endless) Read(p []byte) (int, error) {
	e.n.Add(int64(len(p)))
	return len(p), nil
}

// TestClientBodyBackpressure: a request body stream is read only as fast
// as the server's flow control admits it: against a server that reads
// nothing, what the client took from the body stays within the server's
// stream window (256 KiB here) and the client's chunk.
func TestClientBodyBackpressure(t *testing.T) {
	const window = 256 << 10
	qconf := &quic.Config{MaxIncomingStreams: 100, MaxIdleTimeout: 5 * time.Second}
	setWindows(qconf, window, 4*window)
	p := startRawPeer(t, &rawPeer{raw: true, quic: qconf, handle: func(qc *quic.Conn, s *quic.Stream, n int) {
		<-qc.Context().Done() // reads nothing
	}})
	c, tr, base := hardClient(t, p, 0)
	before := settledHeap()
	body := &endless{}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		var req client.Request
		var resp client.Response
		req.SetMethod("POST")
		req.SetURL(url(p, "/upload"))
		req.SetBodyStream(body, -1)
		errc <- c.Do(ctx, &req, &resp)
	}()
	for i := 0; body.n.Load() < window/2; i++ {
		if i == 1000 {
			t.Fatalf("only %d B of the body read", body.n.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // room to overrun, were it possible
	if n := body.n.Load(); n > window+256<<10 {
		t.Errorf("%d B of the body read against a server that reads nothing, want at most its %d B window and 256 KiB", n, window)
	} else {
		t.Logf("%d B of the body read against a server that reads nothing (window %d B)", n, window)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled upload: %v", err)
	}
	closeAndCheck(t, tr, base, before, 1<<20)
}

// TestClientIdleTimeout: a connection that carries nothing for
// IdleTimeout closes and leaves the pool; the next request dials anew.
func TestClientIdleTimeout(t *testing.T) {
	p := startRawPeer(t, &rawPeer{handle: func(qc *quic.Conn, s *quic.Stream, n int) {
		s.Write(headers(":status", "204"))
		s.Close()
	}})
	base := runtime.NumGoroutine()
	tr := &Transport{TLSConfig: p.conf, IdleTimeout: 200 * time.Millisecond}
	c := NewClient(tr)
	var req client.Request
	var resp client.Response
	for i := range 2 {
		req.SetURL(url(p, "/"))
		if err := c.Do(context.Background(), &req, &resp); err != nil || resp.StatusCode() != 204 {
			t.Fatalf("request %d: %v %d", i, err, resp.StatusCode())
		}
		for j := 0; tr.Conns() != 0; j++ {
			if j == 1000 {
				t.Fatalf("request %d: the idle connection is still open", i)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if n := p.conns.Load(); n != 2 {
		t.Errorf("%d connections dialled, want 2", n)
	}
	tr.Close()
	waitGoroutines(t, base)
}

// TestClientStreamLimit: requests share one connection up to the
// server's stream limit (10 here); past it the client opens another, so
// that 25 requests held open at once take 3 connections.
func TestClientStreamLimit(t *testing.T) {
	const limit, n = 10, 25
	var bs barriers
	p := startRawPeer(t, &rawPeer{quic: &quic.Config{MaxIncomingStreams: limit, MaxIdleTimeout: 5 * time.Second},
		handle: func(qc *quic.Conn, s *quic.Stream, _ int) {
			if bs.wait("all", n) {
				s.Write(headers(":status", "204"))
			}
			s.Close()
		}})
	c, tr, base := hardClient(t, p, 0)
	errs := make(chan error, n)
	for range n {
		go func() {
			var req client.Request
			var resp client.Response
			req.SetURL(url(p, "/"))
			err := c.Do(context.Background(), &req, &resp)
			if err == nil && resp.StatusCode() != 204 {
				err = fmt.Errorf("status %d", resp.StatusCode())
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := p.conns.Load(); got != 3 {
		t.Errorf("%d connections for %d requests at once with a limit of %d streams, want 3", got, n, limit)
	}
	tr.Close()
	waitGoroutines(t, base)
}

// TestClientNo0RTT: against a server that accepts 0-RTT, a client holding
// a session ticket resumes the session but sends nothing before the
// handshake completes: 0-RTT is off (a replayed request could act twice).
func TestClientNo0RTT(t *testing.T) {
	pki := newInteropPKI(t)
	ln, err := quic.ListenAddrEarly("127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pki.tls}, NextProtos: []string{"h3"}},
		&quic.Config{Allow0RTT: true, MaxIdleTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type state struct{ resumed, early bool }
	states := make(chan state, 4)
	go func() {
		for {
			qc, err := ln.Accept(context.Background())
			if err != nil {
				return
			}
			go func() {
				ctrl, _ := qc.OpenUniStream()
				ctrl.Write(controlStream(h3.AppendSettings(nil, &h3.Settings{})))
				s, err := qc.AcceptStream(context.Background())
				if err != nil {
					return
				}
				<-qc.HandshakeComplete()
				cs := qc.ConnectionState()
				states <- state{cs.TLS.DidResume, cs.Used0RTT}
				io.Copy(io.Discard, s)
				s.Write(headers(":status", "204"))
				s.Close()
			}()
		}
	}()
	tr := &Transport{TLSConfig: &tls.Config{RootCAs: pki.pool(), ServerName: "localhost", ClientSessionCache: tls.NewLRUClientSessionCache(4)}}
	defer tr.Close()
	c := NewClient(tr)
	var req client.Request
	var resp client.Response
	for i := range 2 {
		req.SetURL("https://" + ln.Addr().String() + "/")
		if err := c.Do(context.Background(), &req, &resp); err != nil || resp.StatusCode() != 204 {
			t.Fatalf("request %d: %v %d", i, err, resp.StatusCode())
		}
		st := <-states
		if st.early {
			t.Errorf("connection %d used 0-RTT", i)
		}
		if i == 1 && !st.resumed {
			t.Errorf("the second connection did not resume the session: the check of 0-RTT proves nothing")
		}
		c.CloseIdleConnections()
	}
}

// TestClientPeerFieldLimit: a request whose field section exceeds the
// server's SETTINGS_MAX_FIELD_SECTION_SIZE is not sent; the connection
// serves the next one.
func TestClientPeerFieldLimit(t *testing.T) {
	var sawBig atomic.Bool
	p := startRawPeer(t, &rawPeer{
		noSettings: true,
		control: func(qc *quic.Conn, ctrl *quic.SendStream) {
			ctrl.Write(h3.AppendSettings(nil, &h3.Settings{MaxFieldSectionSize: 300, HasMaxFieldSectionSize: true}))
		},
		raw: true,
		handle: func(qc *quic.Conn, s *quic.Stream, n int) {
			b, err := io.ReadAll(s)
			if strings.Contains(string(b), "bbbbbbbb") {
				sawBig.Store(true)
			}
			if err == nil {
				s.Write(headers(":status", "204"))
			}
			s.Close()
		},
	})
	c, tr, base := hardClient(t, p, 5*time.Second)
	nextOK(t, c, p, 204, 1)
	// Wait for the SETTINGS to have been read.
	for i := 0; ; i++ {
		tr.mu.Lock()
		var m uint64
		for _, pl := range tr.pools {
			for _, cc := range pl.conns {
				m = cc.peerMaxField.Load()
			}
		}
		tr.mu.Unlock()
		if m == 300 {
			break
		}
		if i == 1000 {
			t.Fatalf("server's SETTINGS not applied (max field section %d)", m)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var req client.Request
	var resp client.Response
	req.SetURL(url(p, "/"))
	req.AddHeader("X-Big", strings.Repeat("b", 300))
	if err := c.Do(context.Background(), &req, &resp); !errors.Is(err, ErrRequestFieldsTooLarge) {
		t.Fatalf("request over the server's limit: %v, want ErrRequestFieldsTooLarge", err)
	}
	nextOK(t, c, p, 204, 1)
	if sawBig.Load() {
		t.Error("the oversized request's fields reached the server")
	}
	tr.Close()
	waitGoroutines(t, base)
}
