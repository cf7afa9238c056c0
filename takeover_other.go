//go:build !linux

package riptide

// serveHandover is never reached off Linux: takeover.Take is not set, so
// no connection is handed over (takeover_linux.go).
func (c *conn) serveHandover() { putConn(c) }
