package riptide

// A connection over TLS on the event loop taken over by another protocol
// (takeover_linux.go; package websocket's event-driven mode): the protocol
// reads and writes plaintext through the connection's tls.Conn without
// waiting and parks it as an idle HTTP/1.1 connection over TLS parks
// (tlsloop_linux.go): the tlsSock with its tls.Conn saved
// (evloop.Saved.Session) beside the protocol (Saved.Proto), no goroutine
// and no buffer of the server's.
//
// Reads are fillTLS's: crypto/tls over the tlsSock in non-blocking mode.
// Writes cannot be, the same way: crypto/tls keeps any write error for
// good. So the tlsSock of a connection taken over hands each record
// crypto/tls seals to its tlsWire, which writes what the socket takes at
// once and keeps the rest, in order, for the protocol's owner to send
// when the socket is writable again (takeover.TLS.WriteNow); crypto/tls
// always sees the whole record written.

import (
	"crypto/tls"
	"net"
	"sync"
	"syscall"
)

// tlsWire is a TLS connection on the loop as takeover.TLS (and the
// net.Conn Take returns: the tls.Conn, whose writes reach put).
type tlsWire struct {
	*tls.Conn
	t *tlsSock

	// mu serializes the socket's writes (records sealed by a writer, or
	// by the owner's read: an alert, a KeyUpdate's answer) and guards
	// the rest.
	mu  sync.Mutex
	err error   // a write failed: every later one does
	out *[]byte // ciphertext the socket has not taken, from wirePool
	off int     // how much of *out went
}

// wirePool holds the buffers of ciphertext waiting for a full socket.
var wirePool sync.Pool // *[]byte

// wireKeep is the largest buffer wirePool keeps.
const wireKeep = 64 << 10

// tlsTakeable reports whether c is a connection over TLS on the event
// loop that a protocol may take over (not hijacked off the loop).
func (c *conn) tlsTakeable() bool {
	return c.tl != nil && c.tl.det == nil && c.nc == net.Conn(c.tl.tc)
}

// takeOver switches t's writes to its tlsWire and returns it.
func (t *tlsSock) takeOver() net.Conn {
	w := &tlsWire{Conn: t.tc, t: t}
	t.wire = w
	return w
}

// Loop implements takeover.TLS.
func (w *tlsWire) Loop() net.Conn { return w.t.ec }

// Session implements takeover.TLS.
func (w *tlsWire) Session() any { return w.t }

// ReadNow implements takeover.TLS: a read of the tls.Conn that does not
// wait, as fillTLS's.
func (w *tlsWire) ReadNow(b []byte) (int, error) {
	t := w.t
	t.nb = true
	n, err := t.tc.Read(b)
	t.nb = false
	switch {
	case n > 0:
		// With an error (a record followed by the start of the next, or
		// by close_notify), the next read reports it.
		return n, nil
	case err == nil:
		return 0, syscall.EIO // crypto/tls never answers 0, nil
	}
	if _, ok := err.(wouldBlock); ok {
		return 0, syscall.EAGAIN
	}
	return 0, err
}

// Flush implements takeover.TLS.
func (w *tlsWire) Flush() (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.flushLocked()
	return w.queuedLocked(), err
}

// Seal implements takeover.TLS.
func (w *tlsWire) Seal(p []byte) error {
	_, err := w.Conn.Write(p)
	return err
}

// Queued implements takeover.TLS.
func (w *tlsWire) Queued() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.queuedLocked()
}

func (w *tlsWire) queuedLocked() int {
	if w.out == nil {
		return 0
	}
	return len(*w.out) - w.off
}

// put is the tlsSock's Write once taken over: a record crypto/tls sealed
// (or the handshake's answer to a KeyUpdate, or an alert), written as far
// as the socket takes it, the rest kept after what waits already.
func (w *tlsWire) put(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	n := 0
	if w.out == nil {
		iov := [1][]byte{p}
		var err error
		if n, err = w.t.ec.WriteNow(iov[:]); err != nil {
			w.err = err
			return 0, err
		}
		if n == len(p) {
			return n, nil
		}
		w.out = getWireBuf()
	}
	*w.out = append(*w.out, p[n:]...)
	return len(p), nil
}

// flushLocked writes what waits as far as the socket takes it (mu held).
func (w *tlsWire) flushLocked() error {
	if w.err != nil || w.out == nil {
		return w.err
	}
	iov := [1][]byte{(*w.out)[w.off:]}
	n, err := w.t.ec.WriteNow(iov[:])
	if err != nil {
		w.err = err
		return err
	}
	if w.off += n; w.off == len(*w.out) {
		putWireBuf(w.out)
		w.out, w.off = nil, 0
	}
	return nil
}

func getWireBuf() *[]byte {
	if bp, ok := wirePool.Get().(*[]byte); ok {
		return bp
	}
	return new([]byte)
}

func putWireBuf(bp *[]byte) {
	if cap(*bp) <= wireKeep {
		*bp = (*bp)[:0]
		wirePool.Put(bp)
	}
}
