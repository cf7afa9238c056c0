//go:build !unix

package client

import "net"

// liveness is a no-op where a non-blocking peek is not available: a
// connection closed while idle is then found by the first read or write,
// and idempotent requests are retried.
type liveness struct{}

func (l *liveness) init(net.Conn) {}

func (l *liveness) alive() bool { return true }
