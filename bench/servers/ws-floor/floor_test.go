//go:build linux

package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"golang.org/x/sys/unix"

	"github.com/riptide-http/riptide/bench/internal/wsserver"
)

// startFloor serves on a loopback port in this process until the test
// ends and returns the address.
func startFloor(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	s, err := newServer(ln)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.serve() }()
	t.Cleanup(func() {
		s.stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return addr
}

// dial opens a WebSocket with gorilla's client, which checks the 101 and
// its Sec-WebSocket-Accept.
func dial(t *testing.T, addr, path string) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{HandshakeTimeout: 30 * time.Second}
	c, resp, err := d.Dial("ws://"+addr+path, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	resp.Body.Close()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

// clientFrame is a masked client frame (FIN set) of opcode op.
func clientFrame(op byte, payload []byte) []byte {
	b := []byte{0x80 | op, 0}
	switch n := len(payload); {
	case n < 126:
		b[1] = 0x80 | byte(n)
	case n < 1<<16:
		b[1] = 0x80 | 126
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b[1] = 0x80 | 127
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	key := [4]byte{0x37, 0xfa, 0x21, 0x3d}
	b = append(b, key[:]...)
	for i, c := range payload {
		b = append(b, c^key[i&3])
	}
	return b
}

// serverFrame is the unmasked frame the server must send.
func serverFrame(op byte, payload []byte) []byte {
	b := []byte{0x80 | op, 0}
	switch n := len(payload); {
	case n < 126:
		b[1] = byte(n)
	case n < 1<<16:
		b[1] = 126
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b[1] = 127
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	return append(b, payload...)
}

// TestFloorEcho: text and binary messages of 0, 125, 126 (16-bit
// length), 65535 and 65536 bytes (64-bit length) come back the same,
// over loopback through the epoll loop.
func TestFloorEcho(t *testing.T) {
	c := dial(t, startFloor(t), wsserver.EchoPath)
	for _, n := range []int{0, 1, 125, 126, 4090, 65535, 65536} {
		for _, mt := range []int{websocket.TextMessage, websocket.BinaryMessage} {
			msg := bytes.Repeat([]byte{'a' + byte(n%26)}, n)
			if err := c.WriteMessage(mt, msg); err != nil {
				t.Fatal(err)
			}
			gt, got, err := c.ReadMessage()
			if err != nil {
				t.Fatalf("%d-byte message: %v", n, err)
			}
			if gt != mt || !bytes.Equal(got, msg) {
				t.Fatalf("%d-byte message type %d: echoed type %d, %d bytes", n, mt, gt, len(got))
			}
		}
	}
}

// TestFloorPingAndClose: a ping is answered with a pong carrying its
// payload, before the message sent after it; a close frame is echoed and
// the connection closed.
func TestFloorPingAndClose(t *testing.T) {
	c := dial(t, startFloor(t), wsserver.EchoPath)
	pongs := make(chan string, 1)
	c.SetPongHandler(func(data string) error { pongs <- data; return nil })
	if err := c.WriteControl(websocket.PingMessage, []byte("are you there"), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteMessage(websocket.TextMessage, []byte("after")); err != nil {
		t.Fatal(err)
	}
	if _, got, err := c.ReadMessage(); err != nil || string(got) != "after" {
		t.Fatalf("message %q, %v", got, err)
	}
	select {
	case p := <-pongs:
		if p != "are you there" {
			t.Fatalf("pong %q", p)
		}
	default:
		t.Fatal("no pong before the echoed message")
	}

	msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bye")
	if err := c.WriteControl(websocket.CloseMessage, msg, time.Time{}); err != nil {
		t.Fatal(err)
	}
	_, _, err := c.ReadMessage()
	ce, ok := err.(*websocket.CloseError)
	if !ok || ce.Code != websocket.CloseNormalClosure || ce.Text != "bye" {
		t.Fatalf("after the close frame: %v", err)
	}
	if _, err := c.UnderlyingConn().Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read after the close: %v, want EOF", err)
	}
}

// TestFloorFramesInOneWrite: two frames in one write are both echoed;
// a frame written in two pieces (mid-header, then mid-payload) is echoed
// once whole.
func TestFloorFramesInOneWrite(t *testing.T) {
	c := dial(t, startFloor(t), wsserver.EchoPath)
	raw := c.UnderlyingConn()
	two := append(clientFrame(websocket.TextMessage, []byte("first")), clientFrame(websocket.BinaryMessage, bytes.Repeat([]byte("2"), 300))...)
	if _, err := raw.Write(two); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"first", strings.Repeat("2", 300)} {
		if _, got, err := c.ReadMessage(); err != nil || string(got) != want {
			t.Fatalf("message %d: %d bytes, %v", i, len(got), err)
		}
	}
	f := clientFrame(websocket.TextMessage, bytes.Repeat([]byte("s"), 5000))
	for _, piece := range [][]byte{f[:3], f[3:2000], f[2000:]} {
		if _, err := raw.Write(piece); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond) // likely separate reads; TestFloorSplitReads makes sure
	}
	if _, got, err := c.ReadMessage(); err != nil || string(got) != strings.Repeat("s", 5000) {
		t.Fatalf("split frame: %d bytes, %v", len(got), err)
	}
}

// TestFloorBroadcast: each published message reaches each of 3
// subscribers once, in order, and not the publisher (whose pong, sent
// after the messages, is the next thing it reads); a subscriber that
// closes leaves the group.
func TestFloorBroadcast(t *testing.T) {
	addr := startFloor(t)
	var subs []*websocket.Conn
	for range 3 {
		subs = append(subs, dial(t, addr, wsserver.SubscribePath)) // in the group once the 101 is written
	}
	pub := dial(t, addr, wsserver.PublishPath)
	msgs := []string{"one", strings.Repeat("two", 100)}
	for _, m := range msgs {
		if err := pub.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range subs {
		for _, want := range msgs {
			if _, got, err := s.ReadMessage(); err != nil || string(got) != want {
				t.Fatalf("subscriber %d: %q, %v; want %q", i, got, err, want)
			}
		}
	}
	pongs := make(chan string, 1)
	pub.SetPongHandler(func(data string) error { pongs <- data; return nil })
	if err := pub.WriteControl(websocket.PingMessage, []byte("p"), time.Time{}); err != nil {
		t.Fatal(err)
	}
	pub.SetReadDeadline(time.Now().Add(30 * time.Second))
	go pub.ReadMessage() // serves the pong handler; returns at Close
	select {
	case p := <-pongs:
		if p != "p" {
			t.Fatalf("publisher's pong %q", p)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the publisher got no pong")
	}

	// Subscriber 0 leaves: the next message reaches the other two.
	subs[0].WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Time{})
	if _, _, err := subs[0].ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Fatalf("subscriber 0 after its close: %v", err)
	}
	pub2 := dial(t, addr, wsserver.PublishPath)
	if err := pub2.WriteMessage(websocket.BinaryMessage, []byte("three")); err != nil {
		t.Fatal(err)
	}
	for i, s := range subs[1:] {
		if mt, got, err := s.ReadMessage(); err != nil || mt != websocket.BinaryMessage || string(got) != "three" {
			t.Fatalf("subscriber %d: %q, %v", i+1, got, err)
		}
	}
}

// TestFloorHTTP: the heap path answers the JSON report and closes; an
// unknown path gets 404; a head over 4 KiB, an unmasked frame and a
// frame over 1 MiB close the connection with nothing written.
func TestFloorHTTP(t *testing.T) {
	addr := startFloor(t)
	resp, err := http.Get("http://" + addr + wsserver.HeapPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var hs map[string]int64
	if err := json.Unmarshal(body, &hs); err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, body %q: %v", resp.StatusCode, body, err)
	}
	if hs["heap_bytes"] <= 0 || hs["stack_bytes"] <= 0 || hs["goroutines"] <= 0 {
		t.Fatalf("heap report %s", body)
	}
	resp, err = http.Get("http://" + addr + "/nope")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("/nope: status %d", resp.StatusCode)
	}

	closed := func(name string, c net.Conn) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		// EOF, or a reset where the server closed with input unread.
		if n, err := io.Copy(io.Discard, c); n != 0 || err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("%s: %d bytes, %v; want the connection closed at once", name, n, err)
		}
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("GET / HTTP/1.1\r\nX: " + strings.Repeat("x", bufSize) + "\r\n\r\n"))
	closed("head over 4 KiB", c)

	for name, f := range map[string][]byte{
		"unmasked frame":   serverFrame(websocket.TextMessage, []byte("hi")),
		"frame over 1 MiB": clientFrame(websocket.BinaryMessage, make([]byte, maxPayload+1))[:14],
	} {
		ws := dial(t, addr, wsserver.EchoPath)
		ws.UnderlyingConn().Write(f)
		closed(name, ws.UnderlyingConn())
	}
}

// pair is a connected socket pair: the server side (non-blocking) in a
// conn of s, and the client's descriptor.
func pair(t *testing.T, s *server, m mode) (*conn, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	small := make([]byte, bufSize)
	c := &conn{fd: fds[0], mode: m, sub: -1, small: small, buf: small}
	for fds[0] >= len(s.conns) {
		s.conns = append(s.conns, nil)
	}
	s.conns[fds[0]] = c
	if m == modeSubscribe {
		c.sub = len(s.subs)
		s.subs = append(s.subs, c)
	}
	t.Cleanup(func() {
		s.close(c)
		unix.Close(fds[1])
	})
	return c, fds[1]
}

// readFull reads len(p) bytes from fd (blocking).
func readFull(t *testing.T, fd int, p []byte) {
	t.Helper()
	for n := 0; n < len(p); {
		m, err := unix.Read(fd, p[n:])
		if err != nil || m == 0 {
			t.Fatalf("read: %d, %v", m, err)
		}
		n += m
	}
}

// TestFloorSplitReads drives the frame code on a socket pair, one read
// per step: a frame cut after 1 byte, inside its 16-bit length, inside
// its key and inside its payload is echoed only once whole; three frames
// in one read (the last one partial) are echoed in order; a frame over
// 4 KiB grows the buffer, which goes back to the 4 KiB one after it.
func TestFloorSplitReads(t *testing.T) {
	s := &server{}
	c, peer := pair(t, s, modeEcho)
	f := clientFrame(websocket.BinaryMessage, bytes.Repeat([]byte("0123456789"), 30))
	want := serverFrame(websocket.BinaryMessage, bytes.Repeat([]byte("0123456789"), 30))
	got := make([]byte, len(want))
	for _, cuts := range [][]int{{1}, {3}, {6}, {100}, {1, 3, 6, 100}} {
		prev := 0
		for _, cut := range append(cuts, len(f)) {
			unix.Write(peer, f[prev:cut])
			s.readable(c, false)
			prev = cut
			if cut < len(f) && c.n != cut {
				t.Fatalf("cuts %v: %d bytes held after %d written", cuts, c.n, cut)
			}
		}
		readFull(t, peer, got)
		if !bytes.Equal(got, want) || c.n != 0 {
			t.Fatalf("cuts %v: echoed %q, %d bytes held", cuts, got, c.n)
		}
	}

	a, b := clientFrame(websocket.TextMessage, []byte("a")), clientFrame(websocket.TextMessage, []byte("bb"))
	three := append(append(append([]byte(nil), a...), b...), f[:50]...)
	unix.Write(peer, three)
	s.readable(c, false)
	wantAB := append(serverFrame(websocket.TextMessage, []byte("a")), serverFrame(websocket.TextMessage, []byte("bb"))...)
	gotAB := make([]byte, len(wantAB))
	readFull(t, peer, gotAB)
	if !bytes.Equal(gotAB, wantAB) || c.n != 50 {
		t.Fatalf("two frames and a part: echoed %q, %d bytes held", gotAB, c.n)
	}
	unix.Write(peer, f[50:])
	s.readable(c, false)
	readFull(t, peer, got)
	if !bytes.Equal(got, want) {
		t.Fatalf("the rest of the partial frame: echoed %q", got)
	}

	big := bytes.Repeat([]byte("big"), 3000)
	fb := clientFrame(websocket.BinaryMessage, big)
	unix.Write(peer, fb[:1000])
	s.readable(c, false)
	if len(c.buf) < len(fb) {
		t.Fatalf("buffer of %d bytes for a %d-byte frame", len(c.buf), len(fb))
	}
	unix.Write(peer, fb[1000:])
	s.readable(c, false)
	wantBig := serverFrame(websocket.BinaryMessage, big)
	gotBig := make([]byte, len(wantBig))
	readFull(t, peer, gotBig)
	if !bytes.Equal(gotBig, wantBig) || len(c.buf) != bufSize || &c.buf[0] != &c.small[0] {
		t.Fatalf("big frame: echoed %d bytes (equal %v), buffer %d bytes", len(gotBig), bytes.Equal(gotBig, wantBig), len(c.buf))
	}
}

// TestFloorBackpressure: a subscriber that does not read keeps what its
// socket does not take in pending, up to 1 MiB; past that it is closed
// and leaves the group, while the other subscriber got every message.
func TestFloorBackpressure(t *testing.T) {
	s := &server{}
	pub, pubPeer := pair(t, s, modePublish)
	stuck, _ := pair(t, s, modeSubscribe)
	reader, readerPeer := pair(t, s, modeSubscribe)
	msg := bytes.Repeat([]byte("m"), 60000)
	f, want := clientFrame(websocket.BinaryMessage, msg), serverFrame(websocket.BinaryMessage, msg)
	got := make([]byte, len(want))
	sent := 0
	for ; stuck.fd >= 0 && sent < 100; sent++ {
		unix.Write(pubPeer, f[:len(f)/2])
		s.readable(pub, false)
		unix.Write(pubPeer, f[len(f)/2:])
		s.readable(pub, false)
		readFull(t, readerPeer, got)
		if !bytes.Equal(got, want) {
			t.Fatalf("message %d: the reading subscriber got %d different bytes", sent, len(got))
		}
		if stuck.fd >= 0 && len(stuck.pending) > maxPending {
			t.Fatalf("message %d: %d bytes pending", sent, len(stuck.pending))
		}
	}
	if stuck.fd >= 0 || len(s.subs) != 1 || s.subs[0] != reader || reader.sub != 0 {
		t.Fatalf("after %d messages: stuck subscriber open %v, %d members", sent, stuck.fd >= 0, len(s.subs))
	}
	if sent*len(want) < maxPending {
		t.Fatalf("closed after %d messages (%d bytes), under the bound", sent, sent*len(want))
	}
}

// TestFloorNoAllocs: an echoed message and a message published to three
// subscribers allocate nothing once the connections exist.
func TestFloorNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	s := &server{}
	echo, echoPeer := pair(t, s, modeEcho)
	f := clientFrame(websocket.TextMessage, bytes.Repeat([]byte("x"), 64))
	got := make([]byte, 66)
	if a := testing.AllocsPerRun(200, func() {
		unix.Write(echoPeer, f)
		s.readable(echo, false)
		unix.Read(echoPeer, got)
	}); a != 0 || got[0] != 0x81 || got[1] != 64 || got[65] != 'x' {
		t.Fatalf("echo: %v allocations per message, frame % x...", a, got[:4])
	}

	pub, pubPeer := pair(t, s, modePublish)
	var peers []int
	for range 3 {
		_, p := pair(t, s, modeSubscribe)
		peers = append(peers, p)
	}
	if a := testing.AllocsPerRun(200, func() {
		unix.Write(pubPeer, f)
		s.readable(pub, false)
		for _, p := range peers {
			unix.Read(p, got)
		}
	}); a != 0 || got[0] != 0x81 || got[1] != 64 || got[65] != 'x' {
		t.Fatalf("broadcast: %v allocations per message, frame % x...", a, got[:4])
	}
}
