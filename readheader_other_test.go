//go:build !linux

package riptide

import "net"

// elReadDeadline: no event loop off Linux.
func elReadDeadline(net.Conn) (int64, bool) { return 0, false }
