//go:build linux

package main

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/riptide-http/riptide/bench/internal/wsserver"
)

const (
	// bufSize is a connection's read buffer and the bound on a request
	// head.
	bufSize = 4 << 10
	// maxPayload is the largest frame payload read; a larger one closes
	// the connection.
	maxPayload = 1 << 20
	// maxPending is the most output a connection may have waiting for its
	// socket; more closes it.
	maxPending = 1 << 20
	// maxEvents is the epoll_wait batch.
	maxEvents = 256
)

// mode is what a connection's input is.
type mode uint8

const (
	modeHTTP mode = iota // the request head
	modeEcho
	modeSubscribe
	modePublish
)

// WebSocket opcodes and first bits (RFC 6455 §5.2).
const (
	finBit  = 0x80
	maskBit = 0x80
	opClose = 0x8
	opPing  = 0x9
	opPong  = 0xA
)

// conn is one connection's whole state.
type conn struct {
	fd    int
	mode  mode
	sub   int    // index in server.subs, -1 when not a member
	small []byte // the 4 KiB read buffer, allocated once
	buf   []byte // small, or a larger one while a frame over 4 KiB is read
	n     int    // bytes held in buf
	// pending is output the socket has not taken yet, written on the
	// writable edge; closing says to close once it is written.
	pending []byte
	closing bool
}

// server is the loop's state; only the loop's goroutine touches it, but
// for stop.
type server struct {
	epfd   int
	lfd    int
	efd    int      // an eventfd written by stop
	ep     *os.File // epfd, for parking in Go's netpoller
	conns  []*conn  // by descriptor
	subs   []*conn
	events [maxEvents]unix.EpollEvent
	nev    int   // events in the current batch
	err    error // what ended the loop abnormally
}

// newServer takes over ln's socket (a duplicate of its descriptor; ln is
// closed) and sets up the epoll instance.
func newServer(ln net.Listener) (*server, error) {
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		return nil, errors.New("ws-floor: not a TCP listener")
	}
	rc, err := tl.SyscallConn()
	if err != nil {
		return nil, err
	}
	lfd := -1
	var dupErr error
	if err := rc.Control(func(fd uintptr) {
		lfd, dupErr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, dupErr
	}
	ln.Close() // out of Go's netpoller; the duplicate keeps the socket open
	s := &server{lfd: lfd, epfd: -1, efd: -1}
	if err := s.setup(); err != nil {
		s.closeAll()
		return nil, err
	}
	return s, nil
}

func (s *server) setup() error {
	if err := unix.SetNonblock(s.lfd, true); err != nil {
		return err
	}
	var err error
	if s.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return err
	}
	if s.efd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return err
	}
	for _, fd := range []int{s.lfd, s.efd} {
		if err := s.add(fd, unix.EPOLLIN|unix.EPOLLET); err != nil {
			return err
		}
	}
	if err := unix.SetNonblock(s.epfd, true); err != nil {
		return err
	}
	// A non-blocking descriptor given to os.NewFile is registered in Go's
	// netpoller: an epoll descriptor is readable while events are ready.
	s.ep = os.NewFile(uintptr(s.epfd), "epoll")
	return nil
}

// connEvents are a connection's: edge-triggered input, output and
// hang-up.
const connEvents = unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET

// add registers fd for events.
func (s *server) add(fd int, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd)}
	return unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, fd, &ev)
}

// stop ends serve (from any goroutine).
func (s *server) stop() {
	var one [8]byte
	one[0] = 1
	unix.Write(s.efd, one[:])
}

// serve runs the loop until stop; it closes every descriptor on return.
func (s *server) serve() error {
	defer s.closeAll()
	rc, err := s.ep.SyscallConn()
	if err != nil {
		return err
	}
	// The whole loop runs inside one RawConn.Read: the function returns
	// false when nothing is ready, and Go's netpoller calls it again once
	// the epoll descriptor is readable.
	if err := rc.Read(s.poll); err != nil {
		return err
	}
	return s.err
}

// poll serves what is ready until nothing is; it returns true when the
// loop must end (stop, or an epoll error in s.err).
func (s *server) poll(uintptr) bool {
	for {
		n, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(s.epfd),
			uintptr(unsafe.Pointer(&s.events[0])), maxEvents, 0, 0, 0)
		switch {
		case errno == unix.EINTR:
			continue
		case errno != 0:
			s.err = errno
			return true
		case n == 0:
			return false
		}
		s.nev = int(n)
		for i := range s.nev {
			ev := s.events[i]
			fd := int(ev.Fd)
			switch {
			case fd == s.lfd:
				s.accept()
			case fd == s.efd:
				return true
			case fd < len(s.conns) && s.conns[fd] != nil:
				s.ready(s.conns[fd], ev.Events)
			}
		}
	}
}

// accept takes every waiting connection. After an error other than
// EAGAIN (EMFILE, ...) it stops; the next connection's edge retries.
func (s *server) accept() {
	for {
		nfd, _, errno := unix.RawSyscall6(unix.SYS_ACCEPT4, uintptr(s.lfd), 0, 0,
			unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
		if errno == unix.EINTR || errno == unix.ECONNABORTED {
			continue
		}
		if errno != 0 {
			return
		}
		fd := int(nfd)
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		if err := s.add(fd, connEvents); err != nil {
			unix.Close(fd)
			continue
		}
		for fd >= len(s.conns) {
			s.conns = append(s.conns, nil)
		}
		small := make([]byte, bufSize)
		s.conns[fd] = &conn{fd: fd, sub: -1, small: small, buf: small}
	}
}

// ready serves an edge of c.
func (s *server) ready(c *conn, events uint32) {
	if events&unix.EPOLLOUT != 0 && len(c.pending) > 0 {
		if !s.flush(c) {
			return
		}
	}
	if c.closing {
		return // its close frame or answer is still being written
	}
	const hangup = unix.EPOLLRDHUP | unix.EPOLLHUP | unix.EPOLLERR
	if events&(unix.EPOLLIN|hangup) != 0 {
		s.readable(c, events&hangup != 0)
	}
}

// readable reads c's socket: once, again only while a read fills the
// buffer, or to EOF when drain is set (a hang-up edge). It serves what it
// read after each read.
func (s *server) readable(c *conn, drain bool) {
	for {
		if c.n == len(c.buf) { // a request head over 4 KiB
			s.close(c)
			return
		}
		p := c.buf[c.n:]
		m, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(c.fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if errno == unix.EINTR {
			continue
		}
		if errno == unix.EAGAIN {
			return
		}
		if errno != 0 || m == 0 {
			s.close(c)
			return
		}
		full := int(m) == len(p)
		c.n += int(m)
		if !s.serveInput(c) {
			return // closed, or closing
		}
		if !full && !drain {
			return
		}
	}
}

// serveInput serves what c's buffer holds; false when c is closed or
// closing.
func (s *server) serveInput(c *conn) bool {
	if c.mode == modeHTTP {
		return s.handshake(c)
	}
	return s.frames(c)
}

var (
	crlf2    = []byte("\r\n\r\n")
	keyName  = []byte("sec-websocket-key:")
	wsGUID   = []byte("258EAFA5-E914-47DA-95CA-C5AB0DC85B11")
	notFound = []byte("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	badReq   = []byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
)

// handshake answers a complete request head.
func (s *server) handshake(c *conn) bool {
	end := bytes.Index(c.buf[:c.n], crlf2)
	if end < 0 {
		return true // more to read
	}
	head := c.buf[:end+2]
	line, rest, _ := bytes.Cut(head, crlf2[:2])
	method, target, ok := bytes.Cut(line, []byte(" "))
	target, _, _ = bytes.Cut(target, []byte(" "))
	target, _, _ = bytes.Cut(target, []byte("?"))
	if !ok || string(method) != "GET" {
		return s.answerClose(c, badReq)
	}
	var m mode
	switch string(target) {
	case wsserver.HeapPath:
		body := wsserver.Heap()
		resp := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ")
		resp = strconv.AppendInt(resp, int64(len(body)), 10)
		resp = append(append(resp, "\r\n\r\n"...), body...)
		return s.answerClose(c, resp)
	case wsserver.EchoPath:
		m = modeEcho
	case wsserver.SubscribePath:
		m = modeSubscribe
	case wsserver.PublishPath:
		m = modePublish
	default:
		return s.answerClose(c, notFound)
	}
	var key []byte
	for len(rest) > 0 {
		var h []byte
		h, rest, _ = bytes.Cut(rest, crlf2[:2])
		if len(h) > len(keyName) && bytes.EqualFold(h[:len(keyName)], keyName) {
			key = bytes.TrimSpace(h[len(keyName):])
		}
	}
	if len(key) == 0 {
		return s.answerClose(c, badReq)
	}
	var resp [160]byte
	out := append(resp[:0], "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "...)
	out = appendAccept(out, key)
	out = append(out, "\r\n\r\n"...)
	// What followed the head (frames sent before the 101 arrived) stays.
	c.n = copy(c.buf, c.buf[end+4:c.n])
	c.mode = m
	if !s.send(c, out) {
		return false
	}
	if m == modeSubscribe {
		c.sub = len(s.subs)
		s.subs = append(s.subs, c)
	}
	if c.n > 0 {
		return s.frames(c)
	}
	return true
}

// appendAccept appends Sec-WebSocket-Accept for key: base64(SHA-1(key +
// the RFC 6455 GUID)).
func appendAccept(dst, key []byte) []byte {
	h := sha1.New()
	h.Write(key)
	h.Write(wsGUID)
	var sum [sha1.Size]byte
	var enc [28]byte
	base64.StdEncoding.Encode(enc[:], h.Sum(sum[:0]))
	return append(dst, enc[:]...)
}

// answerClose writes b and closes c once it is written.
func (s *server) answerClose(c *conn, b []byte) bool {
	c.closing = true
	if s.send(c, b) && len(c.pending) == 0 {
		s.close(c)
	}
	return false
}

// frames serves every complete frame in c's buffer and keeps the partial
// tail; false when c is closed or closing.
func (s *server) frames(c *conn) bool {
	b := c.buf[:c.n]
	off, need := 0, 0
	for {
		p := b[off:]
		if len(p) < 2 {
			break
		}
		b0, b1 := p[0], p[1]
		if b1&maskBit == 0 { // a client frame must be masked
			s.close(c)
			return false
		}
		hl, ln := 2, uint64(b1&0x7f)
		switch ln {
		case 126:
			hl = 4
		case 127:
			hl = 10
		}
		if len(p) < hl {
			break
		}
		switch hl {
		case 4:
			ln = uint64(binary.BigEndian.Uint16(p[2:]))
		case 10:
			ln = binary.BigEndian.Uint64(p[2:])
		}
		if ln > maxPayload {
			s.close(c)
			return false
		}
		hl += 4 // the masking key
		total := hl + int(ln)
		if len(p) < total {
			need = total
			break
		}
		payload := p[hl:total]
		unmask(payload, p[hl-4:hl])
		off += total
		// The server's header is the client's less the key: written in
		// place, it ends where the payload starts.
		var frame []byte
		switch op := b0 & 0x0f; {
		case op == opPong:
			continue
		case op == opPing:
			frame = header(p[:total], finBit|opPong, hl-4, ln)
		case op == opClose:
			c.closing = true
			frame = header(p[:total], finBit|opClose, hl-4, ln)
		case c.mode == modeSubscribe:
			continue
		default:
			frame = header(p[:total], b0, hl-4, ln)
		}
		if c.mode == modePublish && !c.closing && b0&0x0f != opPing {
			s.broadcast(frame)
			continue
		}
		if !s.send(c, frame) {
			return false
		}
		if c.closing {
			if len(c.pending) == 0 {
				s.close(c)
			}
			return false
		}
	}
	// Keep the tail at the start of a buffer that holds the partial
	// frame: the 4 KiB one unless the frame is larger.
	to := c.small
	if need > bufSize {
		to = c.buf
		if need > len(c.buf) {
			to = make([]byte, need)
		}
	}
	c.n = copy(to, b[off:])
	c.buf = to
	return true
}

// header writes the unmasked header of a frame of ln bytes, first byte
// b0, in place at the end of the client frame's header (length hl bytes
// less the key) and returns the frame: header and payload.
func header(frame []byte, b0 byte, hl int, ln uint64) []byte {
	out := frame[4:]
	out[0] = b0
	switch hl {
	case 2:
		out[1] = byte(ln)
	case 4:
		out[1] = 126
		binary.BigEndian.PutUint16(out[2:], uint16(ln))
	default:
		out[1] = 127
		binary.BigEndian.PutUint64(out[2:], ln)
	}
	return out
}

// unmask XORs p with the 4-byte key, 8 bytes at a time.
func unmask(p, key []byte) {
	k4 := binary.LittleEndian.Uint32(key)
	k8 := uint64(k4) | uint64(k4)<<32
	i := 0
	for ; i+8 <= len(p); i += 8 {
		binary.LittleEndian.PutUint64(p[i:], binary.LittleEndian.Uint64(p[i:])^k8)
	}
	for ; i < len(p); i++ {
		p[i] ^= key[i&3]
	}
}

// broadcast writes frame to every subscriber, one write each. It walks
// the list backwards: a subscriber closed on the way is swapped with the
// last one, already served.
func (s *server) broadcast(frame []byte) {
	for i := len(s.subs) - 1; i >= 0; i-- {
		if i < len(s.subs) {
			s.send(s.subs[i], frame)
		}
	}
}

// send writes b to c, or queues it behind c's pending output; what the
// socket does not take is kept in pending for the writable edge. It
// returns false if c was closed (an error, or over maxPending).
func (s *server) send(c *conn, b []byte) bool {
	if len(c.pending) == 0 {
		for len(b) > 0 {
			m, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(c.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			if errno == unix.EINTR {
				continue
			}
			if errno == unix.EAGAIN {
				break
			}
			if errno != 0 {
				s.close(c)
				return false
			}
			b = b[m:]
		}
		if len(b) == 0 {
			return true
		}
	}
	if len(c.pending)+len(b) > maxPending {
		s.close(c)
		return false
	}
	c.pending = append(c.pending, b...)
	return true
}

// flush writes c's pending output on a writable edge; false when c was
// closed (an error, or its last output written with closing set).
func (s *server) flush(c *conn) bool {
	p := c.pending
	for len(p) > 0 {
		m, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(c.fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if errno == unix.EINTR {
			continue
		}
		if errno == unix.EAGAIN {
			c.pending = append(c.pending[:0], p...)
			return true
		}
		if errno != 0 {
			s.close(c)
			return false
		}
		p = p[m:]
	}
	c.pending = nil // the memory goes back once the backlog is written
	if c.closing {
		s.close(c)
		return false
	}
	return true
}

// close closes c's socket (which leaves the epoll set) and forgets c.
func (s *server) close(c *conn) {
	if c.fd < 0 {
		return
	}
	if c.sub >= 0 {
		last := len(s.subs) - 1
		s.subs[c.sub] = s.subs[last]
		s.subs[c.sub].sub = c.sub
		s.subs[last] = nil
		s.subs = s.subs[:last]
		c.sub = -1
	}
	s.conns[c.fd] = nil
	unix.Close(c.fd)
	c.fd = -1
}

// closeAll closes every descriptor the server holds.
func (s *server) closeAll() {
	for _, c := range s.conns {
		if c != nil {
			s.close(c)
		}
	}
	if s.ep != nil {
		s.ep.Close() // closes epfd
	} else if s.epfd >= 0 {
		unix.Close(s.epfd)
	}
	for _, fd := range []int{s.efd, s.lfd} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}
