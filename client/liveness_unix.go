//go:build unix

package client

import (
	"net"
	"os"
	"syscall"
)

// liveness detects a connection the server closed, or sent unsolicited
// bytes on, while it sat idle, with one non-blocking MSG_PEEK receive on
// the socket: "would block" means open and quiet; end of stream, an error
// (such as a reset) or unsolicited bytes mean the connection must not carry
// a request.
//
// On a plain TCP or Unix socket it also runs the start of an exchange
// (sendRecv): peek, write and first read under one RawConn.Read.
type liveness struct {
	rc      syscall.RawConn
	control func(fd uintptr) // l.peek as a func value, made once
	ok      bool
	probe   [1]byte

	raw   bool                  // the fd may be written and read directly
	step  func(fd uintptr) bool // l.sendStep as a func value, made once
	check bool                  // peek before writing
	out   []byte                // request bytes to write
	in    []byte                // room for the first response bytes
	state sendState
	n     int   // bytes written, then bytes read
	err   error // of the last system call
}

// init prepares l for nc; direct allows sendRecv to write and read nc's
// socket itself (not under TLS).
func (l *liveness) init(nc net.Conn, direct bool) {
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
	l.step = l.sendStep
	// Only the standard socket types: a wrapper that embeds one and
	// overrides Read or Write must see every byte.
	switch nc.(type) {
	case *net.TCPConn, *net.UnixConn:
		l.raw = direct
	}
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

// canSend reports whether sendRecv can run on the connection.
func (l *liveness) canSend() bool { return l.raw }

// sendRecv starts an exchange whose request is the single buffer out: if
// check is set, it first peeks as alive does (sendNotQuiet: nothing was
// written); then it writes out and waits for the first bytes of the
// response, read into in. It reports sendUnsupported, doing nothing, on
// connections that are not plain sockets (TLS, wrappers).
//
// Doing all of it under one RawConn.Read saves the read that would
// otherwise be tried, and fail with EAGAIN, right after the write: the
// runtime poller's readiness state is reset before the write, so the
// response's arrival cannot be missed, and the peek costs what that read
// did. The peek and the write are back to back, nothing in between.
//
// It returns the state reached, the bytes written (sendPartial, sendFailed)
// or read (sendRead), and the error that stopped it, if any.
func (l *liveness) sendRecv(out, in []byte, check bool) (sendState, int, error) {
	if !l.raw {
		return sendUnsupported, 0, nil
	}
	l.out, l.in, l.check = out, in, check
	l.state, l.n, l.err = sendStart, 0, nil
	err := l.rc.Read(l.step)
	l.out, l.in = nil, nil
	switch {
	case err != nil && l.state == sendStart:
		// The deadline passed (or the conn was closed) before the write.
		return sendFailed, 0, err
	case err != nil:
		// While waiting for the response.
		return sendRead, 0, err
	case l.err != nil && l.state == sendFailed:
		return sendFailed, l.n, os.NewSyscallError("write", l.err)
	case l.err != nil:
		return l.state, 0, os.NewSyscallError("read", l.err)
	}
	return l.state, l.n, nil
}

// sendStep is sendRecv's RawConn.Read callback. Returning false waits for
// the socket to become readable.
func (l *liveness) sendStep(fd uintptr) bool {
	if l.state == sendStart {
		if l.check && !peekFD(fd, &l.probe) {
			l.state = sendNotQuiet
			return true
		}
		n, err := writeFD(fd, l.out)
		l.n = n
		switch {
		case err != nil && err != syscall.EAGAIN:
			l.state, l.err = sendFailed, err
			return true
		case n < len(l.out):
			// The socket buffer is full: the caller writes the rest
			// through the poller.
			l.state = sendPartial
			return true
		}
		l.state = sendWaiting
		return false
	}
	n, err := readFD(fd, l.in)
	if err == syscall.EAGAIN {
		return false // a readiness left over from before the write
	}
	l.state, l.n, l.err = sendRead, n, err
	return true
}

// writeFD and readFD are one write and one read on a non-blocking fd,
// retried when interrupted; n is never negative.
func writeFD(fd uintptr, b []byte) (int, error) {
	for {
		n, err := syscall.Write(int(fd), b)
		if err != syscall.EINTR {
			return max(n, 0), err
		}
	}
}

func readFD(fd uintptr, b []byte) (int, error) {
	for {
		n, err := syscall.Read(int(fd), b)
		if err != syscall.EINTR {
			return max(n, 0), err
		}
	}
}
