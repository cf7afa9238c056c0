package listen

import (
	"context"
	"net"
	"syscall"
)

// ReusePort listens on the TCP address addr with SO_REUSEPORT set, so that
// several processes (or several listeners in one) can bind the same port
// and the kernel spreads incoming connections across them. network is
// "tcp", "tcp4" or "tcp6".
//
// Each listener has its own accept queue: closing one drops the
// connections waiting in it. For restarts, hand the listener over with
// Handoff instead of opening a new one and closing the old.
func ReusePort(ctx context.Context, network, addr string) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) { serr = setReusePort(fd) }); err != nil {
			return err
		}
		return serr
	}}
	return lc.Listen(ctx, network, addr)
}
