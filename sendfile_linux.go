package riptide

import (
	"io"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/riptide-http/riptide/internal/evloop"
	"golang.org/x/sys/unix"
)

// sendfileState is a connection's sendfile(2) state for Ctx.SendFile on
// the goroutine engine, kept in the conn so that a call allocates nothing:
// the socket's RawConn (made once per connection) and the step function
// RawConn.Write calls (made once per pooled conn).
type sendfileState struct {
	rawc syscall.RawConn
	step func(fd uintptr) bool

	head    []byte // sent first, with MSG_MORE (flushMore)
	sfd     int    // the file's descriptor
	off     int64  // where the next byte is read from
	remain  int64
	written int64
	err     error
}

// reset drops the connection's RawConn before the conn is pooled.
func (s *sendfileState) reset() {
	if s != nil {
		s.rawc = nil
	}
}

// sendfile returns c's sendfile state, made on the first use and kept
// while the conn is pooled (the event loop, HTTP/2 and HTTP/3 streams
// never make one), ready for the socket; nil when the connection is not
// a TCP socket.
func (c *conn) sendfile() *sendfileState {
	if c.sf == nil {
		c.sf = new(sendfileState)
	}
	return c.sf.ready(c)
}

// canSendfile reports whether the socket takes sendfile(2): a plain TCP
// connection on either engine (also under the PROXY protocol).
func (c *conn) canSendfile() bool {
	if c.ec != nil {
		return true
	}
	_, ok := tcpConnOf(c.nc)
	return ok
}

// sendFileAt sends n bytes of f from offset with sendfile(2), leaving f's
// file offset alone. handled is false when the kernel refused the file
// before any byte went out.
func (c *conn) sendFileAt(f *os.File, offset, n int64) (written int64, handled bool, err error) {
	sfd := int(f.Fd()) // no system call for a regular file (os.File.Fd)
	defer runtime.KeepAlive(f)
	if c.ec != nil {
		return c.ec.Sendfile(sfd, &offset, n)
	}
	s := c.sendfile()
	if s == nil {
		return 0, false, nil
	}
	s.sfd, s.off, s.remain, s.written, s.err = sfd, offset, n, 0, nil
	if err = s.rawc.Write(s.step); err == nil {
		err = s.err
	}
	written, s.err = s.written, nil
	if err == unix.EINVAL || err == unix.ENOSYS {
		return written, written > 0, nil
	}
	if err == io.EOF {
		err = nil // the file ended first; SendFile reports it
	}
	return written, true, err
}

// ready returns s with the socket's RawConn and the step function set up,
// or nil when the connection is not a TCP socket.
func (s *sendfileState) ready(c *conn) *sendfileState {
	if s.rawc == nil {
		tc, ok := tcpConnOf(c.nc)
		if !ok {
			return nil
		}
		rc, err := tc.SyscallConn()
		if err != nil {
			return nil
		}
		s.rawc = rc
	}
	if s.step == nil {
		s.step = s.sendStep
	}
	return s
}

// flushMore is flush for a head that a sendfile follows: wbuf goes out
// with MSG_MORE, so the kernel holds it until the file's bytes join it
// and a small response leaves in one segment instead of two (as nginx's
// tcp_nopush, without the two setsockopt calls per response).
func (c *conn) flushMore() error {
	if c.werr != nil || len(c.wbuf) == 0 {
		return c.flush()
	}
	c.armWrite()
	var err error
	if ec := c.ec; ec != nil {
		for p := c.wbuf; len(p) > 0 && err == nil; {
			var k int
			k, err = ec.TryWrite(func(fd int) (int, error) {
				evloop.RaceRelease(fd)
				return sendMore(fd, p)
			})
			p = p[k:]
			c.nout += uint64(k)
		}
	} else if s := c.sendfile(); s != nil {
		s.head, s.remain, s.err = c.wbuf, 0, nil
		if err = s.rawc.Write(s.step); err == nil {
			err = s.err
		}
		c.nout += uint64(len(c.wbuf) - len(s.head))
		s.head, s.err = nil, nil
	} else {
		return c.flush()
	}
	c.wbuf = c.wbuf[:0]
	c.sent = true
	if err != nil {
		c.werr = err
	}
	return err
}

// sendMore is send(2) with MSG_MORE, straight as a system call so that it
// does not allocate.
func sendMore(fd int, p []byte) (int, error) {
	n, _, errno := unix.Syscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)), unix.MSG_MORE, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// sendStep is the goroutine engine's RawConn.Write callback: it sends the
// head, then the file section, until done or the socket is full (false:
// wait for writability).
func (s *sendfileState) sendStep(fd uintptr) bool {
	evloop.RaceRelease(int(fd)) // raw system calls: no race annotation of their own
	for len(s.head) > 0 {
		k, err := sendMore(int(fd), s.head)
		s.head = s.head[k:]
		switch {
		case err == unix.EAGAIN:
			return false
		case err == unix.EINTR:
		case err != nil:
			s.err = err
			return true
		}
	}
	for s.remain > 0 {
		k, err := evloop.SendfileOnce(int(fd), s.sfd, &s.off, s.remain)
		s.written += int64(k)
		s.remain -= int64(k)
		switch {
		case err == unix.EAGAIN:
			return false
		case err == unix.EINTR:
		case err != nil:
			s.err = err
			return true
		}
	}
	return true
}
