package websocket

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/riptide-http/riptide"
	"github.com/riptide-http/riptide/internal/israce"
	"github.com/riptide-http/riptide/ws"
	"golang.org/x/sys/unix"
)

// A prepared message broadcast to parked event-driven peers from another
// goroutine arrives whole on each, compressed or not as each negotiated;
// writing it to one more receiver allocates nothing, and a receiver that
// does not read queues the prepared bytes themselves, not a copy.
func TestEventPreparedBroadcast(t *testing.T) {
	peers := make(chan *Peer, 16)
	url, _ := serveEvents(t, &Options{Compression: true, WriteQueueLimit: 64 << 20}, Handler{
		OnOpen: func(p *Peer) { peers <- p },
	})
	const n = 8
	var clients []*Conn
	var servers []*Peer
	for i := range n {
		clients = append(clients, dial(t, url, &Options{Compression: i%2 == 0}))
		servers = append(servers, <-peers)
	}
	msg := bytes.Repeat([]byte("broadcast "), 100)
	pm, err := NewPreparedMessage(TextMessage, msg, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range servers {
		if err := p.WritePreparedMessage(pm); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range clients {
		mt, got, err := c.ReadMessage()
		if err != nil || mt != TextMessage || !bytes.Equal(got, msg) {
			t.Errorf("client %d: %v, %d bytes, %v", i, mt, len(got), err)
		}
	}
	if !israce.Enabled {
		p, c := servers[1], clients[1]
		if allocs := testing.AllocsPerRun(100, func() {
			if err := p.WritePreparedMessage(pm); err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.ReadMessage(); err != nil {
				t.Fatal(err)
			}
		}); allocs != 0 {
			t.Errorf("%v allocations per receiver, want 0", allocs)
		}
	}
	// Client 3 stops reading: once its socket is full the queue holds
	// references to pm's bytes.
	big, err := NewPreparedMessage(BinaryMessage, make([]byte, 256<<10), false)
	if err != nil {
		t.Fatal(err)
	}
	p := servers[3]
	for range 64 {
		if err := p.WritePreparedMessage(big); err != nil {
			t.Fatal(err)
		}
	}
	p.ev.mu.Lock()
	queued, shared := p.ev.qlen, 0
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(big.plain)))
	for _, b := range p.ev.q {
		// pm's bytes, or the tail of them left by a partial write.
		if at := uintptr(unsafe.Pointer(unsafe.SliceData(b))); at >= lo && at+uintptr(len(b)) <= lo+uintptr(len(big.plain)) {
			shared++
		}
	}
	segs := len(p.ev.q)
	p.ev.mu.Unlock()
	if queued == 0 || shared != segs {
		t.Errorf("%d bytes queued in %d segments, %d of them pm's own bytes; want a queue of pm's bytes only", queued, segs, shared)
	}
}

// With PingInterval under ReadTimeout, a peer that answers pings (a Conn
// that reads) stays connected while idle well past ReadTimeout, pinged
// all along; a peer that does not answer is closed at ReadTimeout.
func TestEventKeepAlive(t *testing.T) {
	eachNet(t, testEventKeepAlive)
}

// testEventKeepAlive is TestEventKeepAlive over en.
func testEventKeepAlive(t *testing.T, en *evNet) {
	url, closed := en.serveEvents(t, &Options{PingInterval: 100 * time.Millisecond, ReadTimeout: time.Second}, Handler{
		OnMessage: func(p *Peer, mt MessageType, msg []byte) { p.WriteMessage(mt, msg) },
	})
	c := en.dial(t, url, nil)
	pings := make(chan struct{}, 1000)
	c.SetPingHandler(func(data []byte) error {
		pings <- struct{}{}
		return c.WriteControl(PongMessage, data, time.Now().Add(time.Second))
	})
	echoed := make(chan error, 1)
	go func() {
		_, msg, err := c.ReadMessage() // answers the pings meanwhile
		if err == nil && string(msg) != "still here" {
			err = errors.New("echo " + string(msg))
		}
		echoed <- err
	}()
	time.Sleep(2500 * time.Millisecond) // idle: 2.5 read timeouts
	if err := c.WriteMessage(TextMessage, []byte("still here")); err != nil {
		t.Fatal(err)
	}
	if err := <-echoed; err != nil {
		t.Fatalf("after 2.5 s idle with pings answered: %v", err)
	}
	if len(pings) < 3 {
		t.Errorf("%d pings in 2.5 s at a 100 ms interval", len(pings))
	}
	select {
	case err := <-closed:
		t.Fatalf("closed while the peer answered pings: %v", err)
	default:
	}
	// A raw connection answers no ping.
	nc := en.conns(t, url, 1)[0]
	defer nc.Close()
	if err := waitClosed(t, closed); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("silent peer: OnClose %v, want %v", err, os.ErrDeadlineExceeded)
	}
}

// CloseWith from another goroutine on a parked peer: a client that
// answers ends the connection with its close frame (OnClose: the code it
// echoed); one that never answers is closed at CloseTimeout (OnClose:
// os.ErrDeadlineExceeded) and its socket too.
func TestEventCloseHandshake(t *testing.T) {
	eachNet(t, testEventCloseHandshake)
}

// testEventCloseHandshake is TestEventCloseHandshake over en.
func testEventCloseHandshake(t *testing.T, en *evNet) {
	peers := make(chan *Peer, 2)
	url, closed := en.serveEvents(t, &Options{CloseTimeout: 300 * time.Millisecond}, Handler{
		OnOpen: func(p *Peer) { peers <- p },
	})
	c := en.dial(t, url, nil)
	p := <-peers
	if err := p.CloseWith(4001, "bye"); err != nil {
		t.Fatal(err)
	}
	if err := p.CloseWith(4002, "again"); err != ErrClosed {
		t.Errorf("second CloseWith: %v, want ErrClosed", err)
	}
	if err := p.WriteMessage(TextMessage, []byte("late")); err != ErrClosed {
		t.Errorf("write after CloseWith: %v, want ErrClosed", err)
	}
	if _, _, err := c.ReadMessage(); CloseStatus(err) != 4001 {
		t.Errorf("client read: %v, want close 4001", err)
	}
	if err := waitClosed(t, closed); CloseStatus(err) != 4001 {
		t.Errorf("OnClose: %v, want the echoed 4001", err)
	}

	nc := en.conns(t, url, 1)[0] // never answers
	defer nc.Close()
	p = <-peers
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := waitClosed(t, closed); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("OnClose: %v, want %v", err, os.ErrDeadlineExceeded)
	}
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(nc)
	if err != nil {
		t.Errorf("the server did not close the socket: %v", err)
	}
	if h, n, _ := ws.ParseHeader(b); n == 0 || h.Op != ws.OpClose {
		t.Errorf("the client got %q, want a close frame", b)
	}
}

// The server's Close ends parked event-driven connections: OnClose gets
// ErrClosed for each and the clients see their sockets closed.
func TestEventServerClose(t *testing.T) {
	closed := make(chan error, 8)
	h := &Handler{OnClose: func(_ *Peer, err error) { closed <- err }}
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) { Serve(x, nil, h) })}
	url := serveServer(t, srv)
	conns := idleConns(t, url, 3)
	time.Sleep(50 * time.Millisecond) // let them park
	srv.Close()
	for range conns {
		if err := waitClosed(t, closed); err != ErrClosed {
			t.Errorf("OnClose: %v, want ErrClosed", err)
		}
	}
	for _, nc := range conns {
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadAll(nc); err != nil {
			t.Errorf("socket not closed: %v", err)
		}
		nc.Close()
	}
}

// Server.Shutdown asks parked event-driven connections to close: each
// client gets a close frame with 1001 (going away), and once it answers
// the connection ends (OnClose: the echoed 1001) and Shutdown returns.
func TestEventShutdown(t *testing.T) {
	eachNet(t, testEventShutdown)
}

// testEventShutdown is TestEventShutdown over en.
func testEventShutdown(t *testing.T, en *evNet) {
	closed := make(chan error, 8)
	h := &Handler{OnClose: func(_ *Peer, err error) { closed <- err }}
	srv := &riptide.Server{Handler: riptide.HandlerFunc(func(x *riptide.Ctx) { Serve(x, nil, h) })}
	url := en.serve(t, srv)
	const n = 3
	got := make(chan error, n)
	for range n {
		c := en.dial(t, url, nil)
		go func() {
			_, _, err := c.ReadMessage() // answers the close frame
			got <- err
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for range n {
		select {
		case err := <-got:
			if CloseStatus(err) != ws.CloseGoingAway {
				t.Errorf("client read: %v, want close 1001", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no close frame 10 s after Shutdown returned")
		}
		if err := waitClosed(t, closed); CloseStatus(err) != ws.CloseGoingAway {
			t.Errorf("OnClose: %v, want the echoed 1001", err)
		}
	}
}

// A message far longer than the write queue's bound and the socket
// buffers is echoed whole to a peer that reads it: it is queued whole, the
// bound applying to a peer that leaves the queue unread (Autobahn 9.1.6:
// a 16 MiB text message; refused with ErrWriteQueueFull when the bound
// counted the message itself).
func TestEventLargeEcho(t *testing.T) {
	eachNet(t, testEventLargeEcho)
}

// testEventLargeEcho is TestEventLargeEcho over en.
func testEventLargeEcho(t *testing.T, en *evNet) {
	url, _ := en.serveEvents(t, &Options{ReadLimit: 32 << 20}, Handler{
		OnMessage: func(p *Peer, mt MessageType, msg []byte) {
			if err := p.WriteMessage(mt, msg); err != nil {
				t.Errorf("echo of %d bytes: %v", len(msg), err)
			}
		},
	})
	c := en.dial(t, url, &Options{ReadLimit: 32 << 20})
	msg := bytes.Repeat([]byte("sixteen mebibytes "), 16<<20/18)
	if err := c.WriteMessage(TextMessage, msg); err != nil {
		t.Fatal(err)
	}
	if _, got, err := c.ReadMessage(); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("echo: %d bytes of %d, %v", len(got), len(msg), err)
	}
}

// dataSegsIn is the number of data segments c's socket has received.
func dataSegsIn(t *testing.T, c *Conn) uint32 {
	t.Helper()
	nc := c.NetConn()
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	rc, err := nc.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var info *unix.TCPInfo
	if err := rc.Control(func(fd uintptr) {
		info, err = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return info.Data_segs_in
}

// Messages written to parked peers while one turn delivers a burst (a
// publisher's messages read at once, broadcast from OnMessage) are
// gathered and reach each receiver in one write: one data segment for
// the burst, not one per message; they arrive whole and in order,
// whether prepared or not; over TLS in one record. Before: 8 segments
// for 8 messages.
func TestEventBroadcastCoalesced(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // no worker flushes a receiver mid-burst
	eachNet(t, testEventBroadcastCoalesced)
}

func testEventBroadcastCoalesced(t *testing.T, en *evNet) {
	const nsubs, burst = 4, 8
	// The burst allocates nothing (its prepared messages are made
	// before): no garbage collection starts during it, which could let a
	// worker flush a receiver before the burst's end.
	var payloads []string
	prepared := map[string]*PreparedMessage{}
	for i := range burst {
		payloads = append(payloads, fmt.Sprintf("message %d of the burst", i))
		pm, err := NewPreparedMessage(TextMessage, []byte(payloads[i]), false)
		if err != nil {
			t.Fatal(err)
		}
		prepared[payloads[i]] = pm
	}
	var subs []*Peer
	var pub atomic.Pointer[Peer] // stored once subs is complete
	opened := make(chan *Peer, 8)
	url, _ := en.serveEvents(t, nil, Handler{
		OnOpen: func(p *Peer) { opened <- p },
		OnMessage: func(p *Peer, mt MessageType, msg []byte) {
			if p != pub.Load() {
				return
			}
			pm := prepared[string(msg)]
			if pm == nil {
				t.Errorf("publisher sent %q", msg)
				return
			}
			var err error
			for i, s := range subs {
				if i%2 == 0 {
					err = s.WriteMessage(mt, msg)
				} else {
					err = s.WritePreparedMessage(pm)
				}
				if err != nil {
					t.Error(err)
				}
			}
		},
	})
	var clients []*Conn
	for range nsubs {
		clients = append(clients, en.dial(t, url, nil))
		subs = append(subs, <-opened)
	}
	pc := en.dial(t, url, nil)
	pub.Store(<-opened)
	// The receivers park once their first turn finds nothing to read.
	for _, p := range subs {
		waitParked(t, p)
	}
	before := make([]uint32, nsubs)
	for i, c := range clients {
		before[i] = dataSegsIn(t, c)
	}
	var b []byte
	for _, p := range payloads {
		b = append(b, maskedText(p)...)
	}
	runtime.GC() // none runs during the burst
	// One write: one segment (one record), one read by the server.
	if _, err := pc.NetConn().Write(b); err != nil {
		t.Fatal(err)
	}
	for i, c := range clients {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		for j, want := range payloads {
			if mt, got, err := c.ReadMessage(); err != nil || mt != TextMessage || string(got) != want {
				t.Fatalf("receiver %d, message %d: %v %q, %v; want %q", i, j, mt, got, err, want)
			}
		}
		if segs := dataSegsIn(t, c) - before[i]; segs != 1 {
			t.Errorf("receiver %d: %d messages in %d data segments, want 1", i, burst, segs)
		}
	}
}

// waitParked waits until p's connection is parked on its loop.
func waitParked(t *testing.T, p *Peer) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		p.ev.mu.Lock()
		parked := p.ev.parked
		p.ev.mu.Unlock()
		if parked {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the peer did not park")
		}
	}
}

// Frames gathered for a parked peer keep their order with the frames
// that do not fit (written at once, after what was gathered), with a
// close frame last: small, large, small, close arrive in that order.
func TestEventGatheredOrder(t *testing.T) {
	opened := make(chan *Peer, 1)
	url, closed := serveEvents(t, nil, Handler{OnOpen: func(p *Peer) { opened <- p }})
	c := dial(t, url, nil)
	p := <-opened
	waitParked(t, p)
	msgs := [][]byte{[]byte("small before"), bytes.Repeat([]byte("large "), 400), []byte("small after")}
	for _, m := range msgs {
		if err := p.WriteMessage(BinaryMessage, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.CloseWith(ws.CloseGoingAway, "bye"); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for i, want := range msgs {
		if _, got, err := c.ReadMessage(); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("message %d: %d bytes, %v; want %d bytes", i, len(got), err, len(want))
		}
	}
	var ce *CloseError
	if _, _, err := c.ReadMessage(); !errors.As(err, &ce) || ce.Code != ws.CloseGoingAway {
		t.Fatalf("after the messages: %v, want the close frame (1001)", err)
	}
	waitClosed(t, closed)
}
