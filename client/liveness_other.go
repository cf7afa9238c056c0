//go:build !unix

package client

import "net"

// liveness is a no-op where a non-blocking peek is not available: a
// connection closed while idle is then found by the first read or write,
// and idempotent requests are retried.
type liveness struct{}

func (l *liveness) init(net.Conn, bool) {}

func (l *liveness) alive() bool { return true }

func (l *liveness) canSend() bool { return false }

// sendRecv is not available: the exchange writes and reads through the
// net.Conn.
func (l *liveness) sendRecv(out, in []byte, check bool) (sendState, int, error) {
	return sendUnsupported, 0, nil
}
