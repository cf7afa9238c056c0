//go:build linux

package riptide

// Idle HTTP/2 connections over TLS parked on the event loop (with
// Server.TLSEngine's event loop, tlsloop_linux.go): the h2c parking of
// h2park_linux.go, reading through crypto/tls without waiting. The
// HTTP/2 connection asks for the next bytes with TryRead, which reads the
// tls.Conn over the tlsSock in non-blocking mode: crypto/tls answers what
// it holds decrypted, else reads the socket, and an empty socket comes
// back as errWouldBlock, which crypto/tls returns without storing (what it
// read of a record stays in its rawInput). So when TryRead reports
// nothing, crypto/tls holds no plaintext and the socket is empty: the
// connection may park between frames, or in the middle of a record, as an
// HTTP/1.1 connection over TLS does between requests. Parked, it keeps
// the h2.Conn (Saved.Proto) and the tlsSock with its tls.Conn
// (Saved.Session); the loop hands both to a worker (elTLSHandler.Serve,
// then resumeH2) when the socket becomes readable or the server wakes it.

import (
	"net"
	"os"

	"github.com/riptide-http/riptide/internal/evloop"
	"github.com/riptide-http/riptide/internal/h2"
)

// tlsH2Parker is a TLS connection on the event loop as internal/h2's
// Parker.
type tlsH2Parker tlsSock

func (p *tlsH2Parker) sock() *tlsSock { return (*tlsSock)(p) }

// TryRead implements h2.Parker: one non-blocking read of the tls.Conn.
func (p *tlsH2Parker) TryRead(b []byte) (int, error) {
	t := p.sock()
	switch {
	case t.ec.Shut():
		return 0, net.ErrClosed
	case t.ec.ReadExpired():
		return 0, os.ErrDeadlineExceeded
	}
	t.nb = true
	n, err := t.tc.Read(b)
	t.nb = false
	if _, ok := err.(wouldBlock); ok {
		// Nothing more now; crypto/tls may return it with plaintext it
		// had (a record followed by the start of an alert's).
		return n, nil
	}
	return n, err
}

// WaitRead implements h2.Parker.
func (p *tlsH2Parker) WaitRead(until int64) error { return p.sock().ec.WaitRead(until) }

// Wake implements h2.Parker.
func (p *tlsH2Parker) Wake() { p.sock().ec.Wake() }

// Park implements h2.Parker as elH2Parker.Park does, the tlsSock (with
// its tls.Conn) saved beside the h2.Conn.
func (p *tlsH2Parker) Park(hc *h2.Conn) bool {
	t := p.sock()
	return parkH2(t.ec, evloop.Saved{Proto: hc, Session: t})
}
