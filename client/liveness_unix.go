//go:build unix

package client

import (
	"net"
	"syscall"
)

// liveness detects a connection the server closed while it sat idle, with
// one non-blocking MSG_PEEK receive on the socket: "would block" means open
// and quiet; end of stream, an error (such as a reset) or unsolicited bytes
// mean the connection must not carry a request.
type liveness struct {
	rc      syscall.RawConn
	control func(fd uintptr) // l.peek as a func value, made once
	ok      bool
	probe   [1]byte
}

func (l *liveness) init(nc net.Conn) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	l.rc = rc
	l.control = l.peek
}

// peek runs under RawConn.Control: the probe uses MSG_DONTWAIT, so the
// call never blocks (see peekFD).
func (l *liveness) peek(fd uintptr) {
	l.ok = peekFD(fd, &l.probe)
}

// alive reports whether the connection looks open. Connections that cannot
// be checked (not a socket) are assumed open.
func (l *liveness) alive() bool {
	if l.rc == nil {
		return true
	}
	if err := l.rc.Control(l.control); err != nil {
		return false
	}
	return l.ok
}
