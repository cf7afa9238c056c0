package h2

import (
	"crypto/tls"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/riptide-http/riptide/internal/h2test"
	"golang.org/x/net/http2"
)

// testParker is a Parker over an ordinary connection, for the tests: it
// reads with a 1 ms deadline (a timeout is "nothing now"; crypto/tls keeps
// its state on it), waits by polling, and hands the parked connection to
// the test, which resumes it.
type testParker struct {
	nc     net.Conn
	parked chan *Conn
	woken  chan struct{}
}

func (p *testParker) TryRead(b []byte) (int, error) {
	_ = p.nc.SetReadDeadline(time.Now().Add(time.Millisecond))
	n, err := p.nc.Read(b)
	_ = p.nc.SetReadDeadline(time.Time{})
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = nil
	}
	return n, err
}

func (p *testParker) WaitRead(until int64) error {
	select {
	case <-p.woken:
	case <-time.After(time.Millisecond):
	}
	return nil
}

func (p *testParker) Park(hc *Conn) bool {
	p.parked <- hc
	return true
}

func (p *testParker) Wake() {
	select {
	case p.woken <- struct{}{}:
	default:
	}
}

// TestParkedKeepsNoTable serves GET / twice over HTTP/2 over TLS on a
// connection that parks between them, and checks what the parked
// connection keeps (issue 36, HTTP/2 over TLS at most 16 KiB of RSS per
// idle connection): no stream table and no writer channel (they go back
// to the pool with the buffers, h2ConnBufs) and no TLS state (made on the
// first Stream.TLS only; the routes never ask). The second request, on the
// resumed connection, is answered as the first.
func TestParkedKeepsNoTable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p := &testParker{parked: make(chan *Conn, 1), woken: make(chan struct{}, 1)}
	served := make(chan bool, 3)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{h2test.Cert(t)}, NextProtos: []string{"h2"}})
		if tc.Handshake() != nil {
			c.Close()
			return
		}
		p.nc = tc
		hc := NewConn(&Config{Handler: newTestApp(), MaxHeaderBytes: testMaxHeaderBytes}, tc, nil, nil, nil)
		hc.UseParker(p)
		served <- hc.Serve(false, nil)
	}()

	cli, err := tls.Dial("tcp", ln.Addr().String(), h2test.ClientTLS(t, "h2"))
	if err != nil {
		t.Fatal(err)
	}
	a := h2test.NewAttacker(t, cli, "https", "a")
	// get sends GET / on stream id and returns the answer's body.
	get := func(id uint32) string {
		if err := a.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: a.RequestBlock("/"), EndStream: true, EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
		var body []byte
		for end := false; !end; {
			f, err := a.Fr.ReadFrame()
			if err != nil {
				t.Fatalf("stream %d: %v", id, err)
			}
			if d, ok := f.(*http2.DataFrame); ok && d.StreamID == id {
				body, end = append(body, d.Data()...), d.StreamEnded()
			} else if s, ok := f.(*http2.SettingsFrame); ok && !s.IsAck() {
				a.Fr.WriteSettingsAck()
			}
		}
		return string(body)
	}
	parked := func(when string) *Conn {
		t.Helper()
		var hc *Conn
		select {
		case hc = <-p.parked:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the connection did not park", when)
		}
		hc.mu.Lock()
		defer hc.mu.Unlock()
		if hc.streams != nil || hc.writeReady != nil || hc.bufs != nil || hc.tls.Load() != nil {
			t.Errorf("%s: the parked connection keeps its stream table (%v), writer channel (%v), buffers (%v) or TLS state (%v)",
				when, hc.streams != nil, hc.writeReady != nil, hc.bufs != nil, hc.tls.Load() != nil)
		}
		return hc
	}

	if got := get(1); got != helloBody {
		t.Fatalf("stream 1: %q", got)
	}
	hc := parked("after stream 1")
	if !<-served {
		t.Fatal("Serve did not report the park")
	}
	go func() { served <- hc.Resume() }()
	if got := get(3); got != helloBody {
		t.Fatalf("stream 3, on the resumed connection: %q", got)
	}
	hc = parked("after stream 3")
	if !<-served {
		t.Fatal("Resume did not report the park")
	}
	if st := (&Stream{hc: hc}); !st.OverTLS() || st.TLS() == nil || st.TLS().NegotiatedProtocol != "h2" {
		t.Errorf("OverTLS %v, TLS state %v: want true and h2", st.OverTLS(), st.TLS())
	}
	cli.Close()
	go func() { served <- hc.Resume() }()
	select {
	case again := <-served:
		if again {
			t.Error("the connection parked after the client closed it")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the resumed connection did not end after the client closed")
	}
}
