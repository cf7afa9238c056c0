// Package netx holds the connection helpers that the server (root) and the
// client share. It does I/O, so the sans-I/O h1 codec must not import it;
// text rules belong in internal/ascii.
package netx

import (
	"errors"
	"net"
	"os"
	"time"
)

// DeadlineExceeded reports whether err comes from a deadline set on the
// connection (os.ErrDeadlineExceeded), the server's idle, header, body and
// write timeouts.
func DeadlineExceeded(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// Timeout reports whether err says it is a timeout of any kind (a
// net.Error's Timeout method), as a client judging whether a request may
// be retried needs.
func Timeout(err error) bool {
	ne, ok := err.(interface{ Timeout() bool })
	return ok && ne.Timeout()
}

// HalfCloseAndDrain half-closes nc through cw and then discards input
// briefly (100 ms, at most 16 reads), so that a peer still sending does not
// turn the close into a reset that destroys the last response it has not
// read yet. The caller closes nc afterwards.
func HalfCloseAndDrain(nc net.Conn, cw interface{ CloseWrite() error }) {
	if cw.CloseWrite() != nil {
		return
	}
	_ = nc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	var buf [4 << 10]byte
	for range 16 {
		if _, err := nc.Read(buf[:]); err != nil {
			return
		}
	}
}
