package riptide

import "net"

// elReadDeadline returns the read deadline of an event-loop socket.
func elReadDeadline(nc net.Conn) (int64, bool) {
	if ec, ok := nc.(*elConn); ok {
		return ec.ReadDeadline(), true
	}
	return 0, false
}
